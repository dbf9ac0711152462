"""Leg IK: a pelvis that dips over planted feet bends the knees instead of sinking the feet."""

from __future__ import annotations

import numpy as np

from choreo.motion import REST_PELVIS_HEIGHT_M, SMPL, Motion, joint_positions
from choreo.motion.kinematics import global_rotations
from choreo.postprocess import count_limit_violations, postprocess
from choreo.postprocess.joint_limits import SMPL_JOINT_LIMITS, swing_twist
from choreo.postprocess.leg_ik import solve_leg_ik

FPS = 30.0


def _soft_knees(n_frames: int) -> Motion:
    """Standing with the knees bent 40 degrees and the feet flat, pelvis at rest height."""
    rotations = np.zeros((n_frames, 24, 3))
    for side in ("left", "right"):
        rotations[:, SMPL.index(f"{side}_hip"), 0] = np.deg2rad(-20.0)
        rotations[:, SMPL.index(f"{side}_knee"), 0] = np.deg2rad(40.0)
        rotations[:, SMPL.index(f"{side}_ankle"), 0] = np.deg2rad(-20.0)
    root = np.zeros((n_frames, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M
    return Motion(fps=FPS, root_translation=root, rotations=rotations)


def _dipping(n_frames: int = 90, depth_m: float = 0.06) -> tuple[Motion, np.ndarray]:
    """:func:`_soft_knees` whose pelvis dips by ``depth_m`` for 0.5 s in every 1.5 s, and the dip."""
    phase = (np.arange(n_frames) / FPS) % 1.5
    dip = np.where(phase < 0.5, depth_m * 0.5 * (1.0 - np.cos(2.0 * np.pi * phase / 0.5)), 0.0)
    standing = _soft_knees(n_frames)
    root = standing.root_translation.copy()
    root[:, 1] -= dip
    return standing.replace(root_translation=root), dip


def _knee_flexion(motion: Motion, name: str) -> np.ndarray:
    knee = SMPL.index(name)
    limit = SMPL_JOINT_LIMITS[name]
    shin = SMPL.offsets[SMPL.index(name.replace("knee", "ankle"))]
    twist_axis = shin / np.linalg.norm(shin)
    e1 = np.array(limit.swing_axis, dtype=np.float64)
    e1 = e1 - np.dot(e1, twist_axis) * twist_axis
    e1 /= np.linalg.norm(e1)
    return swing_twist(motion.rotations[:, knee], twist_axis, e1, np.cross(twist_axis, e1))[:, 1]


def test_dipping_pelvis_bends_the_knees_and_keeps_the_ankles() -> None:
    motion, dip = _dipping()
    solved = solve_leg_ik(motion)
    rest = joint_positions(_soft_knees(motion.n_frames))
    after = joint_positions(solved)
    for name in ("left_ankle", "right_ankle", "left_foot", "right_foot"):
        joint = SMPL.index(name)
        np.testing.assert_allclose(after[:, joint], rest[:, joint], atol=1e-3)
    np.testing.assert_array_equal(solved.root_translation, motion.root_translation)
    deep = dip > 0.05
    for name in ("left_knee", "right_knee"):
        flexion = _knee_flexion(solved, name)
        assert np.all(flexion[deep] > np.deg2rad(55.0))
    # The foot keeps its world orientation.
    ankle = SMPL.index("left_ankle")
    np.testing.assert_allclose(
        global_rotations(solved)[:, ankle], global_rotations(motion)[:, ankle], atol=1e-9
    )


def test_bone_lengths_are_kept() -> None:
    motion, _ = _dipping()
    positions = joint_positions(solve_leg_ik(motion))
    for joint, parent in enumerate(SMPL.parents):
        if parent < 0:
            continue
        length = np.linalg.norm(positions[:, joint] - positions[:, parent], axis=1)
        np.testing.assert_allclose(length, np.linalg.norm(SMPL.offsets[joint]), atol=1e-9)


def test_leg_in_the_air_is_untouched() -> None:
    motion, _ = _dipping()
    rotations = motion.rotations.copy()
    rotations[:, SMPL.index("right_hip")] = [-np.pi / 2, 0.0, 0.0]  # leg held out in front
    lifted = motion.replace(rotations=rotations)
    solved = solve_leg_ik(lifted)
    for name in ("right_hip", "right_knee", "right_ankle"):
        joint = SMPL.index(name)
        np.testing.assert_array_equal(solved.rotations[:, joint], lifted.rotations[:, joint])
    assert not np.allclose(solved.rotations[:, SMPL.index("left_knee")], 0.0)


def test_straight_leg_that_cannot_reach_leaves_the_rest_to_grounding() -> None:
    _, dip = _dipping()
    root = np.zeros((dip.size, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M + 0.4 * dip  # straight legs, pelvis rising 2.4 cm
    rising = Motion(fps=FPS, root_translation=root, rotations=np.zeros((dip.size, 24, 3)))
    solved = solve_leg_ik(rising)
    assert np.all(_knee_flexion(solved, "left_knee") < np.deg2rad(2.0))  # only filter ringing
    grounded = postprocess(rising, smooth=False)
    soles = joint_positions(grounded)[:, SMPL.index("left_foot"), 1]
    assert soles.min() > 0.0
    np.testing.assert_allclose(soles, 0.015, atol=2e-3)


def test_input_is_not_modified() -> None:
    motion, _ = _dipping()
    rotations = motion.rotations.copy()
    root = motion.root_translation.copy()
    solve_leg_ik(motion)
    np.testing.assert_array_equal(motion.rotations, rotations)
    np.testing.assert_array_equal(motion.root_translation, root)


def test_postprocess_keeps_the_dip_within_the_limits() -> None:
    motion, dip = _dipping()
    done = postprocess(motion)
    assert count_limit_violations(done) == 0
    height = done.root_translation[:, 1]
    np.testing.assert_allclose(height.max() - height.min(), dip.max(), atol=5e-3)
