"""Physical foot contact score (PFC), as EDGE (Tseng et al., CVPR 2023) defines it.

The idea: the centre of mass can only accelerate (other than falling) while a
foot pushes on the ground, so a foot that is static should be present whenever
the root accelerates. Per frame, the root acceleration is taken with its
upward component clipped at zero (falling is free) and normalised by its
maximum over the clip; each foot's horizontal speed is the smaller of its ankle
and toe speeds; the score is the mean over frames of
``left_speed * right_speed * root_acceleration``, multiplied by 10^4.
Lower is better.

As in EDGE, foot speed is a displacement per frame (metres per frame), while the
root acceleration is normalised, so the number moves with the frame rate;
EDGE reports it at 30 fps, on 5-second clips. The normalising maximum is taken
over whatever is passed in (here a whole dance), and it grows with length, so
compare dances of similar length.
"""

from __future__ import annotations

import numpy as np

from choreo.metrics._positions import check_fps, check_positions
from choreo.motion.contacts import HORIZONTAL_AXES, UP_AXIS, foot_point_indices
from choreo.motion.skeleton import SMPL, Skeleton

__all__ = ["PFC_SCALE", "pfc_score"]

PFC_SCALE = 1e4
"""EDGE reports the mean times 10^4."""


def pfc_score(positions: np.ndarray, *, fps: float, skeleton: Skeleton = SMPL) -> float:
    """EDGE's physical foot contact score (times 10^4; lower is better).

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres, Y up; joint 0 is the root
    fps : float > 0, frame rate of ``positions``
    skeleton : names the foot joints

    Returns
    -------
    float >= 0; 0 for motions under 3 frames or without any root acceleration.
    """
    fps = check_fps(fps)
    pos = check_positions(positions)
    if pos.shape[0] < 3:
        return 0.0
    root_velocity = np.diff(pos[:, 0], axis=0) * fps
    root_accel = np.diff(root_velocity, axis=0) * fps
    root_accel[:, UP_AXIS] = np.maximum(root_accel[:, UP_AXIS], 0.0)
    accel = np.linalg.norm(root_accel, axis=-1)
    peak = accel.max()
    if peak <= 0.0:
        return 0.0
    accel = accel / peak

    feet = pos[:, foot_point_indices(skeleton)][..., HORIZONTAL_AXES]
    foot_step = np.linalg.norm(feet[2:] - feet[1:-1], axis=-1)
    left = np.minimum(foot_step[:, 0], foot_step[:, 1])
    right = np.minimum(foot_step[:, 2], foot_step[:, 3])
    return float(np.mean(left * right * accel) * PFC_SCALE)
