"""Mirroring and sampling retargeted motion."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.mocap.sampling import sample_at
from choreo.motion.kinematics import joint_positions
from choreo.motion.mirror import mirror
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_mat
from choreo.motion.skeleton import JOINT_NAMES


def _random_motion(rng: np.random.Generator, n: int = 40) -> Motion:
    rot = rng.normal(scale=0.6, size=(n, 24, 3))
    root = rng.normal(size=(n, 3)) + [0.0, 0.9, 0.0]
    return Motion(fps=30.0, root_translation=root, rotations=rot)


def test_mirroring_twice_is_identity(rng: np.random.Generator) -> None:
    motion = _random_motion(rng)
    twice = mirror(mirror(motion))
    np.testing.assert_allclose(twice.rotations, motion.rotations, atol=1e-12)
    np.testing.assert_allclose(twice.root_translation, motion.root_translation, atol=1e-12)


def test_mirror_reflects_positions_and_swaps_sides(rng: np.random.Generator) -> None:
    motion = _random_motion(rng)
    pos = joint_positions(motion)
    mirrored = joint_positions(mirror(motion))
    swap = [
        JOINT_NAMES.index(n.replace("left_", "right_") if "left_" in n else n.replace("right_", "left_"))
        for n in JOINT_NAMES
    ]
    np.testing.assert_allclose(mirrored, pos[:, swap] * [-1.0, 1.0, 1.0], atol=1e-9)


def test_mirror_of_real_clip_keeps_floor_and_turns_sides(retargeted: dict[str, Motion]) -> None:
    motion = retargeted["salsa"]
    pos = joint_positions(motion)
    mirrored = joint_positions(mirror(motion))
    np.testing.assert_allclose(mirrored[..., 1].min(axis=1), pos[..., 1].min(axis=1), atol=1e-9)
    left, right = JOINT_NAMES.index("left_wrist"), JOINT_NAMES.index("right_wrist")
    np.testing.assert_allclose(mirrored[:, left, 0], -pos[:, right, 0], atol=1e-9)


def test_sample_at_hits_source_frames_and_interpolates_between(rng: np.random.Generator) -> None:
    motion = _random_motion(rng, 10)
    same = sample_at(motion, np.arange(10) / 30.0, 30.0)
    np.testing.assert_allclose(aa_to_mat(same.rotations), aa_to_mat(motion.rotations), atol=1e-9)
    half = sample_at(motion, np.array([0.5 / 30.0]), 60.0)
    assert half.fps == 60.0
    np.testing.assert_allclose(half.root_translation[0], motion.root_translation[:2].mean(axis=0))
    # slerp midpoint: equal angle to both ends
    r0, r1, rm = aa_to_mat(motion.rotations[0]), aa_to_mat(motion.rotations[1]), aa_to_mat(half.rotations[0])
    a0 = np.arccos(np.clip((np.trace(np.swapaxes(r0, -1, -2) @ rm, axis1=-2, axis2=-1) - 1) / 2, -1, 1))
    a1 = np.arccos(np.clip((np.trace(np.swapaxes(r1, -1, -2) @ rm, axis1=-2, axis2=-1) - 1) / 2, -1, 1))
    np.testing.assert_allclose(a0, a1, atol=1e-6)


def test_sample_at_rejects_non_finite_times(rng: np.random.Generator) -> None:
    with pytest.raises(ParameterError, match="finite"):
        sample_at(_random_motion(rng), np.array([0.0, np.nan]), 30.0)
