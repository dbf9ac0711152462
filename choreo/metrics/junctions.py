"""Junction smoothness: are the joins between phrases as smooth as the phrases themselves?

The jerk (third derivative of joint positions, mean over joints of its
magnitude) of the frames within :data:`JUNCTION_WINDOW_S` of a junction, over
that of the frames inside phrases. Near 1: the joins cannot be told from the
dance; much above 1: the body snaps at each join.
"""

from __future__ import annotations

import numpy as np

from choreo.errors import ParameterError
from choreo.metrics._positions import check_fps, check_positions

__all__ = ["JUNCTION_WINDOW_S", "frame_jerk", "junction_jerk_ratio"]

JUNCTION_WINDOW_S = 0.25


def frame_jerk(positions: np.ndarray, *, fps: float) -> np.ndarray:
    """Mean over joints of ``|d^3 p / dt^3|`` per frame, m/s^3, ``[frames]``.

    The third difference of frames ``k - 1 .. k + 2`` is put at frame ``k``
    (centred, within half a frame); the first and last two frames repeat their
    neighbours' values.
    """
    fps = check_fps(fps)
    pos = check_positions(positions, min_frames=4)
    jerk = np.mean(np.linalg.norm(np.diff(pos, n=3, axis=0), axis=-1), axis=1) * fps**3
    return np.concatenate([jerk[:1], jerk, jerk[-1:], jerk[-1:]])


def junction_jerk_ratio(
    positions: np.ndarray,
    junction_times_s: np.ndarray,
    *,
    fps: float,
    window_s: float = JUNCTION_WINDOW_S,
) -> float | None:
    """Mean jerk within ``window_s`` of a junction over mean jerk elsewhere.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames >= 4, joints, 3)], metres
    junction_times_s : np.ndarray [shape=(junctions,)], where one phrase gives way to the next, seconds
    fps : frame rate of ``positions``
    window_s : how far either side of a junction counts as the junction

    Returns
    -------
    float or None
        None when no junction falls inside the dance (a single phrase, or mocap),
        or no frame is left inside phrases.

    Raises
    ------
    ParameterError
        If ``window_s`` is not positive.
    """
    if not window_s > 0:
        raise ParameterError(f"window_s must be positive, got {window_s}")
    jerk = frame_jerk(positions, fps=fps)
    times = np.arange(jerk.size) / fps
    junctions = np.asarray(junction_times_s, dtype=np.float64).reshape(-1)
    junctions = junctions[(junctions > 0) & (junctions < times[-1])]
    if junctions.size == 0:
        return None
    junctions.sort()
    after = np.clip(np.searchsorted(junctions, times), 1, junctions.size) if junctions.size > 1 else None
    if after is None:
        nearest = np.abs(times - junctions[0])
    else:
        right = np.minimum(after, junctions.size - 1)
        nearest = np.minimum(np.abs(times - junctions[after - 1]), np.abs(times - junctions[right]))
    near = nearest <= window_s
    if near.all() or not near.any():
        return None
    inside = float(jerk[~near].mean())
    return float(jerk[near].mean()) / inside if inside > 0 else None
