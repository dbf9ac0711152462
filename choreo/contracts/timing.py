"""``SongTiming``: when a song's beats fall and how long it lasts, and the frames that cover it.

The analysis makes it, the plan and the guide are laid on it, the generated
motion carries it to the finishing stage, and the summary reports it. Every
song is danced from its first second to its last: :func:`frames_for_duration`
is the one rule for how many frames that takes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from choreo.errors import ParameterError

__all__ = ["SongTiming", "frames_for_duration"]


def frames_for_duration(duration_s: float, fps: int) -> int:
    """Frames that cover ``duration_s`` at ``fps``: ``ceil(duration_s * fps)``.

    The last frame starts before the end of the song. A product within 1e-9 of
    an integer counts as that integer, so float rounding never adds a frame.
    """
    return max(0, math.ceil(duration_s * fps - 1e-9))


@dataclass(frozen=True, eq=False)
class SongTiming:
    """When a song's beats fall and how long it lasts: all the stages after generation need of it.

    Parameters
    ----------
    beat_times : np.ndarray [shape=(beats,)], seconds, increasing
    downbeat_times : np.ndarray [shape=(bars,)], seconds, a subset of ``beat_times``
    tempo_bpm : float, beats per minute fitted on ``beat_times``
    duration_s : float >= 0, the song's duration in seconds
    """

    beat_times: np.ndarray
    downbeat_times: np.ndarray
    tempo_bpm: float
    duration_s: float

    def __post_init__(self) -> None:
        if not math.isfinite(self.duration_s) or self.duration_s < 0:
            raise ParameterError(f"duration_s must be finite and >= 0, got {self.duration_s}")
        object.__setattr__(self, "beat_times", np.asarray(self.beat_times, dtype=np.float64).reshape(-1))
        object.__setattr__(
            self, "downbeat_times", np.asarray(self.downbeat_times, dtype=np.float64).reshape(-1)
        )
        object.__setattr__(self, "tempo_bpm", float(self.tempo_bpm))
        object.__setattr__(self, "duration_s", float(self.duration_s))
