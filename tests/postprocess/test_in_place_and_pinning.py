"""in_place drops horizontal root travel; pinning stops feet sliding on the ground only."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.motion import Motion, joint_positions
from choreo.motion.contacts import foot_point_indices, horizontal_speed_m_s
from choreo.postprocess import in_place, pin_feet


def test_in_place_zeroes_horizontal_root_motion_and_keeps_height(rng: np.random.Generator) -> None:
    motion = Motion(30.0, rng.normal(size=(40, 3)), rng.normal(scale=0.4, size=(40, 24, 3)))
    before = motion.root_translation.copy()
    out = in_place(motion)
    np.testing.assert_array_equal(motion.root_translation, before)
    np.testing.assert_array_equal(out.root_translation[:, [0, 2]], 0.0)
    np.testing.assert_array_equal(out.root_translation[:, 1], before[:, 1])
    np.testing.assert_array_equal(out.rotations, motion.rotations)


def _gliding(standing: Callable[..., Motion], lift_m: float) -> Motion:
    """The rest pose sliding forwards at 0.6 m/s, ``lift_m`` above the floor."""
    motion = standing(60)
    root = motion.root_translation.copy()
    root[:, 2] = 0.6 * np.arange(60) / 30.0
    root[:, 1] += lift_m
    return motion.replace(root_translation=root)


def _foot_speed(motion: Motion) -> np.ndarray:
    feet = joint_positions(motion)[:, foot_point_indices(motion.skeleton)]
    return horizontal_speed_m_s(feet, motion.fps)


def test_feet_sliding_on_the_ground_are_pinned(standing: Callable[..., Motion]) -> None:
    motion = _gliding(standing, 0.0)
    assert _foot_speed(motion).min() == pytest.approx(0.6)
    pinned = pin_feet(motion, smooth_cutoff_hz=None)
    np.testing.assert_allclose(_foot_speed(pinned), 0.0, atol=1e-9)
    np.testing.assert_array_equal(pinned.root_translation[:, 1], motion.root_translation[:, 1])
    half = pin_feet(motion, strength=0.5, smooth_cutoff_hz=None)
    np.testing.assert_allclose(_foot_speed(half), 0.3, atol=1e-9)
    # The default smooths the correction: a steady glide is still cancelled to under 1 mm/s.
    np.testing.assert_allclose(_foot_speed(pin_feet(motion)), 0.0, atol=1e-3)


def test_feet_in_the_air_are_left_alone(standing: Callable[..., Motion]) -> None:
    motion = _gliding(standing, 0.3)
    np.testing.assert_array_equal(pin_feet(motion).root_translation, motion.root_translation)


def test_bad_strength_is_named(standing: Callable[..., Motion]) -> None:
    with pytest.raises(ParameterError, match="strength"):
        pin_feet(standing(3), strength=1.5)
