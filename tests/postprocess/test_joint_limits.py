"""Joint limits: impossible bends are clamped, possible poses kept exactly, violations counted."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.motion import SMPL, Motion, joint_positions
from choreo.motion.rotations import aa_to_quat
from choreo.postprocess import SMPL_JOINT_LIMITS, JointLimit, clamp_joint_limits, count_limit_violations
from choreo.postprocess.joint_limits import limit_violation_mask, swing_twist

FPS = 30.0


def _pose(joint: str, aa_deg: tuple[float, float, float], n_frames: int = 3) -> Motion:
    rotations = np.zeros((n_frames, 24, 3))
    rotations[:, SMPL.index(joint)] = np.deg2rad(aa_deg)
    return Motion(FPS, np.zeros((n_frames, 3)), rotations)


def test_knee_bent_backwards_is_clamped() -> None:
    knee, ankle = SMPL.index("left_knee"), SMPL.index("left_ankle")
    backwards = _pose("left_knee", (-40.0, 0.0, 0.0))
    assert count_limit_violations(backwards) == 3
    assert limit_violation_mask(backwards)[:, knee].all()
    clamped = clamp_joint_limits(backwards)
    assert count_limit_violations(clamped) == 0
    limit = SMPL_JOINT_LIMITS["left_knee"]
    # The knee ends at the bound of its range: a 5-degree hyperextension, about the hinge.
    np.testing.assert_allclose(clamped.rotations[:, knee], [[limit.swing1_min_rad, 0, 0]] * 3, atol=0.01)
    # The shin no longer points forwards (+Z) of the knee by more than the 5-degree allowance.
    pos = joint_positions(clamped)
    shin = pos[0, ankle] - pos[0, knee]
    assert shin[2] / np.linalg.norm(shin) < np.sin(np.deg2rad(5.0)) + 1e-6


@pytest.mark.parametrize("side", ["left", "right"])
def test_elbow_bent_backwards_is_clamped(side: str) -> None:
    # Bending the forearm 60 degrees backwards (towards -Z, behind the body).
    motion = _pose(f"{side}_elbow", (0, 60 if side == "left" else -60, 0))
    elbow, wrist = SMPL.index(f"{side}_elbow"), SMPL.index(f"{side}_wrist")
    forearm = np.diff(joint_positions(motion)[0, [elbow, wrist]], axis=0)[0]
    assert forearm[2] / np.linalg.norm(forearm) < -0.8
    assert count_limit_violations(motion) == 3
    clamped = clamp_joint_limits(motion)
    assert count_limit_violations(clamped) == 0
    forearm = np.diff(joint_positions(clamped)[0, [elbow, wrist]], axis=0)[0]
    assert forearm[2] / np.linalg.norm(forearm) > -np.sin(np.deg2rad(6.0))


def test_natural_bends_are_kept_exactly() -> None:
    rotations = np.zeros((1, 24, 3))
    rotations[0, SMPL.index("left_knee")] = np.deg2rad([90, 0, 0])
    rotations[0, SMPL.index("right_knee")] = np.deg2rad([120, 5, 0])
    rotations[0, SMPL.index("left_elbow")] = np.deg2rad([0, -100, 0])
    rotations[0, SMPL.index("right_elbow")] = np.deg2rad([0, 100, 0])
    rotations[0, SMPL.index("left_hip")] = np.deg2rad([-90, 0, 20])
    rotations[0, SMPL.index("neck")] = np.deg2rad([0, 45, 0])
    motion = Motion(FPS, np.zeros((1, 3)), rotations)
    assert count_limit_violations(motion) == 0
    np.testing.assert_array_equal(clamp_joint_limits(motion).rotations, motion.rotations)


def test_head_turned_around_is_a_violation() -> None:
    assert count_limit_violations(_pose("head", (0, 170, 0))) == 3


def test_random_rotations_end_inside_limits(rng: np.random.Generator) -> None:
    motion = Motion(FPS, rng.normal(size=(200, 3)), rng.normal(scale=1.3, size=(200, 24, 3)))
    before = motion.rotations.copy()
    assert count_limit_violations(motion) > 100
    clamped = clamp_joint_limits(motion)
    np.testing.assert_array_equal(motion.rotations, before)  # input untouched
    assert count_limit_violations(clamped) == 0
    np.testing.assert_allclose(clamped.rotations[:, 0], motion.rotations[:, 0])  # pelvis is free
    np.testing.assert_array_equal(clamped.root_translation, motion.root_translation)
    again = clamp_joint_limits(clamped)
    np.testing.assert_allclose(again.rotations, clamped.rotations, atol=1e-9)


def test_swing_twist_rebuilds_the_rotation(rng: np.random.Generator) -> None:
    twist_axis = np.array([0.0, -1.0, 0.0])
    e1 = np.array([1.0, 0.0, 0.0])
    e2 = np.cross(twist_axis, e1)
    aa = rng.normal(scale=1.0, size=(100, 3))
    params = swing_twist(aa, twist_axis, e1, e2)
    limit = JointLimit(-np.pi, np.pi, -np.pi, np.pi, -np.pi, np.pi)
    motion = Motion(FPS, np.zeros((100, 3)), np.zeros((100, 24, 3)))
    assert count_limit_violations(motion, limits={"left_knee": limit}) == 0
    from choreo.motion.rotations import quat_multiply

    half = params[:, 0:1] / 2
    twist_q = np.concatenate([np.sin(half) * twist_axis, np.cos(half)], axis=-1)
    swing_q = aa_to_quat(params[:, 1:2] * e1 + params[:, 2:3] * e2)
    rebuilt = quat_multiply(swing_q, twist_q)
    dots = np.abs(np.sum(rebuilt * aa_to_quat(aa), axis=-1))
    np.testing.assert_allclose(dots, 1.0, atol=1e-9)


def test_bad_limits_are_named() -> None:
    with pytest.raises(ParameterError, match="twist"):
        JointLimit(0.5, -0.5, 0, 0, 0, 0)
    with pytest.raises(ParameterError, match="left_kne"):
        clamp_joint_limits(_pose("left_knee", (0, 0, 0)), limits={"left_kne": SMPL_JOINT_LIMITS["left_knee"]})
