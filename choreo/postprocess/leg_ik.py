"""Planted feet held on the floor by bending the legs: analytic two-bone IK per leg.

The model's raw dance bobs the whole body up and down with nearly straight
legs, so planted feet sink into the floor or float above it. Moving the root
(:mod:`.ground`) fixes the feet but removes the bob. This step instead moves
each planted ankle vertically onto the floor and solves the hip-knee-ankle
chain for it: the knee bends or straightens about its hinge axis until the
hip-to-ankle distance is right, the hip is re-aimed at the target, and the
ankle's world orientation is kept. A leg that would have to stretch past
straight stops at its reach; the rest is left to :func:`~.ground.ground_feet`,
which lowers the pelvis. The two-bone solver is :mod:`choreo.motion.leg_ik`.
"""

from __future__ import annotations

import numpy as np

from choreo.errors import ParameterError
from choreo.motion.contacts import UP_AXIS, foot_positions, horizontal_speed_m_s, sole_clearance_m
from choreo.motion.leg_ik import ANKLE_COLUMNS, MIN_CORRECTION_M, leg_kinematics, solve_legs
from choreo.motion.motion import Motion
from choreo.postprocess.filtering import DEFAULT_ROOT_CUTOFF_HZ, lowpass_signal
from choreo.postprocess.ground import GROUND_CONTACT_SPEED_M_S, floor_offset_m

__all__ = ["solve_leg_ik"]

PLANTED_HEIGHT_M = 0.10
"""A slow foot whose lowest sole is at most this far above the floor is fully planted."""

LIFTED_HEIGHT_M = 0.15
"""A foot whose lowest sole is this far above the floor or more is in the air: left alone."""


def solve_leg_ik(
    motion: Motion,
    *,
    contact_speed_m_s: float = GROUND_CONTACT_SPEED_M_S,
    smooth_cutoff_hz: float | None = DEFAULT_ROOT_CUTOFF_HZ,
) -> Motion:
    """Bend or straighten the legs so that planted feet rest on the motion's floor.

    Parameters
    ----------
    motion : the motion; left untouched
    contact_speed_m_s : float > 0, a foot whose slower point moves faster than
        this (horizontally) is swinging, not planted
    smooth_cutoff_hz : float > 0, zero-phase low-pass cut-off of each foot's
        vertical correction (the root's by default), so the knees do not pop when a
        foot lands or lifts; ``None`` leaves it unsmoothed

    Returns
    -------
    Motion
        A new motion with new hip, knee and ankle rotations; the root, bone lengths
        and every other joint are unchanged. The floor is the one
        :func:`~.ground.floor_offset_m` finds. A planted foot (slow and with its
        lowest sole below :data:`PLANTED_HEIGHT_M`, fading out up to
        :data:`LIFTED_HEIGHT_M`) gets its ankle target moved vertically by the
        distance from its lowest sole to that floor, horizontally unchanged. The
        ankle keeps its world orientation, so the foot does not tilt. A target
        beyond the leg's reach is met as closely as a straight leg allows.

    Raises
    ------
    ParameterError
        If ``contact_speed_m_s`` is not positive.
    """
    if not np.isfinite(contact_speed_m_s) or contact_speed_m_s <= 0:
        raise ParameterError(f"contact_speed_m_s must be positive, got {contact_speed_m_s}")
    if motion.n_frames < 2:
        return motion.replace(
            root_translation=motion.root_translation.copy(), rotations=motion.rotations.astype(np.float64)
        )

    corrections = _foot_corrections_m(motion, contact_speed_m_s)
    if smooth_cutoff_hz is not None:
        corrections = lowpass_signal(corrections, smooth_cutoff_hz, motion.fps)
    legs = leg_kinematics(motion)
    targets = legs[0][:, ANKLE_COLUMNS].copy()
    targets[..., UP_AXIS] += corrections
    active = np.abs(corrections) > MIN_CORRECTION_M
    return motion.replace(
        root_translation=motion.root_translation.copy(),
        rotations=solve_legs(motion, legs, targets, active),
    )


def _foot_corrections_m(motion: Motion, contact_speed_m_s: float) -> np.ndarray:
    """Vertical ankle correction of each leg, ``[frames, 2]`` metres, before smoothing."""
    points = foot_positions(motion)  # [frames, 4, 3]
    soles = points[..., UP_AXIS] - sole_clearance_m(motion.skeleton) - floor_offset_m(motion)
    speed = horizontal_speed_m_s(points, motion.fps)
    speed = np.concatenate([speed, speed[-1:]], axis=0)
    lowest = soles.reshape(-1, 2, 2).min(axis=2)  # [frames, leg]
    slowest = speed.reshape(-1, 2, 2).min(axis=2)
    planted = np.clip((LIFTED_HEIGHT_M - lowest) / (LIFTED_HEIGHT_M - PLANTED_HEIGHT_M), 0.0, 1.0)
    planted = np.where(slowest < contact_speed_m_s, planted, 0.0)
    return -lowest * planted
