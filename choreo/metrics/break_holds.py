"""Holds on breaks: how still the dancer is where the music stops, against where it goes on.

The measure is the dancer's mean joint speed inside the song's breaks
(:func:`choreo.audio.structure.find_breaks`) over its mean speed outside them.
A dancer that holds on the breaks scores well under 1; one that does not hear
them scores about 1, and so does a dance measured against another song's
breaks laid on its clock: the own-song score under the mismatched one is what
a music-blind dancer cannot fake.
"""

from __future__ import annotations

import numpy as np

from choreo.errors import ParameterError
from choreo.metrics._positions import check_fps, check_positions
from choreo.motion.stops import mean_joint_speeds

__all__ = ["break_speed_ratio", "in_breaks", "tiled_breaks"]


def in_breaks(times_s: np.ndarray, breaks_s: np.ndarray) -> np.ndarray:
    """Whether each time falls inside one of ``breaks_s`` ``[B, 2]`` (start included, end not)."""
    times = np.asarray(times_s, dtype=np.float64)
    spans = np.asarray(breaks_s, dtype=np.float64).reshape(-1, 2)
    inside = np.zeros(times.shape, dtype=bool)
    for start, end in spans:
        inside |= (times >= start) & (times < end)
    return inside


def break_speed_ratio(positions: np.ndarray, breaks_s: np.ndarray, *, fps: float) -> float | None:
    """Mean joint speed inside ``breaks_s`` over the mean outside them; None where no frame is inside
    (or every one is).

    Parameters
    ----------
    positions : np.ndarray [shape=(frames >= 2, joints, 3)], metres, frame ``k`` at ``k / fps``
    breaks_s : np.ndarray [shape=(breaks, 2)], start and end seconds on the same clock
    fps : frame rate
    """
    fps = check_fps(fps)
    pos = check_positions(positions, min_frames=2)
    speed = mean_joint_speeds(pos, fps)
    inside = in_breaks((np.arange(speed.size) + 0.5) / fps, breaks_s)
    if not inside.any() or inside.all():
        return None
    outside = float(speed[~inside].mean())
    return round(float(speed[inside].mean()) / outside, 4) if outside > 0 else None


def tiled_breaks(breaks_s: np.ndarray, *, song_duration_s: float, cover_s: float) -> np.ndarray:
    """A song's breaks repeated end to end (period ``song_duration_s``) until they cover ``cover_s``."""
    spans = np.asarray(breaks_s, dtype=np.float64).reshape(-1, 2)
    if song_duration_s <= 0:
        raise ParameterError("the song whose breaks are tiled has no duration")
    loops = max(1, int(np.ceil(cover_s / song_duration_s)))
    return np.concatenate([spans + k * song_duration_s for k in range(loops)])
