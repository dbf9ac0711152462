"""Converted models and real-song inputs on disk, cached under the engine cache folder.

``precision_model`` gives the ONNX file of a precision (fp32: the model
itself; fp16 and int8: converted once and kept, keyed by the source model's
hash and, for int8, by the calibration set). ``song_features`` keeps each
song's music features, so the calibration, the selfcheck and the benchmark
decode a song once.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import onnx

from choreo.errors import EngineError, ParameterError
from choreo.files import atomic_path
from engines.base import ModelSpec
from engines.calibration import (
    CalibrationSong,
    calibration_chunks,
    read_manifest,
    select_calibration_songs,
)
from engines.precision import CONVERSION_VERSION, file_sha256, quantize_int8, to_mixed_fp16
from engines.settings import EngineSettings

if TYPE_CHECKING:  # audio decoding is imported only where songs are analysed
    from choreo.audio.music_features import MusicFeatures

__all__ = ["calibration_set", "precision_model", "song_analysis", "song_features", "song_model_inputs"]


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
    """A song's per-frame model inputs, as the render pipeline builds them."""
    from choreo.generate import song_inputs

    features = song_features(song.path, spec.native_fps, cache_dir)
    return song_inputs(features, style=song.style, seed=song.seed, spec=spec)


def calibration_set(settings: EngineSettings, spec: ModelSpec, *, count: int = 8) -> list[CalibrationSong]:
    """The calibration songs from ``settings.calibration_dir`` (see :func:`select_calibration_songs`)."""
    if settings.calibration_dir is None:
        raise ParameterError(
            "int8 needs a calibration set: set CHOREO_ENGINE_CALIBRATION_DIR (or --calibration-dir) "
            "to a folder of songs with a MANIFEST.tsv"
        )
    return select_calibration_songs(read_manifest(settings.calibration_dir), spec.styles, count=count)


def precision_model(model_path: Path, precision: str, settings: EngineSettings) -> tuple[Path, str]:
    """The ONNX file of ``precision`` and its SHA-256, converting (and caching) when needed."""
    model_path = Path(model_path)
    if not model_path.is_file():
        raise EngineError(f"model file not found: {model_path}")
    source_sha = file_sha256(model_path)
    if precision == "fp32":
        return model_path, source_sha
    out_dir = Path(settings.cache_dir) / "converted"
    if precision == "fp16":
        target = out_dir / f"{source_sha[:16]}-fp16-v{CONVERSION_VERSION}.onnx"
        if not target.is_file():
            _save(to_mixed_fp16(onnx.load(str(model_path))), target)
        return target, file_sha256(target)
    if precision == "int8":
        from engines.onnxruntime_engine import OnnxRuntimeEngine

        reference = OnnxRuntimeEngine(model_path, threads=settings.resolved_ort_threads())
        songs = calibration_set(settings, reference.spec)
        calib_key = hashlib.sha256(repr([(str(s.path), s.style, s.seed) for s in songs]).encode()).hexdigest()
        target = out_dir / f"{source_sha[:16]}-int8-{calib_key[:12]}-v{CONVERSION_VERSION}.onnx"
        if not target.is_file():
            chunks = calibration_chunks(
                songs, reference, lambda song, spec: song_model_inputs(song, spec, settings.cache_dir)
            )
            _save(to_mixed_fp16(quantize_int8(onnx.load(str(model_path)), chunks)), target)
        return target, file_sha256(target)
    raise ParameterError(f"precision must be fp32, fp16 or int8, got {precision!r}")


def _save(model: onnx.ModelProto, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as tmp:
        onnx.save(model, str(tmp))
