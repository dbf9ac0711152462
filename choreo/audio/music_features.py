"""``MusicFeatures``: what the dance model hears, one row per motion frame.

The 35 columns follow the AIST++/FACT layout, so a model trained on features
computed here sees the same numbers at render time:

===========  =======  ============================================
columns      count    content
===========  =======  ============================================
0            1        onset strength envelope
1-20         20       MFCC of the log-mel spectrogram
21-32        12       chroma from ``chroma_stft`` (C, C#, ..., B)
33           1        onset peak one-hot
34           1        beat one-hot
===========  =======  ============================================

Row ``k`` describes the audio at time ``k / fps``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from os import PathLike
from typing import Any, BinaryIO

import numpy as np

from choreo.contracts.timing import SongTiming, frames_for_duration
from choreo.errors import AudioError, ParameterError

__all__ = [
    "BEAT_COLUMN",
    "CHROMA_COLUMNS",
    "FEATURE_DIM",
    "MFCC_COLUMNS",
    "ONSET_ENVELOPE_COLUMN",
    "ONSET_PEAK_COLUMN",
    "MusicFeatures",
]

FEATURE_DIM = 35
ONSET_ENVELOPE_COLUMN = 0
MFCC_COLUMNS = slice(1, 21)
CHROMA_COLUMNS = slice(21, 33)
ONSET_PEAK_COLUMN = 33
BEAT_COLUMN = 34

_NPZ_VERSION = 1
_NPZ_KEYS = ("version", "fps", "features", "beat_times", "downbeat_times", "tempo_bpm", "duration_s")


@dataclass(frozen=True, eq=False)
class MusicFeatures:
    """Per-frame music features of one song, with its beats and tempo.

    Parameters
    ----------
    fps : int > 0, frames per second of ``features``
    features : np.ndarray [shape=(n_frames, 35), dtype=float32], row ``k`` at time ``k / fps``;
        ``n_frames = ceil(duration_s * fps)``
    beat_times : np.ndarray [shape=(beats,)], seconds, increasing, on frame times
    downbeat_times : np.ndarray [shape=(bars,)], seconds, a subset of ``beat_times``;
        empty where the bar phase could not be estimated
    tempo_bpm : float, beats per minute fitted on ``beat_times``
    duration_s : float, the song's duration in seconds
    """

    fps: int
    features: np.ndarray
    beat_times: np.ndarray
    downbeat_times: np.ndarray
    tempo_bpm: float
    duration_s: float

    def __post_init__(self) -> None:
        if isinstance(self.fps, bool) or not isinstance(self.fps, int | np.integer) or self.fps <= 0:
            raise ParameterError(f"fps must be a positive integer, got {self.fps!r}")
        if not math.isfinite(self.duration_s) or self.duration_s < 0:
            raise ParameterError(f"duration_s must be finite and >= 0, got {self.duration_s}")
        expected = (frames_for_duration(self.duration_s, int(self.fps)), FEATURE_DIM)
        if np.shape(self.features) != expected:
            raise ParameterError(
                f"features must be [ceil(duration_s * fps), {FEATURE_DIM}] = {list(expected)} "
                f"for {self.duration_s:.3f} s at {self.fps} fps, got {list(np.shape(self.features))}"
            )
        object.__setattr__(self, "fps", int(self.fps))
        object.__setattr__(self, "features", np.asarray(self.features, dtype=np.float32))
        object.__setattr__(self, "beat_times", np.asarray(self.beat_times, dtype=np.float64).reshape(-1))
        object.__setattr__(
            self, "downbeat_times", np.asarray(self.downbeat_times, dtype=np.float64).reshape(-1)
        )
        object.__setattr__(self, "tempo_bpm", float(self.tempo_bpm))
        object.__setattr__(self, "duration_s", float(self.duration_s))

    @property
    def timing(self) -> SongTiming:
        """The song's beats, tempo and duration without the per-frame features."""
        return SongTiming(self.beat_times, self.downbeat_times, self.tempo_bpm, self.duration_s)

    @property
    def n_frames(self) -> int:
        """Rows of ``features``: ``ceil(duration_s * fps)``."""
        return int(self.features.shape[0])

    def to_npz(self, file: str | PathLike[str] | BinaryIO) -> None:
        """Write the features as an ``.npz`` to a path or a binary file object.

        A path is written exactly as given (no ``.npz`` is appended). Not compressed:
        zlib saves nothing on float features and costs a service job 30 ms of CPU.
        """
        arrays: dict[str, Any] = {
            "version": np.int64(_NPZ_VERSION),
            "fps": np.int64(self.fps),
            "features": self.features,
            "beat_times": self.beat_times,
            "downbeat_times": self.downbeat_times,
            "tempo_bpm": np.float64(self.tempo_bpm),
            "duration_s": np.float64(self.duration_s),
        }
        if isinstance(file, str | PathLike):
            with open(file, "wb") as handle:
                np.savez(handle, **arrays)
        else:
            np.savez(file, **arrays)

    @classmethod
    def from_npz(cls, file: str | PathLike[str] | BinaryIO) -> MusicFeatures:
        """Read features written by :meth:`to_npz` from a path or a binary file object.

        Raises
        ------
        AudioError
            code ``corrupt_features``: not such a file, or a version this code does not read.
        """
        name = file if isinstance(file, str | PathLike) else getattr(file, "name", "<stream>")
        try:
            with np.load(file, allow_pickle=False) as data:
                missing = [key for key in _NPZ_KEYS if key not in data.files]
                if missing:
                    raise AudioError(
                        f"{name}: not a MusicFeatures file (missing {missing})", code="corrupt_features"
                    )
                version = int(data["version"])
                if version != _NPZ_VERSION:
                    raise AudioError(
                        f"{name}: MusicFeatures file version {version}, this code reads {_NPZ_VERSION}",
                        code="corrupt_features",
                    )
                return cls(
                    fps=int(data["fps"]),
                    features=data["features"],
                    beat_times=data["beat_times"],
                    downbeat_times=data["downbeat_times"],
                    tempo_bpm=float(data["tempo_bpm"]),
                    duration_s=float(data["duration_s"]),
                )
        except (OSError, ValueError, EOFError) as exc:
            if isinstance(exc, ParameterError):
                raise AudioError(
                    f"{name}: inconsistent MusicFeatures file ({exc})", code="corrupt_features"
                ) from exc
            raise AudioError(f"{name}: not a MusicFeatures file ({exc})", code="corrupt_features") from exc
