"""FBX export: the binary layout, the scene graph, the curves, the skin, and assimp's reading."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from test_bvh_fbx_support import (
    assimp_duration_s,
    assimp_info,
    assimp_scene,
    needs_assimp,
    random_dance,
)

from choreo.contracts.choices import RIGS, SUPPORTED_FPS
from choreo.contracts.provenance import Provenance
from choreo.errors import ExportError, ParameterError
from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion
from choreo.motion.rotations import euler_to_mat, quat_to_mat
from exporters.fbx import write_fbx
from exporters.fbx.binary import CREATION_TIME, FILE_ID, decode_fbx, encode_fbx, read_fbx
from exporters.fbx.nodes import FbxNode
from exporters.fbx.timing import TICKS_PER_SECOND
from exporters.rigs import get_rig, units_scale

TOP_LEVEL = [
    "FBXHeaderExtension",
    "FileId",
    "CreationTime",
    "Creator",
    "GlobalSettings",
    "Documents",
    "References",
    "Definitions",
    "Objects",
    "Connections",
    "Takes",
]
TIME_MODES = {24: 11, 25: 10, 30: 6, 50: 4, 60: 3}
PROVENANCE = Provenance(
    model_version="choreo-test-1",
    seed=1234,
    style="breakdance",
    song_sha256="9f" * 32,
    data_credits=("The data used in this project was obtained from mocap.cs.cmu.edu.",),
    model_trained=True,
)


class Scene:
    """Our decoder's view of a file: objects by id, connections, global settings."""

    def __init__(self, path: Path) -> None:
        self.version, nodes = read_fbx(path, strict=True)
        self.top = {n.name: n for n in nodes}
        self.order = [n.name for n in nodes]
        self.objects = {n.props[0].value: n for n in self.top["Objects"].children}
        self.links = [c.values() for c in self.top["Connections"].children]

    def props70(self, node: FbxNode) -> dict[str, list]:
        table = node.find("Properties70")
        return {p.props[0].value: p.values()[4:] for p in table.children}

    def settings(self) -> dict[str, list]:
        return self.props70(self.top["GlobalSettings"])

    def name(self, node: FbxNode) -> str:
        return node.props[1].value.split("\x00\x01")[0]

    def models(self, kind: str = "LimbNode") -> dict[str, FbxNode]:
        return {
            self.name(n): n for n in self.objects.values() if n.name == "Model" and n.props[2].value == kind
        }

    def sources(self, target: int, prop: str | None = None) -> list[FbxNode]:
        """Objects connected to ``target`` (to its property ``prop`` when given)."""
        out = []
        for link in self.links:
            if link[2] == target and (prop is None or (link[0] == "OP" and link[3] == prop)):
                out.append(self.objects[link[1]])
        return out

    def parent(self, child: int) -> int:
        return next(link[2] for link in self.links if link[0] == "OO" and link[1] == child)


def curve_values(scene: Scene, model: FbxNode, prop: str) -> tuple[np.ndarray, np.ndarray]:
    """Key times and X, Y, Z values ``[keys, 3]`` of the curve node on ``model``'s ``prop``."""
    (curve_node,) = [n for n in scene.sources(model.props[0].value, prop) if n.name == "AnimationCurveNode"]
    columns, times = [], None
    for axis in "XYZ":
        (curve,) = scene.sources(curve_node.props[0].value, f"d|{axis}")
        times = curve.find("KeyTime").props[0].value
        columns.append(curve.find("KeyValueFloat").props[0].value)
    return times, np.stack(columns, axis=1)


def fbx_rotation(degrees_xyz: np.ndarray) -> np.ndarray:
    """Matrices of FBX Euler XYZ angles (X applied first: ``Rz @ Ry @ Rx``)."""
    return euler_to_mat(np.radians(degrees_xyz[..., ::-1]), "ZYX")


def angle_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    rel = np.swapaxes(a, -1, -2) @ b
    return np.arccos(np.clip((np.trace(rel, axis1=-2, axis2=-1) - 1) / 2, -1, 1))


@pytest.mark.parametrize("fps", SUPPORTED_FPS)
@pytest.mark.parametrize("units", ["m", "cm"])
def test_file_layout_and_global_settings(fps: int, units: str, rng, tmp_path) -> None:
    motion = random_dance(rng, 2.0, fps)
    scene = Scene(write_fbx(motion, tmp_path / "dance.fbx", units=units))
    assert scene.version == 7400 and scene.order == TOP_LEVEL
    header = scene.top["FBXHeaderExtension"]
    assert header.find("FBXVersion").values() == [7400]
    s = scene.settings()
    assert s["UpAxis"] == [1] and s["UpAxisSign"] == [1] and s["FrontAxis"] == [2] and s["CoordAxis"] == [0]
    assert s["UnitScaleFactor"] == [100.0 if units == "m" else 1.0]
    assert s["TimeMode"] == [TIME_MODES[fps]] and s["CustomFrameRate"] == [float(fps)]
    stop = (motion.n_frames - 1) * TICKS_PER_SECOND // fps
    assert s["TimeSpanStart"] == [0] and s["TimeSpanStop"] == [stop]
    take = scene.top["Takes"].find("Take")
    assert take.values() == ["Dance"] and take.find("LocalTime").values() == [0, stop]


def test_a_rate_without_a_time_mode_uses_the_custom_one(rng, tmp_path) -> None:
    scene = Scene(write_fbx(random_dance(rng, 1.0, 12), tmp_path / "dance.fbx"))
    assert scene.settings()["TimeMode"] == [14] and scene.settings()["CustomFrameRate"] == [12.0]


@pytest.mark.parametrize("skinned", [False, True])
def test_definitions_count_the_objects_and_connections_are_consistent(skinned: bool, rng, tmp_path) -> None:
    scene = Scene(write_fbx(random_dance(rng, 1.0, 30), tmp_path / "dance.fbx", skinned=skinned))
    definitions = scene.top["Definitions"]
    declared = {t.props[0].value: t.find("Count").values()[0] for t in definitions.find_all("ObjectType")}
    actual: dict[str, int] = {"GlobalSettings": 1}
    for node in scene.objects.values():
        actual[node.name] = actual.get(node.name, 0) + 1
    assert declared == actual
    assert definitions.find("Count").values() == [sum(actual.values())]
    for link in scene.links:
        assert link[1] in scene.objects and (link[2] == 0 or link[2] in scene.objects)
    assert actual["Model"] == 24 + int(skinned) and actual["NodeAttribute"] == 24
    assert actual["AnimationStack"] == 1 and actual["AnimationLayer"] == 1
    assert actual["AnimationCurveNode"] == 25 and actual["AnimationCurve"] == 75


@pytest.mark.parametrize("rig_name", RIGS)
def test_hierarchy_and_rest_transforms(rig_name: str, rng, tmp_path) -> None:
    rig = get_rig(rig_name)
    scene = Scene(write_fbx(random_dance(rng, 1.0, 30), tmp_path / "dance.fbx", rig=rig_name))
    models = scene.models()
    assert list(models) == list(rig.joint_names)
    ids = {name: m.props[0].value for name, m in models.items()}
    scale = units_scale(rig.default_units)
    offsets = rig.rest_offsets_m() * scale
    rest = rig.rest_local_rotations()
    for j, name in enumerate(rig.joint_names):
        parent = rig.parents[j]
        assert scene.parent(ids[name]) == (0 if parent < 0 else ids[rig.joint_names[parent]])
        attrs = [n for n in scene.sources(ids[name]) if n.name == "NodeAttribute"]
        assert len(attrs) == 1 and attrs[0].props[2].value == "LimbNode"
        p = scene.props70(models[name])
        if parent >= 0:
            assert np.allclose(p["Lcl Translation"], offsets[j], atol=1e-9)
        else:
            assert np.allclose(p["Lcl Translation"], rig.rest_root_position_m() * scale)
        assert angle_between(fbx_rotation(np.array(p["Lcl Rotation"])), rest[j]) < 1e-6


@pytest.mark.parametrize("rig_name", RIGS)
@pytest.mark.parametrize("fps", [24, 60])
def test_curves_hold_the_dance(rig_name: str, fps: int, rng, tmp_path) -> None:
    motion = random_dance(rng, 3.0, fps, spin_turns=2.0)
    rig = get_rig(rig_name)
    scene = Scene(write_fbx(motion, tmp_path / "dance.fbx", rig=rig_name, units="cm"))
    expected = quat_to_mat(rig.local_quaternions(motion))
    models = scene.models()
    for j, name in enumerate(rig.joint_names):
        times, degrees = curve_values(scene, models[name], "Lcl Rotation")
        assert np.array_equal(times, np.arange(motion.n_frames) * (TICKS_PER_SECOND // fps))
        assert angle_between(fbx_rotation(degrees.astype(np.float64)), expected[:, j]).max() < 1e-4
        assert np.abs(np.diff(degrees, axis=0)).max() < 100.0  # continuous: no 180/360-degree jumps
    _, root_cm = curve_values(scene, models[rig.joint_names[0]], "Lcl Translation")
    assert np.abs(root_cm / 100.0 - motion.root_translation).max() < 1e-6


def test_large_arrays_are_compressed(rng, tmp_path) -> None:
    data = write_fbx(random_dance(rng, 10.0, 30), tmp_path / "dance.fbx").read_bytes()
    at = data.find(b"KeyTime") + len(b"KeyTime")
    code, count, encoding, stored = struct.unpack_from("<cIII", data, at)
    assert code == b"l" and count == 300 and encoding == 1 and stored < count * 8
    assert data.endswith(bytes.fromhex("f85a8c6adef5d97eece90ce3758f290b")) and len(data) % 16 == 0


def test_header_ids_and_footer_agree(rng, tmp_path) -> None:
    """FileId, CreationTime and the footer id form the known-working triple the Autodesk SDK checks."""
    path = write_fbx(random_dance(rng, 1.0, 30), tmp_path / "dance.fbx")
    scene = Scene(path)
    assert scene.top["FileId"].values() == [FILE_ID]
    assert scene.top["CreationTime"].values() == [CREATION_TIME]
    data = path.read_bytes()
    footer = data[: -(4 + 4 + 120 + 16)]
    end_of_nodes = footer.rstrip(b"\x00")
    assert end_of_nodes.endswith(bytes.fromhex("fabcab09d0c8d466b176fb831cf7267e"))
    assert 1 <= len(footer) - len(end_of_nodes) <= 16 and len(footer) % 16 == 0
    assert struct.unpack("<I", data[-136 - 4 : -136])[0] == 7400


def test_encoder_and_decoder_agree_on_every_type() -> None:
    node = FbxNode.make(
        "Top",
        True,
        np.int16(-3),
        7,
        np.int64(2**40),
        np.float32(1.5),
        2.25,
        "text",
        b"\x00\x01raw",
        np.arange(100, dtype=np.float64),
        np.arange(3, dtype=np.int32),
        np.array([True, False]),
    )
    node.add("Child", "x").add("Grandchild", 1.0)
    version, (back,) = decode_fbx(encode_fbx([node]), strict=True)
    assert version == 7400 and [p.code for p in back.props] == list("CYILFDSRdib")
    assert back.values()[:8] == [True, -3, 7, 2**40, 1.5, 2.25, "text", b"\x00\x01raw"]
    assert np.array_equal(back.props[8].value, np.arange(100.0))
    assert back.find("Child").find("Grandchild").values() == [1.0]


def test_decoder_rejects_broken_files(rng, tmp_path) -> None:
    data = write_fbx(random_dance(rng, 1.0, 30), tmp_path / "dance.fbx").read_bytes()
    with pytest.raises(ExportError, match="not a binary FBX"):
        decode_fbx(b"; FBX 7.4.0 project file" + data[24:])
    with pytest.raises(ExportError, match="truncated|footer"):
        decode_fbx(data[: len(data) // 2])


def test_provenance_is_in_the_scene_info(rng, tmp_path) -> None:
    scene = Scene(write_fbx(random_dance(rng, 1.0, 30), tmp_path / "dance.fbx", provenance=PROVENANCE))
    info = scene.top["FBXHeaderExtension"].find("SceneInfo")
    comment = info.find("MetaData").find("Comment").values()[0]
    assert Provenance.from_json(comment) == PROVENANCE
    assert json.loads(comment)["song_sha256"] == "9f" * 32
    props = scene.props70(info)
    assert props["Choreo|ModelVersion"] == ["choreo-test-1"] and props["Choreo|Seed"] == ["1234"]
    assert props["Choreo|Style"] == ["breakdance"] and props["Choreo|SongSHA256"] == ["9f" * 32]
    assert "mocap.cs.cmu.edu" in props["Choreo|DataCredits"][0]
    assert info.find("MetaData").find("Revision").values() == ["choreo-test-1"]


@pytest.mark.parametrize("rig_name", RIGS)
def test_skin_binds_the_mannequin_to_the_bones(rig_name: str, rng, tmp_path) -> None:
    rig = get_rig(rig_name)
    scene = Scene(write_fbx(random_dance(rng, 1.0, 30), tmp_path / "dance.fbx", rig=rig_name))
    (mesh,) = scene.models("Mesh").values()
    (geometry,) = [n for n in scene.sources(mesh.props[0].value) if n.name == "Geometry"]
    (skin,) = [n for n in scene.sources(geometry.props[0].value) if n.name == "Deformer"]
    clusters = scene.sources(skin.props[0].value)
    assert len(clusters) == 24 and all(c.props[2].value == "Cluster" for c in clusters)
    n_vertices = geometry.find("Vertices").props[0].value.size // 3
    totals = np.zeros(n_vertices)
    scale = units_scale(rig.default_units)
    for cluster in clusters:
        np.add.at(totals, cluster.find("Indexes").props[0].value, cluster.find("Weights").props[0].value)
        (bone,) = [n for n in scene.sources(cluster.props[0].value) if n.name == "Model"]
        j = rig.joint_names.index(scene.name(bone))
        link = cluster.find("TransformLink").props[0].value.reshape(4, 4).T
        assert np.allclose(link[:3, :3], rig.bone_frames[j], atol=1e-12)
        expected = (rig.skeleton.rest_positions()[j] + rig.rest_root_position_m()) * scale
        assert np.allclose(link[:3, 3], expected, atol=1e-9)
    assert np.allclose(totals, 1.0, atol=1e-6)
    (pose,) = [n for n in scene.objects.values() if n.name == "Pose"]
    assert pose.find("NbPoseNodes").values() == [25] and len(pose.find_all("PoseNode")) == 25


def test_output_is_reproducible(rng, tmp_path) -> None:
    motion = random_dance(rng, 2.0, 30)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = write_fbx(motion, tmp_path / "a" / "dance.fbx", provenance=PROVENANCE).read_bytes()
    b = write_fbx(motion, tmp_path / "b" / "dance.fbx", provenance=PROVENANCE).read_bytes()
    assert a == b


def test_bad_input_gives_clear_errors(rng, tmp_path) -> None:
    motion = random_dance(rng, 1.0, 30)
    with pytest.raises(ParameterError, match="unknown rig"):
        write_fbx(motion, tmp_path / "x.fbx", rig="unreal")
    with pytest.raises(ParameterError, match="units"):
        write_fbx(motion, tmp_path / "x.fbx", units="mm")
    with pytest.raises(ParameterError, match="take_name"):
        write_fbx(motion, tmp_path / "x.fbx", take_name="")
    with pytest.raises(ParameterError, match="provenance"):
        write_fbx(motion, tmp_path / "x.fbx", provenance={"seed": 1})
    bad = motion.root_translation.copy()
    bad[2, 1] = np.inf
    with pytest.raises(ExportError, match="NaN or infinite"):
        write_fbx(motion.replace(root_translation=bad), tmp_path / "x.fbx")
    with pytest.raises(ExportError, match="no frames"):
        write_fbx(Motion(30.0, np.zeros((0, 3)), np.zeros((0, 24, 3))), tmp_path / "x.fbx")
    with pytest.raises(ExportError, match=r"cannot write FBX file .*missing"):
        write_fbx(motion, tmp_path / "missing" / "x.fbx")
    assert not list(tmp_path.glob("*.fbx")) and not list(tmp_path.glob(".*.tmp"))


# ---- assimp, a reader we did not write ------------------------------------------------------


@needs_assimp
@pytest.mark.parametrize("fps", SUPPORTED_FPS)
@pytest.mark.parametrize("rig_name", RIGS)
@pytest.mark.parametrize(("units", "skinned"), [("m", True), ("cm", False)])
def test_assimp_reads_bones_and_animation(
    fps: int, rig_name: str, units: str, skinned: bool, rng, tmp_path
) -> None:
    motion = random_dance(rng, 2.0, fps)
    rig = get_rig(rig_name)
    path = write_fbx(motion, tmp_path / "dance.fbx", rig=rig_name, units=units, skinned=skinned)
    info = assimp_info(path)
    expected = ["RootNode", *(["Mannequin"] if skinned else [])]
    assert sorted(info.node_names) == sorted(expected + list(rig.joint_names))
    assert info.bones == (24 if skinned else 0)
    assert info.animations == 1 and info.channels == 24 and info.animation_names == ["Dance"]
    duration_s = assimp_duration_s(path, "Dance", tmp_path)
    assert duration_s == pytest.approx((motion.n_frames - 1) / fps, abs=0.5 / fps)


@needs_assimp
@pytest.mark.parametrize(("rig_name", "units"), [("smpl", "m"), ("mixamo", "cm"), ("mixamo", "m")])
def test_assimp_sees_the_same_joint_positions(rig_name: str, units: str, rng, tmp_path) -> None:
    motion = random_dance(rng, 1.0, 30, spin_turns=1.0)
    rig = get_rig(rig_name)
    path = write_fbx(motion, tmp_path / "dance.fbx", rig=rig_name, units=units)
    scene = assimp_scene(path, tmp_path)
    assert scene.ticks_per_second == 30.0 and scene.duration_ticks == motion.n_frames - 1
    frames = np.array([0, 5, 16, 29])
    seen = scene.world_positions(list(rig.joint_names), frames) / units_scale(units)
    assert np.abs(seen - joint_positions(motion)[frames]).max() < 1e-4


def _long_dance_case(minutes: float, fps: int, rng, tmp_path: Path) -> None:
    motion = random_dance(rng, minutes * 60, fps, spin_turns=minutes * 8)
    path = write_fbx(motion, tmp_path / "long.fbx", rig="mixamo", provenance=PROVENANCE)
    info = assimp_info(path)
    assert info.bones == 24 and info.channels == 24
    assert assimp_duration_s(path, "Dance", tmp_path) == pytest.approx(
        (motion.n_frames - 1) / fps, abs=0.5 / fps
    )
    scene = Scene(path)
    models = scene.models()
    times, degrees = curve_values(scene, models["mixamorig:LeftForeArm"], "Lcl Rotation")
    assert times.size == motion.n_frames and times[-1] == (motion.n_frames - 1) * (TICKS_PER_SECOND // fps)
    expected = quat_to_mat(get_rig("mixamo").local_quaternions(motion)[:, 18])
    assert angle_between(fbx_rotation(degrees.astype(np.float64)), expected).max() < 1e-4


@needs_assimp
@pytest.mark.parametrize("fps", [30, 60])
def test_two_minute_dance(fps: int, rng, tmp_path) -> None:
    _long_dance_case(2.0, fps, rng, tmp_path)


@needs_assimp
@pytest.mark.slow
@pytest.mark.parametrize("fps", [30, 60])
def test_ten_minute_dance(fps: int, rng, tmp_path) -> None:
    _long_dance_case(10.0, fps, rng, tmp_path)
