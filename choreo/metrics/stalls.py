"""Stalls: stretches where the dancer stops while the music goes on.

The dancer's energy is the mean squared joint speed, averaged over
:data:`SMOOTHING_S`; a frame stalls when that is under
:data:`STALL_FRACTION` of its median over the dance while the music's energy
there has not fallen (it is at least :data:`MUSIC_HOLD_FRACTION` of its own
median). A held pose in a quiet bridge is choreography; the same pose over a
loud chorus is a stall.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import uniform_filter1d

from choreo.errors import ParameterError
from choreo.metrics._positions import check_fps, check_positions

__all__ = ["MUSIC_HOLD_FRACTION", "SMOOTHING_S", "STALL_FRACTION", "Stalls", "stalls"]

STALL_FRACTION = 0.2
"""The dancer stalls under this fraction of its median energy ..."""

MUSIC_HOLD_FRACTION = 0.5
"""... while the music's energy is at least this fraction of its median."""

SMOOTHING_S = 0.5
"""Window of the moving average of the dancer's energy: a beat's pause is not a stall."""


@dataclass(frozen=True)
class Stalls:
    """Total and longest stalled time, seconds."""

    total_s: float
    longest_s: float

    def to_dict(self) -> dict[str, float]:
        return {"stall_s": round(self.total_s, 3), "longest_stall_s": round(self.longest_s, 3)}


def stalls(positions: np.ndarray, music_energy: np.ndarray, *, fps: float) -> Stalls:
    """Seconds the dancer stalls while the music does not fall, in total and the longest run.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames >= 2, joints, 3)], metres, frame ``k`` at ``k / fps``
    music_energy : np.ndarray [shape=(frames,)], the music's energy on the same frames, any unit >= 0
        (for example the bar energy of :func:`choreo.audio.structure.analyze_structure` per frame)
    fps : frame rate of both

    Raises
    ------
    ParameterError
        If ``music_energy`` does not have one value per frame.
    """
    fps = check_fps(fps)
    pos = check_positions(positions, min_frames=2)
    music = np.asarray(music_energy, dtype=np.float64).reshape(-1)
    if music.size != pos.shape[0]:
        raise ParameterError(f"music_energy has {music.size} values for {pos.shape[0]} frames")
    speed_sq = np.mean(np.sum(np.diff(pos, axis=0) ** 2, axis=-1), axis=1) * fps**2
    speed_sq = np.append(speed_sq, speed_sq[-1])
    energy = uniform_filter1d(speed_sq, size=max(1, round(SMOOTHING_S * fps)), mode="nearest")
    stalled = (energy < STALL_FRACTION * np.median(energy)) & (
        music >= MUSIC_HOLD_FRACTION * np.median(music)
    )
    edges = np.diff(np.concatenate([[0], stalled.astype(np.int8), [0]]))
    runs = np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)
    return Stalls(total_s=float(stalled.sum()) / fps, longest_s=float(runs.max(initial=0)) / fps)
