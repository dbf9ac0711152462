"""Hands that hold the floor: a hand in contact (a freeze, a handstand, a plant) stays where it touched down.

The hands' counterpart of :mod:`.foot_locking`, run after it on the finished
legs and pelvis: while a hand is in contact
(:class:`~choreo.contracts.contacts.ContactTrack`'s hand columns) it is held at
the point where it touched down (not below the floor), the wrist keeping its
own rotation, and the arm reaches it with the two-bone IK
(:func:`choreo.motion.leg_ik.place_wrists`, whose soft reach keeps the elbow
from snapping straight). Locks are reached and let go of over
:data:`~.foot_locking.EASE_S` as the feet's are (:mod:`.lock_schedule`), and a
lock further out of the arm's reach than :data:`~.foot_locking.GIVE_WAY_M` gives
way rather than the elbow going straight: the body is not moved for a hand
(the legs and the root stay as the feet's locks left them). The solved arms are
clamped into their joint limits, as the legs are after theirs: the IK turns the
shoulder, elbow and wrist with no regard for them, and a wrist that keeps its
world rotation while the forearm swings under it can bend past its range.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from choreo.contracts.contacts import ContactTrack
from choreo.motion.contacts import UP_AXIS
from choreo.motion.leg_ik import ANKLE_COLUMNS, arm_kinematics, place_wrists
from choreo.motion.motion import Motion
from choreo.postprocess.contacts import body_scale
from choreo.postprocess.foot_locking import EASE_S, GIVE_WAY_M, REACH_MARGIN_M
from choreo.postprocess.joint_limits import SMPL_JOINT_LIMITS, JointLimit, clamp_joint_limits
from choreo.postprocess.lock_schedule import (
    Lock,
    contact_runs,
    require_matching_contacts,
    schedule_locks,
    smoothstep,
)

__all__ = ["lock_hands"]

_HAND_NAMES = ("left_hand", "right_hand")
_HAND_COLUMNS = (4, 5)
_ARM_JOINTS = frozenset(
    f"{side}_{joint}" for side in ("left", "right") for joint in ("shoulder", "elbow", "wrist")
)


def lock_hands(
    motion: Motion, contacts: ContactTrack, *, joint_limits: Mapping[str, JointLimit] | None = None
) -> Motion:
    """Hold every hand in contact at its touch-down point by bending the arm.

    Parameters
    ----------
    motion : the grounded motion (floor at y = 0), its feet already locked; left untouched
    contacts : its contacts, at its fps and frame count
    joint_limits : joint name to limit (default: the SMPL table); the solved arms'
        shoulders, elbows and wrists are clamped into them, the other joints are not touched

    Returns
    -------
    Motion
        A new motion with new shoulder, elbow and wrist rotations where a hand is
        held or eased (within their limits); the root and every other joint are unchanged.

    Raises
    ------
    ParameterError
        If the contacts do not match the motion's frames and fps.
    """
    require_matching_contacts(motion, contacts)
    hands = contacts.frames[:, list(_HAND_COLUMNS)]
    if motion.n_frames < 2 or not hands.any():
        return motion.replace(
            root_translation=motion.root_translation.copy(), rotations=motion.rotations.astype(np.float64)
        )
    skeleton = motion.skeleton
    offsets = np.stack([skeleton.offsets[skeleton.index(name)] for name in _HAND_NAMES])  # wrist to hand
    positions, world = arm_kinematics(motion)
    wrists, own = positions[:, ANKLE_COLUMNS], world[:, ANKLE_COLUMNS]
    ease = max(1, int(round(EASE_S * motion.fps)))
    targets, weights = wrists.copy(), np.zeros((motion.n_frames, 2))
    for arm in range(2):
        runs = contact_runs(hands[:, arm])
        if not runs:
            continue
        locks = []
        for start, _ in runs:
            point = wrists[start, arm] + own[start, arm] @ offsets[arm]
            point[UP_AXIS] = max(point[UP_AXIS], 0.0)
            locks.append(Lock(point, offsets[arm], None))
        plan = schedule_locks(runs, locks, wrists[:, arm], own[:, arm], ease)
        targets[:, arm], weights[:, arm] = plan.targets, plan.weights
    short = _out_of_reach(positions, targets, weights)
    weights = weights * (1.0 - smoothstep(np.clip(short / (GIVE_WAY_M * body_scale(skeleton)), 0.0, 1.0)))
    table = SMPL_JOINT_LIMITS if joint_limits is None else joint_limits
    arm_limits = {name: limit for name, limit in table.items() if name in _ARM_JOINTS}
    return clamp_joint_limits(place_wrists(motion, targets, weights), limits=arm_limits)


def _out_of_reach(positions: np.ndarray, targets: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """How far each arm's weighted wrist target lies beyond its comfortable reach, ``[frames, 2]`` metres."""
    out = np.zeros(weights.shape)
    for arm in range(2):
        c = 4 * arm
        shoulder, elbow, wrist = positions[:, c + 1], positions[:, c + 2], positions[:, c + 3]
        reach = np.linalg.norm(elbow - shoulder, axis=1) + np.linalg.norm(wrist - elbow, axis=1)
        reach -= REACH_MARGIN_M
        wanted = wrist + weights[:, arm, None] * (targets[:, arm] - wrist)
        out[:, arm] = np.maximum(np.linalg.norm(wanted - shoulder, axis=1) - reach, 0.0)
    return out
