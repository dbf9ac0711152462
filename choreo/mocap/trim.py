"""Cut what is not dance from the ends of a mocap clip.

CMU takes begin with a calibration T-pose (the salsa clips' first frame), and
some stand still for seconds before and after the dance (the breakdance
takes). Still stretches teach an autoregressive model exactly the freezing it
must not learn, so the clip is cut to its active span: from a little before
the mean joint speed first rises above a threshold to a little after it last
falls below it, once the leading calibration frames (T-pose, and the snap out
of it at speeds no body reaches) are gone.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import gaussian_filter1d

from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion
from choreo.motion.skeleton import JOINT_NAMES
from choreo.motion.stops import mean_joint_speeds

__all__ = ["active_span", "is_t_pose"]

_J = {n: i for i, n in enumerate(JOINT_NAMES)}
_ARM_LATERAL_COS = 0.85
_CALIBRATION_S = 0.25
_SNAP_SPEED_M_S = 3.0


def is_t_pose(motion: Motion) -> np.ndarray:
    """Per frame: both arms straight out sideways (each arm bone within ~30 degrees of the hip axis)."""
    pos = joint_positions(motion)
    lateral = pos[:, _J["left_hip"]] - pos[:, _J["right_hip"]]
    lateral /= np.linalg.norm(lateral, axis=-1, keepdims=True)
    out = np.ones(motion.n_frames, dtype=bool)
    for side, sign in (("left", 1.0), ("right", -1.0)):
        for a, b in (("shoulder", "elbow"), ("elbow", "wrist")):
            bone = pos[:, _J[f"{side}_{b}"]] - pos[:, _J[f"{side}_{a}"]]
            cos = sign * np.sum(bone * lateral, axis=-1) / np.linalg.norm(bone, axis=-1)
            out &= cos > _ARM_LATERAL_COS
    return out


def active_span(
    motion: Motion, *, min_speed_m_s: float = 0.2, smooth_s: float = 0.25, margin_s: float = 0.5
) -> tuple[int, int]:
    """First and one-past-last frame of the part of ``motion`` that is dance.

    Parameters
    ----------
    motion : a retargeted clip
    min_speed_m_s : mean joint speed (smoothed) below which the figure counts as still
    smooth_s : Gaussian smoothing of the speed, seconds
    margin_s : still time kept before the first and after the last active frame

    Returns
    -------
    (start, stop) : frame indices with ``0 <= start < stop <= n_frames``; the
    whole clip when no frame is active
    """
    n = motion.n_frames
    if n < 3:
        return 0, n
    # calibration: a T-pose, or the snap out of it faster than a body moves, in the first moments
    t_pose = is_t_pose(motion)
    raw_speed = mean_joint_speeds(joint_positions(motion), motion.fps)
    start = 0
    while start < min(n - 2, _CALIBRATION_S * motion.fps) and (
        t_pose[start] or raw_speed[start] > _SNAP_SPEED_M_S
    ):
        start += 1
    if n - start < 3:
        return 0, n
    speed = gaussian_filter1d(raw_speed[start:], smooth_s * motion.fps)
    active = np.nonzero(speed > min_speed_m_s)[0]
    if active.size == 0:
        return 0, n
    margin = int(round(margin_s * motion.fps))
    first = start + max(0, active[0] - margin)
    last = start + min(speed.size, active[-1] + 1 + margin) + 1
    return int(first), int(min(last, n))
