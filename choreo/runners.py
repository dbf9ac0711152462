"""Who performs a plan in this process: the blend of the library's phrases, or the guided network.

The one place that turns ``options.synth`` into a song runner
(:class:`engines.runner.SongRunner`). The network runs on the process's engine,
loaded on first use from the configured model
(:func:`configured_model_path`, backend from
``CHOREO_ENGINE_BACKEND``: TensorRT, then torch-cuda, then ONNX Runtime) and kept
for the process; the command line runs one song at a time on it, a GPU worker
through its sequence batcher (:func:`engines.batcher.process_batcher`).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from choreo.choreography.blend import BlendRunner
from choreo.choreography.library import LIBRARY_FPS, PhraseLibrary
from choreo.contracts.choices import Synth
from choreo.models import DEFAULT_MODEL_PATH
from engines.base import Engine
from engines.runner import SingleSongRunner, SongRunner

if TYPE_CHECKING:  # the blend renders without the engines' settings (and pydantic-settings)
    from engines.settings import EngineSettings

__all__ = ["configured_model_path", "load_engine", "model_fps", "native_fps", "synth_runner"]


def configured_model_path(settings: EngineSettings | None = None) -> Path:
    """The model to run: ``settings.model_path`` (default: the process's, ``CHOREO_ENGINE_MODEL_PATH``)
    when set, else the shipped one; resolved."""
    from engines.settings import get_engine_settings

    settings = settings or get_engine_settings()
    return Path(settings.model_path or DEFAULT_MODEL_PATH).resolve()


@lru_cache(maxsize=4)
def _engine_for(model_path: Path) -> Engine:
    from engines.registry import load_engine as load_backend

    return load_backend(model_path)


def load_engine() -> Engine:
    """The process's engine for the configured model, loaded on first use only."""
    return _engine_for(configured_model_path())


def model_fps() -> int:
    """The configured model's native frame rate, read from its metadata (no engine is loaded)."""
    from engines.registry import model_spec

    return model_spec(configured_model_path()).native_fps


def synth_runner(synth: Synth, library: PhraseLibrary, *, batched: bool = False) -> SongRunner:
    """The runner that performs a plan for ``synth``: the blend of ``library``'s phrases (``blend``),
    or the guided network on the process's engine, alone in chunks of ``CHOREO_ENGINE_CHUNK_FRAMES``
    or, ``batched``, through the process's sequence batcher with the other songs in flight."""
    if synth == "blend":
        return BlendRunner(library)
    if batched:
        from engines.batcher import process_batcher

        return process_batcher(configured_model_path())
    from engines.settings import get_engine_settings

    return SingleSongRunner(load_engine(), get_engine_settings().chunk_frames)


def native_fps(synth: Synth) -> int:
    """The frame rate ``synth`` performs at, so a song can be analysed for it before it is loaded."""
    return LIBRARY_FPS if synth == "blend" else model_fps()
