"""Jerk: how abruptly the body moves, the mean magnitude of the third derivative of joint positions.

Mocap of real dance has a characteristic jerk; jittery generated motion has
far more, over-smoothed motion less. Finite differences amplify noise with the
frame rate, so compare numbers at the same fps only.
"""

from __future__ import annotations

import numpy as np

from choreo.metrics._positions import check_fps, check_positions

__all__ = ["mean_jerk"]


def mean_jerk(positions: np.ndarray, *, fps: float) -> float:
    """Mean over frames and joints of ``|d^3 p / dt^3|``, in m/s^3.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres
    fps : float > 0, frame rate of ``positions``

    Returns
    -------
    float >= 0; 0 for motions under 4 frames.
    """
    fps = check_fps(fps)
    pos = check_positions(positions)
    if pos.shape[0] < 4:
        return 0.0
    jerk = np.diff(pos, n=3, axis=0) * fps**3
    return float(np.mean(np.linalg.norm(jerk, axis=-1)))
