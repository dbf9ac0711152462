"""Foot skating, PFC, jerk and limit violations on motions whose answer is known."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from choreo.metrics.foot_skate import contact_share, foot_skate_ratio
from choreo.metrics.jerk import mean_jerk
from choreo.metrics.limits import limit_violations
from choreo.metrics.pfc import pfc_score
from choreo.motion import REST_PELVIS_HEIGHT_M, SMPL, Motion, joint_positions

FPS = 30.0


def _rest_positions(root: np.ndarray) -> np.ndarray:
    """Joint positions of the rest pose following ``root`` [frames, 3] (toes 1.5 cm up at rest height)."""
    motion = Motion(FPS, root, np.zeros((root.shape[0], 24, 3)))
    return joint_positions(motion)


def _sliding(speed_m_s: float, lift_m: float, n_frames: int = 60) -> np.ndarray:
    root = np.zeros((n_frames, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M + lift_m
    root[:, 2] = speed_m_s * np.arange(n_frames) / FPS
    return _rest_positions(root)


def test_feet_sliding_on_the_ground_skate() -> None:
    assert foot_skate_ratio(_sliding(0.6, 0.0), fps=FPS) == 1.0


@pytest.mark.parametrize(("speed_m_s", "lift_m"), [(0.6, 0.3), (0.0, 0.0), (0.2, 0.0)])
def test_feet_in_the_air_standing_or_creeping_do_not_skate(speed_m_s: float, lift_m: float) -> None:
    assert foot_skate_ratio(_sliding(speed_m_s, lift_m), fps=FPS) == 0.0


def test_skating_share_counts_only_the_sliding_part() -> None:
    root = np.zeros((61, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M
    root[30:, 2] = 0.6 * np.arange(31) / FPS  # still for 30 steps, then slides for 30
    assert foot_skate_ratio(_rest_positions(root), fps=FPS) == pytest.approx(0.5)


def test_contact_share_counts_frames_with_a_foot_on_the_ground() -> None:
    root = np.zeros((40, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M
    root[10:20, 1] += 0.3  # a 30 cm jump for a quarter of the frames
    assert contact_share(_rest_positions(root)) == pytest.approx(0.75)


def test_the_skating_ruler_is_frozen_at_its_own_heights() -> None:
    # The metric keeps its own contact heights (8 cm ankle, 5 cm toe), whatever the clean-up's are.
    from choreo.metrics import foot_skate

    assert (foot_skate.ANKLE_CONTACT_HEIGHT_M, foot_skate.TOE_CONTACT_HEIGHT_M) == (0.08, 0.05)
    assert "from choreo.motion.contacts" not in Path(foot_skate.__file__).read_text()
    assert foot_skate_ratio(_sliding(0.6, 0.03), fps=FPS) == 1.0  # toe joint at 4.5 cm: on the ground
    assert foot_skate_ratio(_sliding(0.6, 0.04), fps=FPS) == 0.0  # toe joint at 5.5 cm: in the air


def test_pfc_is_zero_when_feet_stand_still() -> None:
    positions = _sliding(0.0, 0.0)
    positions[:, 0, 2] += 0.1 * np.sin(np.arange(60) / 5.0)  # the root sways, the feet stay
    assert pfc_score(positions, fps=FPS) == 0.0


def test_pfc_of_a_uniformly_accelerating_glide() -> None:
    accel_m_s2 = 2.0
    t = np.arange(60) / FPS
    root = np.zeros((60, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M
    root[:, 0] = 0.5 * accel_m_s2 * t**2
    # Normalised root acceleration is 1 in every frame; both feet move a*dt^2*(k + 1.5) per frame.
    step_m = accel_m_s2 / FPS**2 * (np.arange(58) + 1.5)
    expected = np.mean(step_m**2) * 1e4
    assert pfc_score(_rest_positions(root), fps=FPS) == pytest.approx(expected, rel=1e-6)


def test_jerk_of_a_cubic_path_is_its_constant() -> None:
    jerk_m_s3 = 7.0
    t = np.arange(40) / FPS
    positions = np.zeros((40, 24, 3))
    positions[..., 1] = (jerk_m_s3 * t**3 / 6)[:, None]
    assert mean_jerk(positions, fps=FPS) == pytest.approx(jerk_m_s3, rel=1e-6)
    positions[..., 1] = (2.0 * t)[:, None]
    assert mean_jerk(positions, fps=FPS) == pytest.approx(0.0, abs=1e-6)


def test_limit_violations_count_frames_and_joints() -> None:
    rotations = np.zeros((10, 24, 3))
    rotations[:4, SMPL.index("right_knee"), 0] = -1.0  # knee bent backwards in 4 frames
    assert limit_violations(Motion(FPS, np.zeros((10, 3)), rotations)) == 4
