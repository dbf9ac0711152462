"""Rigs: names, units, Mixamo bone axes that keep the dance's shape, continuous Euler angles."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from test_bvh_fbx_support import random_dance

from choreo.contracts.choices import RIGS
from choreo.errors import ParameterError
from choreo.motion.kinematics import joint_positions
from choreo.motion.rotations import EULER_ORDERS, aa_to_mat, euler_to_mat, quat_to_mat
from choreo.motion.skeleton import JOINT_NAMES, SMPL, Skeleton
from exporters.rigs import MIXAMO_NAMES, continuous_euler, get_rig, units_scale


def _rig_fk(rig, motion, quats: np.ndarray) -> np.ndarray:
    """World joint positions from the rig's own offsets and local rotations."""
    offsets = rig.rest_offsets_m()
    local = quat_to_mat(quats)
    n = motion.n_frames
    world = np.empty((n, rig.n_joints, 3, 3))
    pos = np.empty((n, rig.n_joints, 3))
    for j, p in enumerate(rig.parents):
        if p < 0:
            world[:, j] = local[:, j]
            pos[:, j] = motion.root_translation
        else:
            world[:, j] = world[:, p] @ local[:, j]
            pos[:, j] = pos[:, p] + world[:, p] @ offsets[j]
    return pos


def test_rig_names_and_defaults() -> None:
    smpl = get_rig("smpl")
    assert smpl.joint_names == JOINT_NAMES and smpl.default_units == "m" and smpl.world_aligned
    mixamo = get_rig("mixamo")
    assert mixamo.default_units == "cm" and not mixamo.world_aligned
    assert mixamo.joint_names[0] == "mixamorig:Hips"
    assert all(n.startswith("mixamorig:") for n in mixamo.joint_names)
    assert len(set(mixamo.joint_names)) == 24
    assert mixamo.joint_names[SMPL.index("left_elbow")] == "mixamorig:LeftForeArm"
    assert set(MIXAMO_NAMES) == set(JOINT_NAMES)
    assert RIGS == ("smpl", "mixamo")


def test_unknown_rig_and_units_are_rejected() -> None:
    with pytest.raises(ParameterError, match="unknown rig 'unreal'"):
        get_rig("unreal")
    with pytest.raises(ParameterError, match="units"):
        units_scale("mm")
    with pytest.raises(ParameterError, match="units"):
        get_rig("smpl").resolve_units("inch")
    assert units_scale("m") == 1.0 and units_scale("cm") == 100.0
    other = Skeleton(("a", "b"), (-1, 0), np.array([[0.0, 0, 0], [0, 1, 0]]))
    with pytest.raises(ParameterError, match="SMPL"):
        get_rig("mixamo", other)


def test_mixamo_bones_point_along_local_y() -> None:
    rig = get_rig("mixamo")
    frames = rig.bone_frames
    assert np.allclose(frames @ np.swapaxes(frames, 1, 2), np.eye(3), atol=1e-12)
    assert np.allclose(np.linalg.det(frames), 1.0)
    offsets = rig.rest_offsets_m()
    for name, child in [("left_elbow", "left_wrist"), ("left_hip", "left_knee"), ("spine3", "neck")]:
        local = offsets[SMPL.index(child)]  # the child's offset in the parent's axes
        assert abs(local[0]) < 1e-9 and abs(local[2]) < 1e-9 and local[1] > 0, name
    # The hips keep the world axes; a leg bone's +Y points down, an arm's out to its side.
    assert np.allclose(frames[0], np.eye(3))
    assert frames[SMPL.index("left_hip"), 1, 1] < -0.9
    assert (
        frames[SMPL.index("left_shoulder"), 0, 1] > 0.9 and frames[SMPL.index("right_shoulder"), 0, 1] < -0.9
    )


@pytest.mark.parametrize("rig_name", RIGS)
def test_rig_rotations_keep_every_joint_where_the_motion_puts_it(rig_name: str, rng) -> None:
    motion = random_dance(rng, 2.0, 30)
    rig = get_rig(rig_name)
    quats = rig.local_quaternions(motion)
    assert np.allclose(_rig_fk(rig, motion, quats), joint_positions(motion), atol=1e-9)
    # and back again
    back = rig.motion_rotations(quats)
    assert np.allclose(aa_to_mat(back), aa_to_mat(motion.rotations), atol=1e-9)


def test_rest_rotations_compose_to_the_bone_frames() -> None:
    rig = get_rig("mixamo")
    rest = rig.rest_local_rotations()
    world = np.empty_like(rest)
    for j, p in enumerate(rig.parents):
        world[j] = rest[j] if p < 0 else world[p] @ rest[j]
    assert np.allclose(world, rig.bone_frames, atol=1e-12)
    assert np.allclose(rig.rest_local_rotations(world_aligned=True), np.eye(3))


def test_tips_continue_the_end_bones() -> None:
    rig = get_rig("smpl")
    tips = rig.tip_offsets_m(world_aligned=True)
    leaves = [j for j in range(24) if not SMPL.children(j)]
    assert sorted(SMPL.names[j] for j in leaves) == sorted(
        ["head", "left_hand", "right_hand", "left_foot", "right_foot"]
    )
    assert np.all(np.linalg.norm(tips[leaves], axis=1) > 0.04)
    assert np.allclose(np.delete(tips, leaves, axis=0), 0.0)
    assert tips[SMPL.index("head"), 1] > 0.1


@pytest.mark.parametrize("order", EULER_ORDERS)
def test_continuous_euler_is_exact_and_has_no_jumps(order: str, rng) -> None:
    motion = random_dance(rng, 4.0, 30, spin_turns=3.0)
    quats = get_rig("smpl").local_quaternions(motion)
    angles = continuous_euler(quats, order)
    assert np.allclose(euler_to_mat(angles, order), aa_to_mat(motion.rotations), atol=1e-9)
    # The plain conversion jumps by 180 (branch change) or 360 (wrap) degrees; the
    # continuous one moves far less, except where a joint passes near gimbal lock.
    plain = Rotation.from_quat(quats.reshape(-1, 4)).as_euler(order).reshape(angles.shape)
    assert np.abs(np.diff(plain, axis=0)).max() > np.radians(170)
    assert np.abs(np.diff(angles, axis=0)).max() < np.radians(100)


def test_continuous_euler_follows_a_long_spin() -> None:
    yaw = np.linspace(0, 6 * np.pi, 400)
    quats = np.stack([np.zeros_like(yaw), np.sin(yaw / 2), np.zeros_like(yaw), np.cos(yaw / 2)], axis=1)
    for order in EULER_ORDERS:
        angles = continuous_euler(quats[:, None], order)[:, 0]
        assert np.allclose(euler_to_mat(angles, order), quat_to_mat(quats), atol=1e-9)
        assert np.abs(np.diff(angles, axis=0)).max() < 0.1, order


def test_continuous_euler_rejects_bad_input() -> None:
    with pytest.raises(ParameterError, match="quaternion"):
        continuous_euler(np.zeros((3, 3)), "XYZ")
    with pytest.raises(ParameterError, match="Euler order"):
        continuous_euler(np.array([[0.0, 0, 0, 1]]), "XYX")
