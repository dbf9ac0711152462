"""Mean joint speed: how fast the body moves over a dance, the routine's intensity.

The mean over frames and joints of each joint's speed, in metres per second.
A still dance scores 0; the 52 recorded CMU dance clips (retargeted to SMPL)
have their terciles at 1.07 and 1.32 m/s, the service's intensity levels.
"""

from __future__ import annotations

import numpy as np

from choreo.metrics._positions import check_fps, check_positions
from choreo.motion.stops import mean_joint_speeds

__all__ = ["mean_joint_speed"]


def mean_joint_speed(positions: np.ndarray, *, fps: float) -> float:
    """Mean speed of the joints, in m/s; 0 for fewer than two frames.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres
    fps : float > 0, frame rate of ``positions``
    """
    fps = check_fps(fps)
    pos = check_positions(positions)
    if pos.shape[0] < 2:
        return 0.0
    return float(mean_joint_speeds(pos, fps).mean())
