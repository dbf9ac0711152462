"""Converted models calibrated on real songs, and real-song inputs, cached under the engine cache folder.

``prepare_precision_model`` makes the ONNX file of a precision where
:func:`engines.precision.precision_model` will find it: fp16 from the graph
alone, int8 calibrated on songs of the calibration set (analysed here, since
the engines know nothing of audio). ``song_features`` keeps each song's music
features, so the calibration, the selfcheck and the benchmark decode a song once.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import onnx

from choreo.contracts.model_spec import ModelSpec
from choreo.enginetools.calibration import (
    CalibrationSong,
    calibration_chunks,
    read_manifest,
    select_calibration_songs,
)
from choreo.files import atomic_path
from engines.precision import (
    converted_model_path,
    file_sha256,
    precision_model,
    quantize_int8,
    save_model,
    to_mixed_fp16,
)
from engines.settings import EngineSettings

if TYPE_CHECKING:  # audio decoding is imported only where songs are analysed
    from choreo.audio.music_features import MusicFeatures

__all__ = [
    "prepare_precision_model",
    "song_analysis",
    "song_features",
    "song_model_inputs",
]


def song_analysis(path: Path, fps: int, cache_dir: Path) -> MusicFeatures:
    """The song's :class:`~choreo.audio.music_features.MusicFeatures` at ``fps``, analysed once and cached."""
    from choreo.audio import analyze_song
    from choreo.audio.music_features import MusicFeatures

    stat = Path(path).stat()
    key = hashlib.sha256(
        f"{Path(path).resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{fps}".encode()
    ).hexdigest()
    cached = Path(cache_dir) / "features" / f"{key[:24]}.npz"
    if cached.is_file():
        return MusicFeatures.from_npz(cached)
    features = analyze_song(path, fps=fps)
    cached.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(cached) as tmp:
        features.to_npz(tmp)
    return features


def song_features(path: Path, fps: int, cache_dir: Path) -> np.ndarray:
    """The song's music features ``[N, 35]`` at ``fps`` (see :func:`song_analysis`)."""
    return song_analysis(path, fps, cache_dir).features


def song_model_inputs(song: CalibrationSong, spec: ModelSpec, cache_dir: Path) -> dict[str, np.ndarray]:
    """A song's per-frame model inputs, as the render pipeline builds them.

    A model that performs a plan gets the song planned on the shipped library in the song's
    style, with the guide and junction timing that plan gives, as ``choreo render`` feeds it.
    """
    from choreo.generate import song_inputs

    analysis = song_analysis(song.path, spec.native_fps, cache_dir)
    if "guide" not in spec.input_widths:
        return song_inputs(analysis.features, style=song.style, seed=song.seed, spec=spec)
    from choreo.choreography.library import shipped_library
    from choreo.contracts.options import RenderOptions
    from choreo.pipeline import choreograph

    options = RenderOptions(style=song.style, seed=song.seed)
    guide = choreograph(analysis, options, shipped_library()).guide
    return song_inputs(
        analysis.features,
        style=song.style,
        seed=song.seed,
        spec=spec,
        guide=guide.poses,
        junction=guide.junction,
    )


def calibration_styles(spec: ModelSpec) -> tuple[str, ...]:
    """The styles to spread calibration songs over: the model's own, or the shipped library's for a
    model that performs a plan (it has no style input; the plan carries the style)."""
    if spec.styles:
        return spec.styles
    from choreo.choreography.library import shipped_library

    return shipped_library().styles


def prepare_precision_model(
    model_path: Path, precision: str, settings: EngineSettings, *, count: int = 8
) -> tuple[Path, str]:
    """The ONNX file of ``precision`` and its SHA-256, converting it first when it is not cached.

    int8 is calibrated on ``count`` songs of ``settings.calibration_dir`` spread over
    the tempo range (:func:`~choreo.enginetools.calibration.select_calibration_songs`),
    each analysed once and cached.

    Raises
    ------
    EngineError, ParameterError
        As :func:`engines.precision.precision_model`, and for a bad calibration set.
    """
    if precision == "int8" and Path(model_path).is_file():
        target = converted_model_path(file_sha256(Path(model_path)), precision, settings)
        if not target.is_file() and settings.calibration_dir is not None:
            from engines.onnxruntime_engine import OnnxRuntimeEngine

            reference = OnnxRuntimeEngine(model_path, threads=settings.threads)
            candidates = read_manifest(settings.calibration_dir)
            songs = select_calibration_songs(candidates, calibration_styles(reference.spec), count=count)
            chunks = calibration_chunks(
                songs, reference, lambda song, spec: song_model_inputs(song, spec, settings.cache_dir)
            )
            save_model(to_mixed_fp16(quantize_int8(onnx.load(str(model_path)), chunks)), target)
    return precision_model(model_path, precision, settings)
