"""Forward kinematics: joint rotations to world positions and orientations."""

from __future__ import annotations

import numpy as np

from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_mat

__all__ = ["global_rotations", "joint_positions"]


def global_rotations(motion: Motion) -> np.ndarray:
    """World rotation matrix of every joint, ``[frames, joints, 3, 3]``."""
    local = aa_to_mat(motion.rotations)
    world = np.empty_like(local)
    for j, p in enumerate(motion.skeleton.parents):
        world[:, j] = local[:, j] if p < 0 else world[:, p] @ local[:, j]
    return world


def joint_positions(motion: Motion) -> np.ndarray:
    """World position of every joint, ``[frames, joints, 3]``, metres.

    The root sits at ``root_translation``; each child is its parent's position
    plus the parent's world rotation applied to the child's rest offset.
    """
    world_rot = global_rotations(motion)
    offsets = motion.skeleton.offsets
    pos = np.empty(motion.rotations.shape)
    for j, p in enumerate(motion.skeleton.parents):
        if p < 0:
            pos[:, j] = motion.root_translation
        else:
            pos[:, j] = pos[:, p] + world_rot[:, p] @ offsets[j]
    return pos
