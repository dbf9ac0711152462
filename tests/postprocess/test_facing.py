"""Turning a dance to face +Z keeps the dance and fixes its heading."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.motion import REST_PELVIS_HEIGHT_M, Motion, joint_positions
from choreo.postprocess.facing import face_front, mean_heading_rad


def _walking_sideways(heading_rad: float, n: int = 60) -> Motion:
    rotations = np.zeros((n, 24, 3))
    rotations[:, 0, 1] = heading_rad + 0.2 * np.sin(np.arange(n) / 5)  # sways around its heading
    rotations[:, 4, 0] = 0.5 * np.sin(np.arange(n) / 3)
    forward = np.array([np.sin(heading_rad), 0.0, np.cos(heading_rad)])
    root = np.array([0.3, REST_PELVIS_HEIGHT_M, -0.2]) + np.arange(n)[:, None] * 0.01 * forward
    return Motion(fps=30, root_translation=root, rotations=rotations)


@pytest.mark.parametrize("heading_deg", [-135.0, -90.0, 0.0, 60.0, 179.0])
def test_the_turned_dance_faces_front_and_walks_forward(heading_deg: float) -> None:
    motion = _walking_sideways(np.radians(heading_deg))
    turned = face_front(motion)
    assert mean_heading_rad(turned) == pytest.approx(0.0, abs=1e-9)
    travel = turned.root_translation[-1] - turned.root_translation[0]
    assert travel[2] > 0 and abs(travel[0]) < 0.01 * travel[2]  # it now walks towards +Z (sway aside)
    np.testing.assert_allclose(turned.root_translation[0], motion.root_translation[0])


def test_the_dance_itself_is_unchanged(rng: np.random.Generator) -> None:
    motion = _walking_sideways(1.0)
    turned = face_front(motion)
    before, after = joint_positions(motion), joint_positions(turned)
    # Same shape: distances between every pair of joints in every frame are kept.
    d_before = np.linalg.norm(before[:, :, None] - before[:, None], axis=-1)
    d_after = np.linalg.norm(after[:, :, None] - after[:, None], axis=-1)
    np.testing.assert_allclose(d_after, d_before, atol=1e-9)
    np.testing.assert_allclose(after[..., 1], before[..., 1], atol=1e-9)  # heights kept
    np.testing.assert_array_equal(turned.rotations[:, 1:], motion.rotations[:, 1:])
