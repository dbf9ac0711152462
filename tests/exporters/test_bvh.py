"""BVH export: layout, round trip through our reader, and assimp's reading of every variant."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from test_bvh_fbx_support import (
    REF_ANIM,
    assimp_duration_s,
    assimp_info,
    assimp_scene,
    needs_assimp,
    random_dance,
)

from choreo.contracts.choices import RIGS, SUPPORTED_FPS
from choreo.contracts.provenance import Provenance
from choreo.errors import ExportError, ParameterError
from choreo.motion.bvh_reader import read_bvh
from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion
from choreo.motion.rotations import EULER_ORDERS, aa_to_mat
from exporters.bvh import bvh_text, read_bvh_motion, write_bvh
from exporters.rigs import get_rig, units_scale

ROUND_TRIP_RAD = 1e-4


def rotation_error_rad(a_aa: np.ndarray, b_aa: np.ndarray) -> float:
    """Largest angle of ``A^T B`` over all frames and joints (rotation matrices, not raw axis-angle)."""
    rel = np.swapaxes(aa_to_mat(a_aa), -1, -2) @ aa_to_mat(b_aa)
    cos = np.clip((np.trace(rel, axis1=-2, axis2=-1) - 1.0) / 2.0, -1.0, 1.0)
    return float(np.arccos(cos).max())


def expected_assimp_nodes(rig_name: str) -> set[str]:
    rig = get_rig(rig_name)
    leaves = [rig.joint_names[j] for j in range(24) if not rig.skeleton.children(j)]
    return set(rig.joint_names) | {f"EndSite_{name}" for name in leaves}


@pytest.mark.parametrize("fps", SUPPORTED_FPS)
@pytest.mark.parametrize("rig_name", RIGS)
@pytest.mark.parametrize("units", ["m", "cm"])
def test_round_trip_keeps_rotations_and_translation(
    fps: int, rig_name: str, units: str, rng, tmp_path
) -> None:
    motion = random_dance(rng, 3.0, fps)
    path = write_bvh(motion, tmp_path / "dance.bvh", rig=rig_name, units=units)
    back = read_bvh_motion(path)
    assert back.fps == fps and back.n_frames == motion.n_frames
    assert rotation_error_rad(back.rotations, motion.rotations) < ROUND_TRIP_RAD
    assert np.abs(back.root_translation - motion.root_translation).max() < 1e-5


@pytest.mark.parametrize("order", EULER_ORDERS)
def test_every_euler_order_round_trips(order: str, rng, tmp_path) -> None:
    motion = random_dance(rng, 2.0, 30)
    path = write_bvh(motion, tmp_path / "dance.bvh", euler_order=order)
    channels = " ".join(f"{a}rotation" for a in order)
    assert f"CHANNELS 6 Xposition Yposition Zposition {channels}" in path.read_text()
    assert rotation_error_rad(read_bvh_motion(path).rotations, motion.rotations) < ROUND_TRIP_RAD


def test_layout_of_the_file(rng, tmp_path) -> None:
    motion = random_dance(rng, 1.0, 25)
    path = write_bvh(motion, tmp_path / "dance.bvh", units="cm")
    text = path.read_text()
    assert text.startswith("HIERARCHY\nROOT pelvis\n")
    assert text.count("CHANNELS 6 ") == 1 and text.count("CHANNELS 3 Zrotation Xrotation Yrotation") == 23
    assert text.count("End Site") == 5
    assert re.search(r"^Frames: 25$", text, re.MULTILINE)
    assert re.search(r"^Frame Time: 0\.0400000000$", text, re.MULTILINE)
    data = read_bvh(path)
    assert data.frames.shape == (25, 6 + 23 * 3)
    # centimetres: offsets are 100 times the skeleton's, the root channels too
    assert np.allclose(data.offsets[data.index("left_knee")], motion.skeleton.offsets[4] * 100, atol=1e-6)
    assert np.allclose(data.frames[:, :3], motion.root_translation * 100, atol=1e-5)


def test_the_bvh_shows_the_same_figure_as_our_kinematics(rng, tmp_path) -> None:
    from choreo.motion.bvh_reader import forward_kinematics

    motion = random_dance(rng, 2.0, 30)
    for rig_name, units in [("smpl", "m"), ("mixamo", "cm")]:
        path = write_bvh(motion, tmp_path / f"{rig_name}.bvh", rig=rig_name, units=units)
        data = read_bvh(path)
        positions, _ = forward_kinematics(data)
        order = [data.index(name) for name in get_rig(rig_name).joint_names]
        assert np.abs(positions[:, order] / units_scale(units) - joint_positions(motion)).max() < 1e-5


def test_output_is_reproducible_and_has_no_negative_zero(rng, tmp_path) -> None:
    motion = random_dance(rng, 1.0, 30)
    still = motion.replace(rotations=np.zeros_like(motion.rotations))
    assert bvh_text(motion) == bvh_text(motion)
    assert "-0.000000" not in bvh_text(still)


def test_provenance_is_accepted_but_nothing_invalid_is_written(rng, tmp_path) -> None:
    motion = random_dance(rng, 1.0, 30)
    prov = Provenance("m-1", 3, "salsa", "0" * 64, ("credit",), model_trained=True)
    plain = write_bvh(motion, tmp_path / "a.bvh").read_text()
    with_prov = write_bvh(motion, tmp_path / "b.bvh", provenance=prov).read_text()
    assert plain == with_prov
    with pytest.raises(ParameterError, match="provenance"):
        write_bvh(motion, tmp_path / "c.bvh", provenance={"seed": 3})


def test_bad_input_gives_clear_errors(rng, tmp_path) -> None:
    motion = random_dance(rng, 1.0, 30)
    with pytest.raises(ParameterError, match="unknown rig"):
        write_bvh(motion, tmp_path / "x.bvh", rig="unreal")
    with pytest.raises(ParameterError, match="units"):
        write_bvh(motion, tmp_path / "x.bvh", units="mm")
    with pytest.raises(ParameterError, match="euler_order"):
        write_bvh(motion, tmp_path / "x.bvh", euler_order="XYX")
    bad = motion.rotations.copy()
    bad[3, 5, 1] = np.nan
    with pytest.raises(ExportError, match="NaN"):
        write_bvh(motion.replace(rotations=bad), tmp_path / "x.bvh")
    empty = Motion(30.0, np.zeros((0, 3)), np.zeros((0, 24, 3)))
    with pytest.raises(ExportError, match="no frames"):
        write_bvh(empty, tmp_path / "x.bvh")
    with pytest.raises(ExportError, match=r"cannot write BVH file .*missing"):
        write_bvh(motion, tmp_path / "missing" / "x.bvh")
    assert not list(tmp_path.glob("*.bvh")) and not list(tmp_path.glob(".*.tmp"))


def test_reader_rejects_files_that_are_not_choreo_dances(tmp_path) -> None:
    cmu = REF_ANIM / "assimp_bsd" / "01_01.bvh"
    if not cmu.exists():
        pytest.skip(f"reference file {cmu} not found")
    with pytest.raises(ParameterError, match="01_01.bvh: joint names match neither"):
        read_bvh_motion(cmu)


@needs_assimp
@pytest.mark.parametrize("fps", SUPPORTED_FPS)
@pytest.mark.parametrize("rig_name", RIGS)
@pytest.mark.parametrize("units", ["m", "cm"])
def test_assimp_reads_joints_and_duration(fps: int, rig_name: str, units: str, rng, tmp_path) -> None:
    motion = random_dance(rng, 2.0, fps)
    path = write_bvh(motion, tmp_path / "dance.bvh", rig=rig_name, units=units)
    info = assimp_info(path)
    assert set(info.node_names) == expected_assimp_nodes(rig_name)
    assert len(info.node_names) == 24 + 5
    assert info.animations == 1 and info.channels == 24
    # assimp's duration runs from the first key to the last one
    duration_s = assimp_duration_s(path, info.animation_names[0], tmp_path)
    assert duration_s == pytest.approx((motion.n_frames - 1) / fps, abs=0.5 / fps)


@needs_assimp
@pytest.mark.parametrize("rig_name", RIGS)
def test_assimp_sees_the_same_joint_positions(rig_name: str, rng, tmp_path) -> None:
    motion = random_dance(rng, 1.0, 30)
    path = write_bvh(motion, tmp_path / "dance.bvh", rig=rig_name)
    scene = assimp_scene(path, tmp_path)
    frames = np.array([0, 7, 19, 29])
    names = list(get_rig(rig_name).joint_names)
    seen = scene.world_positions(names, frames) / units_scale(get_rig(rig_name).default_units)
    assert np.abs(seen - joint_positions(motion)[frames]).max() < 1e-4


def _long_dance_case(minutes: float, fps: int, rng, tmp_path: Path) -> None:
    motion = random_dance(rng, minutes * 60, fps, spin_turns=minutes * 8)
    path = write_bvh(motion, tmp_path / "long.bvh")
    info = assimp_info(path)
    assert len(info.node_names) == 29 and info.channels == 24
    assert assimp_duration_s(path, info.animation_names[0], tmp_path) == pytest.approx(
        (motion.n_frames - 1) / fps, abs=0.5 / fps
    )
    back = read_bvh_motion(path)
    assert back.n_frames == motion.n_frames
    assert rotation_error_rad(back.rotations, motion.rotations) < ROUND_TRIP_RAD


@needs_assimp
@pytest.mark.parametrize("fps", [30, 60])
def test_two_minute_dance(fps: int, rng, tmp_path) -> None:
    _long_dance_case(2.0, fps, rng, tmp_path)


@needs_assimp
@pytest.mark.slow
@pytest.mark.parametrize("fps", [30, 60])
def test_ten_minute_dance(fps: int, rng, tmp_path) -> None:
    _long_dance_case(10.0, fps, rng, tmp_path)
