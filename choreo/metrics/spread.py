"""Pose spread and reach: how far the body opens up, the numbers a dance that barely moves fails.

**Pose spread** is the mean, over joints and the three axes, of the standard
deviation over time of each joint's position relative to the pelvis, in metres.
A figure standing still scores 0; recorded dance scores about 0.09 to 0.2 m.
**Reach** is the mean distance from each wrist to ``spine2``, in metres.

Both are also given in the pelvis's heading frame, whose axes are the hips'
left-right line, up, and forward (up crossed with it): there a dancer who turns
on the spot with a fixed pose has no spread, where in the world frame the turn
itself spreads every joint. Reach, a distance, is the same in every frame; in the
heading frame it is split into its forward, lateral and up parts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.errors import ParameterError
from choreo.metrics._positions import check_positions
from choreo.motion.contacts import UP_AXIS
from choreo.motion.skeleton import SMPL, Skeleton

__all__ = ["Reach", "heading_frame_offsets", "pose_spread", "reach"]


def heading_frame_offsets(positions: np.ndarray, *, skeleton: Skeleton = SMPL) -> np.ndarray:
    """Joint positions relative to the pelvis, in each frame's pelvis heading frame.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres, Y up
    skeleton : names ``pelvis``, ``left_hip`` and ``right_hip``

    Returns
    -------
    np.ndarray [shape=(frames, joints, 3)]
        Components along (lateral: right hip to left hip, up, forward), metres.

    Raises
    ------
    ParameterError
        If the hips coincide in plan view (the heading is undefined) in some frame.
    """
    pos = check_positions(positions)
    relative = pos - pos[:, skeleton.index("pelvis"), None, :]
    lateral = pos[:, skeleton.index("left_hip")] - pos[:, skeleton.index("right_hip")]
    lateral[:, UP_AXIS] = 0.0
    length = np.linalg.norm(lateral, axis=-1, keepdims=True)
    if np.any(length < 1e-6):
        raise ParameterError("the hips coincide in plan view in some frame: no heading to measure in")
    lateral /= length
    up = np.zeros_like(lateral)
    up[:, UP_AXIS] = 1.0
    forward = np.cross(lateral, up)
    basis = np.stack([lateral, up, forward], axis=1)  # [frames, 3 axes, 3 world]
    return np.einsum("fjw,faw->fja", relative, basis)


def pose_spread(positions: np.ndarray, *, skeleton: Skeleton = SMPL, heading_frame: bool = False) -> float:
    """Mean over joints and axes of the standard deviation over time of the pelvis-relative position, metres.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres, Y up
    skeleton : names the pelvis (and the hips, for the heading frame)
    heading_frame : measure in the pelvis heading frame rather than the world's axes

    Returns
    -------
    float >= 0; 0 for a still figure (and, in the heading frame, for one that only turns).
    """
    pos = check_positions(positions)
    if heading_frame:
        relative = heading_frame_offsets(pos, skeleton=skeleton)
    else:
        relative = pos - pos[:, skeleton.index("pelvis"), None, :]
    return float(np.mean(relative.std(axis=0)))


@dataclass(frozen=True)
class Reach:
    """Mean wrist-to-``spine2`` distance and its mean absolute parts in the heading frame, metres."""

    distance_m: float
    forward_m: float
    lateral_m: float
    up_m: float

    def to_dict(self) -> dict[str, float]:
        return {
            "reach": round(self.distance_m, 4),
            "reach_forward": round(self.forward_m, 4),
            "reach_lateral": round(self.lateral_m, 4),
            "reach_up": round(self.up_m, 4),
        }


def reach(positions: np.ndarray, *, skeleton: Skeleton = SMPL) -> Reach:
    """How far the hands reach from the chest: wrist to ``spine2``, over both wrists and all frames.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres, Y up
    skeleton : names ``spine2``, ``left_wrist``, ``right_wrist`` (and the pelvis and hips)
    """
    offsets = heading_frame_offsets(positions, skeleton=skeleton)
    chest = offsets[:, skeleton.index("spine2")]
    wrists = offsets[:, [skeleton.index("left_wrist"), skeleton.index("right_wrist")]] - chest[:, None, :]
    parts = np.mean(np.abs(wrists), axis=(0, 1))
    return Reach(
        distance_m=float(np.mean(np.linalg.norm(wrists, axis=-1))),
        lateral_m=float(parts[0]),
        up_m=float(parts[1]),
        forward_m=float(parts[2]),
    )
