"""Feet on the floor: sunk or floating motions are moved onto it, jumps keep their height."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.motion import REST_PELVIS_HEIGHT_M, SMPL, Motion, joint_positions
from choreo.motion.contacts import foot_point_indices, foot_positions
from choreo.postprocess import ground_feet
from choreo.postprocess.ground import align_floor, floor_offset_m, sole_heights_m


def test_rest_pose_stands_on_the_floor(standing: Callable[..., Motion]) -> None:
    np.testing.assert_allclose(sole_heights_m(standing(1)).min(), 0.0, atol=1e-12)


@pytest.mark.parametrize("offset_m", [-0.10, 0.20])
def test_sunk_or_floating_motion_is_moved_onto_the_floor(
    standing: Callable[..., Motion], offset_m: float
) -> None:
    motion = standing(60, height_m=REST_PELVIS_HEIGHT_M + offset_m)
    before = motion.root_translation.copy()
    grounded = ground_feet(motion)
    np.testing.assert_array_equal(motion.root_translation, before)  # input untouched
    np.testing.assert_allclose(grounded.root_translation[:, 1], REST_PELVIS_HEIGHT_M, atol=1e-9)
    np.testing.assert_allclose(sole_heights_m(grounded).min(axis=1), 0.0, atol=1e-9)
    toe = joint_positions(grounded)[:, SMPL.index("left_foot"), 1]
    np.testing.assert_allclose(toe, toe[0])
    assert 0.0 < toe[0] < 0.05


def test_jump_keeps_its_height_and_contacts_touch(standing: Callable[..., Motion]) -> None:
    motion = standing(120, height_m=REST_PELVIS_HEIGHT_M - 0.10)
    t = np.arange(120)
    flight = (t >= 40) & (t < 70)
    jump_m = np.where(flight, 0.4 * np.sin(np.pi * (t - 40) / 30), 0.0)
    root = motion.root_translation.copy()
    root[:, 1] += jump_m
    grounded = ground_feet(motion.replace(root_translation=root))
    lowest = sole_heights_m(grounded).min(axis=1)
    np.testing.assert_allclose(lowest[~flight], 0.0, atol=1e-9)
    np.testing.assert_allclose(lowest[flight], jump_m[flight], atol=1e-9)


def test_never_below_the_floor_even_in_flight(standing: Callable[..., Motion]) -> None:
    # Contacts at both ends sit at different depths; the interpolated correction
    # between them would leave a dip in the middle underground without the floor rule.
    motion = standing(90)
    root = motion.root_translation.copy()
    root[:, 1] += np.linspace(0.0, 0.3, 90)
    root[30:60, 1] -= 0.25
    grounded = ground_feet(motion.replace(root_translation=root))
    assert sole_heights_m(grounded).min() >= -1e-12


def test_bad_speed_is_named(standing: Callable[..., Motion]) -> None:
    with pytest.raises(ParameterError, match="contact_speed_m_s"):
        ground_feet(standing(5), contact_speed_m_s=0.0)


def test_align_floor_moves_the_whole_motion_by_one_constant(standing: Callable[..., Motion]) -> None:
    motion = standing(90, height_m=REST_PELVIS_HEIGHT_M + 0.07)
    root = motion.root_translation.copy()
    root[40:50, 1] += 0.3  # a jump
    aligned = align_floor(motion.replace(root_translation=root))
    np.testing.assert_allclose(aligned.root_translation[:, 1] - root[:, 1], -0.07, atol=1e-9)
    assert floor_offset_m(aligned) == pytest.approx(0.0, abs=1e-9)


def test_foot_positions_match_full_forward_kinematics(rng: np.random.Generator) -> None:
    motion = Motion(30.0, rng.normal(size=(20, 3)), rng.normal(scale=0.6, size=(20, 24, 3)))
    full = joint_positions(motion)[:, foot_point_indices(SMPL)]
    np.testing.assert_allclose(foot_positions(motion), full, atol=1e-12)


def test_no_joint_goes_below_the_floor_upside_down(standing: Callable[..., Motion]) -> None:
    # A headstand: the root turned upside down, feet in the air, the head lowest.
    motion = standing(30)
    rotations = motion.rotations.copy()
    rotations[:, 0] = [np.pi, 0.0, 0.0]
    grounded = ground_feet(motion.replace(rotations=rotations))
    heights = joint_positions(grounded)[..., 1]
    np.testing.assert_allclose(heights.min(axis=1), 0.0, atol=1e-9)
    assert np.argmin(heights[0]) == SMPL.index("head")


def test_smoothing_keeps_foot_jitter_out_of_the_body(
    standing: Callable[..., Motion], rng: np.random.Generator
) -> None:
    # Standing, with both knees trembling: the feet bob against the pelvis by up to a
    # centimetre or two, frame to frame. Snapping every frame passes that to the body.
    motion = standing(120, height_m=REST_PELVIS_HEIGHT_M - 0.05)
    rotations = motion.rotations.copy()
    bend = np.abs(rng.normal(scale=np.deg2rad(10.0), size=120))
    rotations[:, SMPL.index("left_knee"), 0] = bend
    rotations[:, SMPL.index("right_knee"), 0] = bend
    trembling = motion.replace(rotations=rotations)
    snapped = ground_feet(trembling, smooth_cutoff_hz=None)
    smooth = ground_feet(trembling)
    assert np.mean(sole_heights_m(snapped).min(axis=1) < 1e-9) > 0.5  # contact frames exactly on 0
    assert sole_heights_m(smooth).min() >= -1e-12
    assert np.median(sole_heights_m(smooth).min(axis=1)) < 0.005

    def root_jerk(m: Motion) -> float:
        return float(np.abs(np.diff(m.root_translation[:, 1], n=3)).mean())

    assert root_jerk(smooth) < 0.5 * root_jerk(snapped)


def test_floor_is_where_planted_feet_stand_not_where_they_sink(standing: Callable[..., Motion]) -> None:
    # Planted feet that sink 10 cm in a fifth of the frames: the floor stays where they
    # stand the rest of the time, and the sinking frames are lifted onto it.
    motion = standing(100)
    root = motion.root_translation.copy()
    root[::5, 1] -= 0.10
    sinking = motion.replace(root_translation=root)
    assert floor_offset_m(sinking) == pytest.approx(0.0, abs=1e-9)
    grounded = ground_feet(sinking, smooth_cutoff_hz=None)
    np.testing.assert_allclose(sole_heights_m(grounded).min(axis=1), 0.0, atol=1e-9)
