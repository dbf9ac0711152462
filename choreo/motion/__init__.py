"""Skeleton and motion types, rotations and kinematics."""

from choreo.motion.kinematics import global_rotations, joint_positions
from choreo.motion.motion import FRAME_SIZE, Motion
from choreo.motion.skeleton import JOINT_NAMES, REST_PELVIS_HEIGHT_M, SMPL, Skeleton

__all__ = [
    "FRAME_SIZE",
    "JOINT_NAMES",
    "REST_PELVIS_HEIGHT_M",
    "SMPL",
    "Motion",
    "Skeleton",
    "global_rotations",
    "joint_positions",
]
