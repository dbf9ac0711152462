"""The SMPL skeleton's layout, the Motion type and forward kinematics."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.motion import REST_PELVIS_HEIGHT_M, SMPL, Motion, joint_positions
from choreo.motion.rotations import aa_to_mat


def test_smpl_layout() -> None:
    assert SMPL.n_joints == 24
    assert SMPL.names[0] == "pelvis" and SMPL.parents[0] == -1
    assert SMPL.names[SMPL.parents[SMPL.index("left_wrist")]] == "left_elbow"
    rest = SMPL.rest_positions()
    assert rest[SMPL.index("head")][1] > rest[SMPL.index("neck")][1] > 0  # Y up
    assert rest[SMPL.index("left_shoulder")][0] > 0 > rest[SMPL.index("right_shoulder")][0]  # left is +X
    toe_height = REST_PELVIS_HEIGHT_M + rest[SMPL.index("left_foot")][1]
    assert 0.0 < toe_height < 0.05
    left = [i for i, n in enumerate(SMPL.names) if n.startswith("left_")]
    right = [SMPL.index(SMPL.names[i].replace("left_", "right_")) for i in left]
    np.testing.assert_allclose(SMPL.offsets[left] * [-1, 1, 1], SMPL.offsets[right])


def test_motion_array_round_trip(rng: np.random.Generator) -> None:
    frames = rng.normal(size=(10, 75))
    motion = Motion.from_array(frames, fps=30)
    assert motion.n_frames == 10 and motion.duration_s == pytest.approx(10 / 30)
    np.testing.assert_array_equal(motion.to_array(), frames)
    np.testing.assert_array_equal(motion.rotations[3, 5], frames[3, 15:18])
    np.testing.assert_array_equal(motion.root_translation[3], frames[3, 72:])
    assert motion.frame_to_time(15) == pytest.approx(0.5)
    assert motion.time_to_frame(0.5) == 15


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fps": 0, "root_translation": np.zeros((2, 3)), "rotations": np.zeros((2, 24, 3))}, "fps must be"),
        (
            {"fps": 30, "root_translation": np.zeros((2, 2)), "rotations": np.zeros((2, 24, 3))},
            r"root_translation must be \[frames, 3\], got \(2, 2\)",
        ),
        (
            {"fps": 30, "root_translation": np.zeros((2, 3)), "rotations": np.zeros((3, 24, 3))},
            r"rotations must be \(2, 24, 3\), got \(3, 24, 3\)",
        ),
    ],
)
def test_motion_rejects_bad_shapes(kwargs: dict, message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        Motion(**kwargs)


def test_fk_rest_pose_and_bone_lengths(rng: np.random.Generator) -> None:
    n = 5
    root = rng.normal(size=(n, 3))
    rest = Motion(fps=30, root_translation=root, rotations=np.zeros((n, 24, 3)))
    np.testing.assert_allclose(joint_positions(rest), SMPL.rest_positions()[None] + root[:, None], atol=1e-12)
    posed = rest.replace(rotations=rng.normal(scale=0.8, size=(n, 24, 3)))
    pos = joint_positions(posed)
    for j, p in enumerate(SMPL.parents):
        if p >= 0:
            np.testing.assert_allclose(np.linalg.norm(pos[:, j] - pos[:, p], axis=1), SMPL.bone_lengths()[j])


def test_fk_root_rotation_turns_the_whole_body() -> None:
    quarter_turn = np.zeros((1, 24, 3))
    quarter_turn[0, 0] = [0.0, np.pi / 2, 0.0]
    motion = Motion(fps=30, root_translation=np.zeros((1, 3)), rotations=quarter_turn)
    expected = SMPL.rest_positions() @ aa_to_mat(np.array([0.0, np.pi / 2, 0.0])).T
    np.testing.assert_allclose(joint_positions(motion)[0], expected, atol=1e-12)
