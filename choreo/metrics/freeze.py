"""Freeze ratio: does the dance still move at the end of the song as it did at the start?

Autoregressive dance generators tend to settle into a still pose after a
minute or so. The ratio compares the motion energy (mean squared joint speed)
of the last minute with that of the first; near 1 is a dance that keeps going,
near 0 one that froze. Songs under two minutes have no separate first and last
minute, so they get ``None``.
"""

from __future__ import annotations

import numpy as np

from choreo.errors import ParameterError
from choreo.metrics._positions import check_fps, check_positions

__all__ = ["FREEZE_MIN_DURATION_S", "FREEZE_WINDOW_S", "freeze_ratio", "motion_energy"]

FREEZE_WINDOW_S = 60.0
FREEZE_MIN_DURATION_S = 120.0
_ENERGY_FLOOR_M2_S2 = 1e-12


def motion_energy(positions: np.ndarray, *, fps: float) -> float:
    """Mean squared joint speed, in m^2/s^2 (kinetic energy per unit mass, times two)."""
    fps = check_fps(fps)
    pos = check_positions(positions, min_frames=2)
    speed_sq = np.sum(np.diff(pos, axis=0) ** 2, axis=-1) * fps**2
    return float(np.mean(speed_sq))


def freeze_ratio(
    positions: np.ndarray,
    *,
    fps: float,
    window_s: float = FREEZE_WINDOW_S,
    min_duration_s: float = FREEZE_MIN_DURATION_S,
) -> float | None:
    """Motion energy of the last ``window_s`` over that of the first ``window_s``.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres
    fps : float > 0, frame rate of ``positions``
    window_s : float > 0, length of the first and last windows
    min_duration_s : songs shorter than this get ``None``

    Returns
    -------
    float >= 0 or None
        0 when the motion stops, about 1 when it keeps its energy. A first
        minute without any motion counts as 1e-12 m^2/s^2 of energy, so the
        ratio stays finite.

    Raises
    ------
    ParameterError
        If ``window_s`` is not positive.
    """
    fps = check_fps(fps)
    if not np.isfinite(window_s) or window_s <= 0:
        raise ParameterError(f"window_s must be positive, got {window_s}")
    pos = check_positions(positions)
    if pos.shape[0] / fps < min_duration_s:
        return None
    window = max(2, int(round(window_s * fps)))
    first = motion_energy(pos[:window], fps=fps)
    last = motion_energy(pos[-window:], fps=fps)
    return float(last / max(first, _ENERGY_FLOOR_M2_S2))
