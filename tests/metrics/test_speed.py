"""Mean joint speed: known answers from a still and a walking body, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.metrics.speed import mean_joint_speed
from choreo.motion import Motion, joint_positions


def test_a_still_body_has_no_speed_and_a_gliding_one_its_own() -> None:
    n = 31
    still = Motion(fps=30, root_translation=np.zeros((n, 3)), rotations=np.zeros((n, 24, 3)))
    assert mean_joint_speed(joint_positions(still), fps=30) == pytest.approx(0.0)
    walking = np.zeros((n, 3))
    walking[:, 0] = np.arange(n) / 30.0 * 1.5  # 1.5 m/s along x, no rotation: every joint moves at 1.5 m/s
    moving = Motion(fps=30, root_translation=walking, rotations=np.zeros((n, 24, 3)))
    assert mean_joint_speed(joint_positions(moving), fps=30) == pytest.approx(1.5)
    assert mean_joint_speed(joint_positions(moving), fps=60) == pytest.approx(3.0)


def test_one_frame_has_no_speed_and_bad_input_is_named() -> None:
    assert mean_joint_speed(np.zeros((1, 24, 3)), fps=30) == 0.0
    with pytest.raises(ParameterError, match="fps"):
        mean_joint_speed(np.zeros((4, 24, 3)), fps=0)
    with pytest.raises(ParameterError, match="NaN"):
        mean_joint_speed(np.full((4, 24, 3), np.nan), fps=30)
