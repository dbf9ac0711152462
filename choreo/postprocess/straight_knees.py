"""Knees that never lock straight: every knee kept a few degrees bent, eased so nothing pops.

A dancer's knee is never quite straight, even in a kick: a locked knee reads as a
stiff, puppet-like leg, and the mocap the dances come from shows it (issue 21: the held-out
breakdance clips have no run of frames with a knee straighter than 175 degrees, while the
retimed training sources and the unlocked dances have some 2 to 3 a minute). Each knee's
bend (the angle between thigh and shin) is mapped through a soft floor: bends of
:data:`SOFT_FROM_DEG` or more are left exactly as they are, a straighter (or hyperextended)
knee is bent about its hinge towards :data:`MIN_BEND_DEG`, along a curve whose slope has no
jump, so a leg swinging through straight slows into the floor rather than stopping at it.
"""

from __future__ import annotations

import numpy as np

from choreo.motion.leg_ik import KNEE_HINGE_AXIS
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_mat, mat_to_aa

__all__ = ["MIN_BEND_DEG", "SOFT_FROM_DEG", "soften_straight_knees", "soft_floor"]

MIN_BEND_DEG = 6.0
"""The least a knee is bent in its hinge's plane, degrees: whatever its swing across the hinge, the
hip-knee-ankle angle is then under 174.1 degrees (the SMPL rest pose's is 5.7 in that plane, 172
between the bones)."""

SOFT_FROM_DEG = 8.0
"""Knees bent this much or more are left as they are; between the floor and it the bend eases in."""

_LEGS = (("left_knee", "left_ankle"), ("right_knee", "right_ankle"))


def soft_floor(bend_deg: np.ndarray) -> np.ndarray:
    """The bend a knee is given for its signed bend ``bend_deg`` (negative: hyperextended).

    The identity from :data:`SOFT_FROM_DEG` up, :data:`MIN_BEND_DEG` at and below
    ``2 * MIN_BEND_DEG - SOFT_FROM_DEG``, and a parabola between whose value and slope meet
    both ends: a C1 curve, never under the floor.
    """
    low = 2.0 * MIN_BEND_DEG - SOFT_FROM_DEG
    bend = np.asarray(bend_deg, dtype=np.float64)
    eased = MIN_BEND_DEG + (np.clip(bend, low, None) - low) ** 2 / (2.0 * (SOFT_FROM_DEG - low))
    return np.where(bend >= SOFT_FROM_DEG, bend, eased)


def soften_straight_knees(motion: Motion) -> Motion:
    """Bend every knee straighter than :data:`SOFT_FROM_DEG` onto the soft floor (:func:`soft_floor`).

    The bend is the angle between the thigh (the knee's rest offset from the hip) and the
    shin (the ankle's offset turned by the knee) in the plane the hinge turns the shin in,
    negative where the knee is hyperextended; the knee is turned about the hinge, in its
    parent's frame, by the amount that gives the shin the new bend. Only the knees change: the
    ankle moves with the shin, so this runs before the floor and the locks, which place the feet
    (and again inside the locks, after the passes that lift swinging feet).

    Returns
    -------
    Motion
        A new motion with the same root and every other rotation; a motion whose knees are
        all bent :data:`SOFT_FROM_DEG` or more comes back with the same numbers.
    """
    rotations = motion.rotations.astype(np.float64, copy=True)
    skeleton = motion.skeleton
    for knee_name, ankle_name in _LEGS:
        knee = skeleton.index(knee_name)
        thigh = skeleton.offsets[knee] / np.linalg.norm(skeleton.offsets[knee])
        shin_rest = skeleton.offsets[skeleton.index(ankle_name)]
        matrices = aa_to_mat(rotations[:, knee])
        shin = matrices @ (shin_rest / np.linalg.norm(shin_rest))  # [frames, 3]
        turn = _hinge_turn(thigh, shin)
        bent = np.abs(turn) > 0.0
        if not bent.any():
            continue
        hinge = aa_to_mat(np.outer(turn[bent], KNEE_HINGE_AXIS))
        rotations[bent, knee] = mat_to_aa(hinge @ matrices[bent])
    return motion.replace(root_translation=motion.root_translation.copy(), rotations=rotations)


def _hinge_turn(thigh: np.ndarray, shin: np.ndarray) -> np.ndarray:
    """The turn about the hinge (radians, ``[frames]``) that puts each ``shin`` on the soft floor.

    The bend is read in the hinge's plane (thigh and shin with their parts along the hinge
    taken out), where a turn about the hinge adds to it exactly. The bend between the bones
    themselves is never much less: with the thigh's rest part along the hinge (0.09 of its
    length for SMPL), a bend of 6 degrees in the plane is one of 5.97 at least between them.
    """
    across = thigh - (thigh @ KNEE_HINGE_AXIS) * KNEE_HINGE_AXIS
    flexed = np.cross(KNEE_HINGE_AXIS, across)  # where a shin turned a right angle forwards would point
    bend = np.degrees(np.arctan2(shin @ flexed, shin @ across))
    return np.radians(soft_floor(bend) - bend)
