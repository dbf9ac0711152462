"""Knees kept off straight: constructed legs whose bends are known."""

from __future__ import annotations

import numpy as np
import pytest
from limb_checks import bend_angles_deg

from choreo.motion import REST_PELVIS_HEIGHT_M, SMPL, Motion
from choreo.postprocess import postprocess
from choreo.postprocess.ground import sole_heights_m
from choreo.postprocess.joint_limits import count_limit_violations
from choreo.postprocess.straight_knees import (
    MIN_BEND_DEG,
    SOFT_FROM_DEG,
    soft_floor,
    soften_straight_knees,
)

_STRAIGHT_DEG = 175.0  # the bench's straight knee (bench/foot_locking.py)


def _knee_angles(motion: Motion, side: str) -> np.ndarray:
    """The hip-knee-ankle angle in degrees per frame (180: straight)."""
    return bend_angles_deg(motion, "hip", "knee", "ankle")[:, ("left", "right").index(side)]


_ACROSS_RAD = 0.1
"""A turn of the shin about the front-back axis that lines it up with the thigh (SMPL's rest pose
bends the knees 8 degrees sideways, so the hinge alone never makes a leg straight)."""


def _legs(flexion: np.ndarray, across: np.ndarray | float = _ACROSS_RAD, fps: float = 30.0) -> Motion:
    """The rest pose with both knees turned by ``flexion`` radians about the hinge and ``across``
    radians about the front-back axis (outwards, mirrored on the right leg), in the air."""
    n = flexion.size
    rotations = np.zeros((n, 24, 3))
    for side, sign in (("left", 1.0), ("right", -1.0)):
        rotations[:, SMPL.index(f"{side}_knee"), 0] = flexion
        rotations[:, SMPL.index(f"{side}_knee"), 2] = sign * np.asarray(across)
    root = np.zeros((n, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M + 0.3  # in the air: nothing to hold
    return Motion(fps, root, rotations)


def test_the_soft_floor_is_the_identity_above_and_smooth_into_the_floor() -> None:
    bends = np.linspace(-20.0, 40.0, 6001)
    out = soft_floor(bends)
    above = bends >= SOFT_FROM_DEG
    np.testing.assert_array_equal(out[above], bends[above])
    assert out.min() == pytest.approx(MIN_BEND_DEG) and np.all(out >= MIN_BEND_DEG)
    slope = np.diff(out) / np.diff(bends)
    assert np.all(np.diff(out) >= 0.0) and np.abs(np.diff(slope)).max() < 0.01  # no kink


@pytest.mark.parametrize("fps", [24.0, 30.0, 60.0])
def test_a_leg_swinging_through_straight_never_locks_and_bent_knees_stay_exactly(fps: float) -> None:
    # Hyperextended 10 degrees to bent 60, and back, swinging across the hinge through straight.
    t = np.linspace(0.0, 1.0, int(round(2 * fps)))
    flexion = np.radians(-10.0 + 70.0 * np.sin(np.pi * t))
    motion = _legs(flexion, _ACROSS_RAD * (0.5 + np.cos(3.0 * t)), fps)
    out = soften_straight_knees(motion)
    for side in ("left", "right"):
        before, after = _knee_angles(motion, side), _knee_angles(out, side)
        assert before.max() > _STRAIGHT_DEG and after.max() < _STRAIGHT_DEG
        bent = before < 180.0 - SOFT_FROM_DEG - 4.0  # well inside the identity, whatever the swing
        assert bent.sum() > t.size // 3
        np.testing.assert_allclose(after[bent], before[bent], atol=1e-9)
    np.testing.assert_array_equal(out.root_translation, motion.root_translation)
    untouched = [j for j in range(24) if SMPL.names[j] not in ("left_knee", "right_knee")]
    np.testing.assert_array_equal(out.rotations[:, untouched], motion.rotations[:, untouched])
    # The bend changes with no jump: the angle's frame-to-frame step stays like the motion's own.
    assert (
        np.abs(np.diff(_knee_angles(out, "left"))).max()
        <= 1.01 * np.abs(np.diff(_knee_angles(motion, "left"))).max()
    )


def test_the_chain_leaves_no_knee_straight_and_keeps_the_limits() -> None:
    # Straight legs standing on the floor (hyperextended 5 degrees, lined up across): after the chain
    # the knees are bent and every joint is in range, the feet still on the floor.
    n = 45
    motion = _legs(np.full(n, np.radians(-5.0)))
    standing = motion.replace(root_translation=motion.root_translation - [0.0, 0.3, 0.0])
    out = postprocess(standing, smooth=False)
    assert _knee_angles(standing, "left").max() > _STRAIGHT_DEG
    for side in ("left", "right"):
        assert _knee_angles(out, side).max() < _STRAIGHT_DEG
    assert count_limit_violations(out) == 0
    assert np.abs(sole_heights_m(out).min(axis=1)).max() < 0.01
    off = postprocess(standing, smooth=False, soft_knees=False, lock=False)
    assert _knee_angles(off, "left").max() > _STRAIGHT_DEG
