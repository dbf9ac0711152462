"""Forward kinematics: joint rotations to world positions and orientations."""

from __future__ import annotations

import numpy as np

from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_mat

__all__ = ["chain_kinematics", "facing_angle", "global_rotations", "joint_positions"]


def global_rotations(motion: Motion) -> np.ndarray:
    """World rotation matrix of every joint, ``[frames, joints, 3, 3]``."""
    local = _joint_major_matrices(motion.rotations)
    world = np.empty_like(local)
    for j, p in enumerate(motion.skeleton.parents):
        world[j] = local[j] if p < 0 else world[p] @ local[j]
    return np.ascontiguousarray(np.moveaxis(world, 0, 1))


def _joint_major_matrices(rotations: np.ndarray) -> np.ndarray:
    """Rotation matrices of axis-angle ``rotations`` ``[frames, n, 3]`` laid out ``[n, frames, 3, 3]``.

    numpy's stacked matmul runs about twice as fast on one joint's contiguous frames as on the
    strided column ``[:, j]`` of a frame-major array; the products are the same, bit for bit.
    The axis-angles are transposed before the conversion, which is per rotation, so the
    matrices come out joint-major and only a third as many numbers are copied.
    """
    return aa_to_mat(np.ascontiguousarray(np.swapaxes(rotations, 0, 1)))


def joint_positions(motion: Motion) -> np.ndarray:
    """World position of every joint, ``[frames, joints, 3]``, metres.

    The root sits at ``root_translation``; each child is its parent's position
    plus the parent's world rotation applied to the child's rest offset.
    """
    skeleton = motion.skeleton
    parents = [p for p in skeleton.parents if p >= 0]
    inner = sorted(set(parents))  # only a parent's world rotation places a joint: leaves need none
    local = _joint_major_matrices(motion.rotations[:, inner])
    world: dict[int, np.ndarray] = {}
    for k, j in enumerate(inner):
        p = skeleton.parents[j]
        world[j] = local[k] if p < 0 else world[p] @ local[k]
    pos = np.empty((len(skeleton.parents),) + np.shape(motion.root_translation))
    for j, p in enumerate(skeleton.parents):
        if p < 0:
            pos[j] = motion.root_translation
        else:
            pos[j] = pos[p] + world[p] @ skeleton.offsets[j]
    return np.ascontiguousarray(np.moveaxis(pos, 0, 1))


def chain_kinematics(motion: Motion, joints: np.ndarray | list[int]) -> tuple[np.ndarray, np.ndarray]:
    """World positions ``[frames, n, 3]`` and rotations ``[frames, n, 3, 3]`` of the ``n`` ``joints``.

    The same forward kinematics as :func:`joint_positions` and
    :func:`global_rotations`, run only along the chains from the root to
    ``joints`` (the legs' IK and foot contact need a few joints of 24).
    """
    skeleton = motion.skeleton
    needed: set[int] = set()
    for joint in joints:
        j = int(joint)
        while j >= 0 and j not in needed:
            needed.add(j)
            j = skeleton.parents[j]
    order = sorted(needed)
    local = _joint_major_matrices(motion.rotations[:, order])
    world: dict[int, np.ndarray] = {}
    position: dict[int, np.ndarray] = {}
    for k, joint in enumerate(order):
        parent = skeleton.parents[joint]
        if parent < 0:
            world[joint] = local[k]
            position[joint] = np.asarray(motion.root_translation, dtype=np.float64)
        else:
            world[joint] = world[parent] @ local[k]
            position[joint] = position[parent] + world[parent] @ skeleton.offsets[joint]
    picked = [int(j) for j in joints]
    return np.stack([position[j] for j in picked], axis=1), np.stack([world[j] for j in picked], axis=1)


def facing_angle(motion: Motion) -> np.ndarray:
    """Heading of the body about +Y per frame, radians (0 = facing +Z), from the hips."""
    pos = joint_positions(motion)
    skeleton = motion.skeleton
    lateral = pos[:, skeleton.index("left_hip")] - pos[:, skeleton.index("right_hip")]
    forward = np.cross(lateral, [0.0, 1.0, 0.0])
    return np.arctan2(forward[:, 0], forward[:, 2])
