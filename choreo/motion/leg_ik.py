"""Two-bone limb IK: bend the legs (or the arms) so that the ankles (the wrists) reach their targets.

The knee turns about its hinge until the hip-to-ankle distance is the target's
(eased near full reach, so the knee never snaps straight), the hip is re-aimed
at the target, and the ankle keeps its world orientation or turns towards a
given one. The post-processing holds planted feet on the floor with it
(:mod:`choreo.postprocess.leg_ik`) and the guide holds a foot planted across a
junction (:mod:`choreo.choreography.inertialize`). An arm is the same chain
(shoulder, elbow, wrist) with the elbow's hinge: the hand locks of
:mod:`choreo.postprocess.hand_locking` reach their points with :func:`place_wrists`.
"""

from __future__ import annotations

import numpy as np

from choreo.errors import ParameterError
from choreo.motion.kinematics import chain_kinematics
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_mat, mat_to_aa, mat_to_quat, quat_slerp, quat_to_mat
from choreo.numeric.vectors import dot, norm

__all__ = [
    "ANKLE_COLUMNS",
    "ARM_CHAINS",
    "KNEE_HINGE_AXIS",
    "LEG_CHAINS",
    "MIN_CORRECTION_M",
    "SOFT_REACH_M",
    "arm_kinematics",
    "leg_kinematics",
    "place_ankles",
    "place_wrists",
    "solve_legs",
]

LEG_CHAINS: tuple[tuple[str, str, str], ...] = (
    ("left_hip", "left_knee", "left_ankle"),
    ("right_hip", "right_knee", "right_ankle"),
)
"""Hip, knee and ankle of each leg, left first (the order of the foot points)."""

ARM_CHAINS: tuple[tuple[str, str, str], ...] = (
    ("left_shoulder", "left_elbow", "left_wrist"),
    ("right_shoulder", "right_elbow", "right_wrist"),
)
"""Shoulder, elbow and wrist of each arm, left first (the order of the hand points)."""

SOFT_REACH_M = 0.03
"""Within this of full reach the solved hip-to-ankle distance eases towards it instead of meeting it."""

_MAX_BEND_RAD = np.deg2rad(150.0)
KNEE_HINGE_AXIS = np.array([1.0, 0.0, 0.0])
"""The knees' hinge, the left-right axis of the rest pose (their flexion is a turn about +X)."""
_LEG_HINGES = (KNEE_HINGE_AXIS, KNEE_HINGE_AXIS)
# The elbows bend about the upper arm's Y axis, the forearm towards the front (+Z): the left arm,
# along +X, by turning about -Y, the right arm, along -X, about +Y (the joint limits' elbow axes).
_ARM_HINGES = (np.array([0.0, -1.0, 0.0]), np.array([0.0, 1.0, 0.0]))
MIN_CORRECTION_M = 1e-9
"""A target closer than this to where the ankle is counts as reached: the leg is left alone."""
ANKLE_COLUMNS = [3, 7]
"""The ankles' columns in :func:`leg_kinematics` (the wrists' in :func:`arm_kinematics`)."""


def place_ankles(
    motion: Motion,
    targets: np.ndarray,
    weights: np.ndarray,
    orientations: np.ndarray | None = None,
    *,
    legs: tuple[np.ndarray, np.ndarray] | None = None,
) -> Motion:
    """Bend the legs so that each ankle moves towards its target (and its orientation).

    Parameters
    ----------
    motion : the motion; left untouched
    targets : np.ndarray [shape=(frames, 2, 3)], metres, where the left and the right
        ankle (the order of :data:`LEG_CHAINS`) should be
    weights : np.ndarray [shape=(frames, 2)], 0 to 1: 0 leaves a leg as it is, 1 puts
        its ankle on the target as far as the leg reaches, between them the ankle
        goes that share of the way
    orientations : np.ndarray [shape=(frames, 2, 3, 3)], world rotations the ankles turn
        towards by the same weights (slerp); None keeps each ankle's own, so the foot does not tilt
    legs : :func:`leg_kinematics` of ``motion`` where the caller has it already (not computed twice)

    Returns
    -------
    Motion
        A new motion with new hip, knee and ankle rotations where a weight is
        above zero; the root and every other joint are unchanged.
    """
    return _place(motion, LEG_CHAINS, _LEG_HINGES, targets, weights, orientations, legs)


def place_wrists(motion: Motion, targets: np.ndarray, weights: np.ndarray) -> Motion:
    """Bend the arms so that each wrist moves towards its target, as :func:`place_ankles` the legs.

    ``targets`` ``[frames, 2, 3]`` and ``weights`` ``[frames, 2]`` are the left and the right
    wrist's (the order of :data:`ARM_CHAINS`); each wrist keeps its world orientation, so
    the hand does not turn. Returns a new motion with new shoulder, elbow and wrist
    rotations where a weight is above zero.
    """
    return _place(motion, ARM_CHAINS, _ARM_HINGES, targets, weights, None, None)


def _place(
    motion: Motion,
    chains: tuple[tuple[str, str, str], ...],
    hinges: tuple[np.ndarray, ...],
    targets: np.ndarray,
    weights: np.ndarray,
    orientations: np.ndarray | None,
    limbs: tuple[np.ndarray, np.ndarray] | None,
) -> Motion:
    n = motion.n_frames
    if targets.shape != (n, 2, 3) or weights.shape != (n, 2):
        raise ParameterError(
            f"targets {targets.shape} and weights {weights.shape} must be ({n}, 2, 3) and ({n}, 2)"
        )
    if orientations is not None and orientations.shape != (n, 2, 3, 3):
        raise ParameterError(f"orientations {orientations.shape} must be ({n}, 2, 3, 3)")
    if limbs is None:
        limbs = _limb_kinematics(motion, chains)
    ends = limbs[0][:, ANKLE_COLUMNS]
    w = np.clip(weights, 0.0, 1.0)
    moved = ends + w[..., None] * (targets - ends)
    active = weights > 0
    if orientations is None:
        active &= norm(moved - ends) > MIN_CORRECTION_M
    else:  # only the limbs that move are solved, so only their ends are turned
        world = limbs[1].copy()
        end_world = world[:, ANKLE_COLUMNS]
        own = mat_to_quat(end_world[active])
        end_world[active] = quat_to_mat(quat_slerp(own, mat_to_quat(orientations[active]), w[active]))
        world[:, ANKLE_COLUMNS] = end_world
        limbs = (limbs[0], world)
    return motion.replace(
        root_translation=motion.root_translation.copy(),
        rotations=_solve(motion, chains, hinges, limbs, moved, active),
    )


def leg_kinematics(motion: Motion) -> tuple[np.ndarray, np.ndarray]:
    """World positions ``[frames, 8, 3]`` and rotations ``[frames, 8, 3, 3]`` of each leg's
    hip parent, hip, knee and ankle (left leg first), by forward kinematics along the legs only."""
    return _limb_kinematics(motion, LEG_CHAINS)


def arm_kinematics(motion: Motion) -> tuple[np.ndarray, np.ndarray]:
    """World positions ``[frames, 8, 3]`` and rotations ``[frames, 8, 3, 3]`` of each arm's
    collar, shoulder, elbow and wrist (left arm first), as :func:`leg_kinematics` the legs'."""
    return _limb_kinematics(motion, ARM_CHAINS)


def _limb_kinematics(
    motion: Motion, chains: tuple[tuple[str, str, str], ...]
) -> tuple[np.ndarray, np.ndarray]:
    skeleton = motion.skeleton
    joints = []
    for names in chains:
        top = skeleton.index(names[0])
        joints += [skeleton.parents[top], top, skeleton.index(names[1]), skeleton.index(names[2])]
    return chain_kinematics(motion, joints)


def solve_legs(
    motion: Motion, legs: tuple[np.ndarray, np.ndarray], targets: np.ndarray, active: np.ndarray
) -> np.ndarray:
    """The motion's rotations with each leg solved onto ``targets [frames, 2, 3]`` where ``active``."""
    return _solve(motion, LEG_CHAINS, _LEG_HINGES, legs, targets, active)


def _solve(
    motion: Motion,
    chains: tuple[tuple[str, str, str], ...],
    hinges: tuple[np.ndarray, ...],
    limbs: tuple[np.ndarray, np.ndarray],
    targets: np.ndarray,
    active: np.ndarray,
) -> np.ndarray:
    rotations = motion.rotations.astype(np.float64, copy=True)
    skeleton = motion.skeleton
    positions, world = limbs
    for limb, (names, hinge) in enumerate(zip(chains, hinges, strict=True)):
        top, middle, end = (skeleton.index(name) for name in names)
        frames = np.nonzero(active[:, limb])[0]
        if frames.size == 0:
            continue
        c = 4 * limb  # the limb's columns: its top joint's parent, the top joint, the middle, the end
        top_local, middle_local, end_local = _two_bone_ik(
            hip_pos=positions[frames, c + 1],
            knee_pos=positions[frames, c + 2],
            ankle_pos=positions[frames, c + 3],
            target=targets[frames, limb],
            parent_world=world[frames, c],
            hip_world=world[frames, c + 1],
            knee_local=aa_to_mat(rotations[frames, middle]),
            ankle_world=world[frames, c + 3],
            hinge_axis=hinge,
        )
        rotations[frames, top] = mat_to_aa(top_local)
        rotations[frames, middle] = mat_to_aa(middle_local)
        rotations[frames, end] = mat_to_aa(end_local)
    return rotations


def _two_bone_ik(
    *,
    hip_pos: np.ndarray,
    knee_pos: np.ndarray,
    ankle_pos: np.ndarray,
    target: np.ndarray,
    parent_world: np.ndarray,
    hip_world: np.ndarray,
    knee_local: np.ndarray,
    ankle_world: np.ndarray,
    hinge_axis: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """New local rotations of hip, knee and ankle, each ``[n, 3, 3]``, putting the ankle on ``target``
    (for an arm: shoulder, elbow and wrist).

    The knee turns about its hinge (``hinge_axis`` in the thigh's frame, its X axis for a leg;
    a positive turn bends it) to the bend whose
    hip-to-ankle distance is the target's (eased near full reach, see
    :func:`_soft_reach`), choosing the flexed solution and at most
    :data:`_MAX_BEND_RAD` from straight; the hip then turns by the
    shortest rotation that aims the ankle at the target; the ankle's local
    rotation is recomputed so its world rotation is ``ankle_world``.
    """
    thigh = knee_pos - hip_pos
    shin = ankle_pos - knee_pos
    axis = hip_world @ hinge_axis  # [n, 3], unit: a rotation of a unit vector
    shin_along = dot(shin, axis)[:, None] * axis
    shin_across = shin - shin_along
    # thigh . shin(delta) = p + a cos(delta) + b sin(delta) for the shin turned by delta.
    p = dot(thigh, shin_along)
    a = dot(thigh, shin_across)
    b = dot(thigh, np.cross(axis, shin_across))
    lengths_sq = dot(thigh, thigh) + dot(shin, shin)
    amplitude = np.maximum(np.hypot(a, b), 1e-12)
    distance = _soft_reach(
        norm(target - hip_pos),
        norm(ankle_pos - hip_pos),
        np.sqrt(lengths_sq + 2.0 * (p + amplitude)),
    )
    wanted = 0.5 * (distance**2 - lengths_sq)
    straight = np.arctan2(b, a)  # the turn that straightens the leg most
    bend = np.arccos(np.clip((wanted - p) / amplitude, -1.0, 1.0))
    delta = straight + np.minimum(bend, _MAX_BEND_RAD)
    hinge = aa_to_mat(hinge_axis * delta[:, None])
    new_knee_local = hinge @ knee_local

    new_shin = _rotate_about(shin, axis, delta)
    reach = thigh + new_shin
    aim = _shortest_rotation(reach, target - hip_pos)
    new_hip_world = aim @ hip_world
    new_hip_local = np.swapaxes(parent_world, 1, 2) @ new_hip_world
    new_knee_world = new_hip_world @ new_knee_local
    new_ankle_local = np.swapaxes(new_knee_world, 1, 2) @ ankle_world
    return new_hip_local, new_knee_local, new_ankle_local


def _soft_reach(distance: np.ndarray, current: np.ndarray, reach: np.ndarray) -> np.ndarray:
    """Hip-to-ankle distance to solve for, easing towards the leg's ``reach``.

    Up to :data:`SOFT_REACH_M` short of ``reach`` (or from the ``current``
    distance, if that is closer to it) the wanted ``distance`` is kept; beyond,
    it approaches ``reach`` exponentially with a continuous slope, so the knee
    does not snap straight as the target passes the leg's length, and an
    unchanged target gives back ``current``.
    """
    start = np.maximum(reach - SOFT_REACH_M, current)
    zone = np.maximum(reach - start, 1e-12)
    eased = reach - zone * np.exp(-np.maximum(distance - start, 0.0) / zone)
    return np.where(distance > start, eased, distance)


def _rotate_about(vectors: np.ndarray, axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rodrigues' rotation of ``vectors`` ``[n, 3]`` about unit ``axis`` ``[n, 3]`` by ``angle`` ``[n]``."""
    cos = np.cos(angle)[:, None]
    sin = np.sin(angle)[:, None]
    along = dot(vectors, axis)[:, None] * axis
    return along + cos * (vectors - along) + sin * np.cross(axis, vectors)


def _shortest_rotation(source: np.ndarray, dest: np.ndarray) -> np.ndarray:
    """Rotation matrices ``[n, 3, 3]`` turning the direction of ``source`` onto that of ``dest``."""
    u = source / norm(source, keepdims=True)
    v = dest / norm(dest, keepdims=True)
    cross = np.cross(u, v)
    sin = norm(cross)
    angle = np.arctan2(sin, dot(u, v))
    unit = cross / np.maximum(sin, 1e-12)[:, None]
    return aa_to_mat(unit * angle[:, None])
