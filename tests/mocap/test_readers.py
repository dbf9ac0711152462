"""Motion files of every format read back into the dance they hold, and files that hold none refused.

The readers (:mod:`choreo.mocap.readers`: our BVH parser, Assimp for FBX and
glTF) are checked on real files only:

- our own exports (BVH, FBX, GLB; rigs smpl and mixamo; metres and
  centimetres; 24, 25, 30 and 60 fps) of a real CMU clip, retargeted back:
  each format within 1 mm of the BVH round trip of the same rig;
- an ASCII FBX 7.4 holding our binary FBX's node tree as text (:mod:`tests.mocap.fbx_ascii`);
- FBX (Y up and Z up) and GLB that Blender makes from a CMU BVH, read as the
  BVH reads (and Blender's default FBX, whose simplified curves leave
  irregular keys, resampled);
- a Mixamo rig without the ``mixamorig:`` prefix, found by name, and the same
  rig with meaningless bone names, found by its shape; the reference files in
  ``shared/data/ref_anim`` (the Khronos figures and a Maya character found by
  shape);
- refusals of each kind, each naming the file and the reason.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.mocap.dataset import MIN_MOTION_S, retargeted_dance, retargeted_take
from choreo.mocap.readers import read_takes
from choreo.mocap.retarget import retarget
from choreo.mocap.rigs import detect_rig
from choreo.mocap.roundtrip import pose_error_m
from choreo.mocap.shape_rig import SHAPE_RIG
from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion
from choreo.motion.resample import resample
from choreo.motion.stops import mean_joint_speeds
from exporters.bvh import write_bvh
from exporters.fbx import write_fbx
from exporters.gltf import write_glb
from exporters.rigs import get_rig
from tests.exporters.test_blender import blender_python  # noqa: F401 - the session fixture
from tests.mocap.fbx_ascii import write_ascii_twin

BLENDER_CONVERT = Path(__file__).with_name("blender_convert.py")
WRITERS = {
    "bvh": lambda m, p, rig, units: write_bvh(m, p, rig=rig, units=units),
    "fbx": lambda m, p, rig, units: write_fbx(m, p, rig=rig, units=units),
    "glb": lambda m, p, rig, _units: write_glb(m, p, rig=rig),
}


@pytest.fixture(scope="module")
def dance(mocap_dir: Path) -> Motion:
    """A real modern-dance clip, retargeted and cut to its dance: the known motion every file holds."""
    motion, _ = retargeted_dance(mocap_dir / "cmu_05_modern" / "05_02.bvh")
    return motion


def _read_back(path: Path) -> Motion:
    (take,) = read_takes(path)
    return retarget(take)


def _error_mm(path: Path, source: Motion) -> np.ndarray:
    return 1000.0 * pose_error_m(_read_back(path), source)


@pytest.mark.parametrize("rig", ["smpl", "mixamo"])
@pytest.mark.parametrize("units", ["m", "cm"])
def test_our_fbx_and_glb_read_back_within_a_millimetre_of_our_bvh(
    dance: Motion, rig: str, units: str, tmp_path: Path
) -> None:
    errors = {}
    for fmt in ("bvh", "fbx", "glb"):
        path = WRITERS[fmt](dance, tmp_path / f"take.{fmt}", rig, units)
        (take,) = read_takes(path)
        assert take.n_frames == dance.n_frames and abs(take.fps - dance.fps) < 0.01
        if fmt == "fbx":
            assert take.metres_per_unit == pytest.approx({"m": 1.0, "cm": 0.01}[units])
        assert detect_rig(take).name == rig
        errors[fmt] = _error_mm(path, dance)
    assert np.percentile(errors["bvh"], 95) < 15.0  # the retargeter's own residue (docs/choreography.md)
    for fmt in ("fbx", "glb"):
        for stat in (np.mean, lambda e: np.percentile(e, 95), np.max):
            assert stat(errors[fmt]) <= stat(errors["bvh"]) + 1.0, fmt


@pytest.mark.parametrize("fps", [24, 25, 30, 60])
def test_the_frame_rate_comes_from_the_file(dance: Motion, fps: int, tmp_path: Path) -> None:
    motion = resample(dance, fps)
    n = 4 * fps
    motion = motion.replace(rotations=motion.rotations[:n], root_translation=motion.root_translation[:n])
    bvh = _error_mm(write_bvh(motion, tmp_path / "take.bvh", rig="mixamo"), motion)
    for fmt in ("fbx", "glb"):
        path = WRITERS[fmt](motion, tmp_path / f"take.{fmt}", "mixamo", None)
        (take,) = read_takes(path)
        assert take.fps == fps and take.n_frames == motion.n_frames, fmt
        assert np.percentile(_error_mm(path, motion), 95) <= np.percentile(bvh, 95) + 1.0, fmt


def test_an_ascii_fbx_reads_as_its_binary_twin(dance: Motion, tmp_path: Path) -> None:
    binary = write_fbx(dance, tmp_path / "binary.fbx", rig="mixamo")
    text = write_ascii_twin(binary, tmp_path / "ascii.fbx")
    assert text.read_bytes().startswith(b"; FBX 7.4") and binary.read_bytes().startswith(
        b"Kaydara FBX Binary"
    )
    (a,), (b,) = read_takes(binary), read_takes(text)
    assert detect_rig(b).name == "mixamo" and b.names == a.names
    assert (b.n_frames, b.fps, b.metres_per_unit) == (a.n_frames, a.fps, a.metres_per_unit)
    np.testing.assert_allclose(b.positions, a.positions, atol=1e-4)  # centimetres
    np.testing.assert_allclose(b.rotations, a.rotations, atol=1e-6)


def test_a_mixamo_rig_without_its_prefix_by_name_and_with_meaningless_names_by_shape(
    dance: Motion, tmp_path: Path
) -> None:
    mixamo = get_rig("mixamo")
    plain = dataclasses.replace(
        mixamo, joint_names=tuple(n.removeprefix("mixamorig:") for n in mixamo.joint_names)
    )
    anonymous = dataclasses.replace(mixamo, joint_names=tuple(f"Bone.{i:03d}" for i in range(24)))
    reference = _error_mm(write_fbx(dance, tmp_path / "mixamo.fbx", rig=mixamo), dance)
    for name, rig in (("mixamo_unprefixed", plain), (SHAPE_RIG, anonymous)):
        path = write_fbx(dance, tmp_path / f"{name}.fbx", rig=rig)
        (take,) = read_takes(path)
        assert detect_rig(take).name == name
        error = _error_mm(path, dance)
        assert np.percentile(error, 95) <= np.percentile(reference, 95) + 1.0, name


def _blender(blender_python: Path, jobs: list[dict], workdir: Path) -> None:  # noqa: F811
    request = workdir / "convert.json"
    request.write_text(json.dumps({"jobs": jobs}))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run(
        [str(blender_python), str(BLENDER_CONVERT), str(request)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, f"Blender failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def test_blender_fbx_and_glb_of_a_cmu_clip_read_as_the_bvh_does(
    blender_python: Path,  # noqa: F811
    mocap_dir: Path,
    tmp_path: Path,
) -> None:
    bvh = mocap_dir / "cmu_05_modern" / "05_02.bvh"
    exact = {"bake_anim_simplify_factor": 0.0}
    jobs = {
        "y_up.fbx": exact,
        "z_up.fbx": exact | {"axis_up": "Z", "axis_forward": "Y"},
        "simplified.fbx": {},  # Blender's default: curves simplified, keys irregular
        "blender.glb": {},
    }
    salsa = mocap_dir / "cmu_60_61_salsa" / "60_09_scaled.bvh"  # its rig places the toes at End Sites
    _blender(
        blender_python,
        [
            {"bvh": str(bvh), "out": str(tmp_path / n), "format": n.split(".")[1], "options": o}
            for n, o in jobs.items()
        ]
        + [{"bvh": str(salsa), "out": str(tmp_path / "salsa.fbx"), "format": "fbx", "options": exact}],
        tmp_path,
    )
    (salsa_take,) = read_takes(tmp_path / "salsa.fbx")
    assert detect_rig(salsa_take).name == "cmu_salsa"
    assert pose_error_m(retarget(salsa_take), _read_back(salsa)).max() < 0.001  # leaf bones are its End Sites
    reference = _read_back(bvh)
    for name in jobs:
        (take,) = read_takes(tmp_path / name)
        assert abs(take.fps - reference.fps) < 0.01, name
        assert detect_rig(take).name == "iclone_cc", name
        error = _error_mm(tmp_path / name, reference)
        if name == "simplified.fbx":
            # Assimp plays FBX curves linearly between their keys; Blender simplified them
            assert np.percentile(error, 95) < 5.0
        else:
            assert error.max() < 1.0, name
    # the whole path: the library's clip from the Z-up FBX is the BVH's clip
    from_fbx, _ = retargeted_take(read_takes(tmp_path / "z_up.fbx")[0])
    from_bvh, _ = retargeted_dance(bvh)
    assert from_fbx.n_frames == from_bvh.n_frames
    assert pose_error_m(from_fbx, from_bvh).max() < 0.001


@pytest.mark.parametrize(
    ("name", "pelvis"),
    [
        ("khronos/CesiumMan.glb", "Skeleton_torso_joint_1"),
        ("khronos/RiggedFigure.glb", "torso_joint_1"),
        ("ufbx_testdata/maya_kenney_character_7700_binary.fbx", "Hips"),
    ],
)
def test_reference_figures_are_found_by_their_shape(shared_data: Path, name: str, pelvis: str) -> None:
    (take,) = read_takes(shared_data / "ref_anim" / name)
    rig = detect_rig(take)
    assert rig.name == SHAPE_RIG and rig.positions["pelvis"] == (pelvis,)
    assert rig.positions["left_knee"][0].replace("Left", "L").count("L") >= 1  # the left leg is the left one
    motion = retarget(take, rig)
    assert 0.6 < np.median(motion.root_translation[:, 1]) < 1.1  # a standing figure, on the floor
    speed = mean_joint_speeds(joint_positions(motion), motion.fps)
    assert np.median(speed) > 0.05  # walking or running on the spot


def _refusal(path: Path) -> str:
    with pytest.raises(ParameterError) as caught:
        for take in read_takes(path):
            retargeted_take(take)
    return str(caught.value)


def test_files_that_hold_no_dance_are_refused_with_their_reason(
    shared_data: Path, dance: Motion, tmp_path: Path
) -> None:
    ref = shared_data / "ref_anim"
    still = dance.replace(
        rotations=np.zeros_like(dance.rotations),
        root_translation=np.tile([0.0, 0.94, 0.0], (dance.n_frames, 1)),
    )
    short = dance.replace(rotations=dance.rotations[:90], root_translation=dance.root_translation[:90])
    not_fbx = tmp_path / "notes.fbx"
    not_fbx.write_text("these are not the moves you are looking for")
    cases = {
        ref / "assimp_bsd" / "quad_skin.glb": "a skinned mesh with no animation",
        ref / "ufbx_testdata" / "maya_human_ik_7400_ascii.fbx": "no animation",
        write_fbx(
            still, tmp_path / "t_pose.fbx", rig="mixamo"
        ): "nothing moves: a T-pose or a held pose only",
        write_glb(short, tmp_path / "short.glb"): f"1.5 s of motion, under the {MIN_MOTION_S:.0f} s",
        ref / "khronos" / "CesiumMan.glb": f"of motion, under the {MIN_MOTION_S:.0f} s",
        ref / "khronos" / "Fox.glb": "unknown skeleton",
        ref / "assimp_bsd" / "animation_with_skeleton.fbx": "too few for a body",
        not_fbx: "Assimp could not read it as fbx",
    }
    for path, reason in cases.items():
        message = _refusal(path)
        assert message.startswith(str(path)) and reason in message, message
    fox = _refusal(ref / "khronos" / "Fox.glb")
    assert "b_Hip_01" in fox and "mixamo (joint 'mixamorig:LeftUpLeg')" in fox and "not upright" in fox
