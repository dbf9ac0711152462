"""The binary glTF writer: the Khronos validator, assimp and our own decoding agree with the dance."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from choreo.contracts.provenance import Provenance
from choreo.errors import ExportError, ParameterError
from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_mat, aa_to_quat, mat_to_aa, quat_slerp, quat_to_aa, quat_to_mat
from choreo.motion.skeleton import REST_PELVIS_HEIGHT_M
from exporters.gltf import GLB_RIGS, write_glb
from exporters.rigs import MIXAMO_NAMES, get_rig

REPO_ROOT = Path(__file__).resolve().parents[2]
VALIDATOR_DIR = REPO_ROOT / "tools" / "gltf-validator"
PROVENANCE = {
    "model_version": "test-1",
    "seed": 7,
    "style": "salsa",
    "song_sha256": "ab" * 32,
    "credits": ["The data used in this project was obtained from mocap.cs.cmu.edu."],
}
_COMPONENTS = {5121: np.uint8, 5123: np.uint16, 5125: np.uint32, 5126: np.float32}
_WIDTHS = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}


def random_dance(rng: np.random.Generator, duration_s: float, fps: float) -> Motion:
    """Smooth random joint swings (up to about a radian), a turning and travelling root.

    The rotations are stored as a model's output is, with every angle in [0, pi]: the
    root's axis-angle jumps whenever its turn passes half a circle, which is where a
    writer must keep its quaternions on one hemisphere.
    """
    n = int(round(duration_s * fps))
    t = np.arange(n)[:, None, None] / fps
    rotations = 0.6 * np.sin(2 * np.pi * rng.uniform(0.1, 2.0, (24, 3)) * t + rng.uniform(0, 6.3, (24, 3)))
    rotations[:, 0, 1] += np.linspace(0.0, 3 * np.pi, n)
    root = np.zeros((n, 3))
    root[:, 0] = np.cumsum(rng.normal(0, 0.002, n))
    root[:, 1] = REST_PELVIS_HEIGHT_M
    return Motion(fps=fps, root_translation=root, rotations=mat_to_aa(aa_to_mat(rotations)))


@pytest.fixture(scope="session")
def node_tools() -> tuple[str, Path]:
    """``node`` and the folder of our Node scripts, with their pinned npm packages installed."""
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        pytest.fail(
            "node and npm are needed for the glTF validator and three.js (make system-deps installs them)"
        )
    modules = VALIDATOR_DIR / "node_modules"
    if not ((modules / "gltf-validator").is_dir() and (modules / "three").is_dir()):
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=VALIDATOR_DIR,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            pytest.fail(f"npm ci in {VALIDATOR_DIR} failed:\n{done.stderr[-3000:]}")
    return node, VALIDATOR_DIR


@pytest.fixture(scope="session")
def gltf_validator(node_tools) -> list[str]:
    """Command that runs the Khronos glTF validator on GLB files."""
    node, folder = node_tools
    return [node, str(folder / "validate.mjs")]


def validate(command: list[str], *paths: Path) -> list[dict]:
    done = subprocess.run([*command, *map(str, paths)], capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), f"validator could not run: {done.stderr}"
    return json.loads(done.stdout)


def assert_clean(report: dict) -> None:
    issues = report["issues"]
    messages = [f"{m['code']}: {m['message']} at {m.get('pointer')}" for m in issues["messages"][:10]]
    counts = {k: issues[k] for k in ("numErrors", "numWarnings", "numInfos", "numHints")}
    assert counts == dict.fromkeys(counts, 0), f"{report['uri']}: {counts}\n" + "\n".join(messages)


def read_glb(path: Path) -> tuple[dict, bytes]:
    """Our own reading of a GLB: the JSON document and the binary chunk."""
    data = path.read_bytes()
    magic, version, length = struct.unpack_from("<III", data, 0)
    assert (magic, version, length) == (0x46546C67, 2, len(data))
    json_length, json_type = struct.unpack_from("<II", data, 12)
    assert json_type == 0x4E4F534A and json_length % 4 == 0
    document = json.loads(data[20 : 20 + json_length])
    bin_length, bin_type = struct.unpack_from("<II", data, 20 + json_length)
    assert bin_type == 0x004E4942 and bin_length % 4 == 0
    start = 28 + json_length
    return document, data[start : start + bin_length]


def accessor(document: dict, binary: bytes, index: int) -> np.ndarray:
    acc = document["accessors"][index]
    view = document["bufferViews"][acc["bufferView"]]
    width = _WIDTHS[acc["type"]]
    dtype = np.dtype(_COMPONENTS[acc["componentType"]])
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    flat = np.frombuffer(binary, dtype=dtype, count=acc["count"] * width, offset=start)
    return flat.reshape(acc["count"], width)


@pytest.mark.parametrize("rig", GLB_RIGS)
@pytest.mark.parametrize("fps", [30, 60])
def test_validator_reports_no_issues(gltf_validator, tmp_path, rng, rig, fps):
    path = write_glb(
        random_dance(rng, 4.0, fps), tmp_path / f"dance_{rig}.glb", rig=rig, provenance=PROVENANCE
    )
    (report,) = validate(gltf_validator, path)
    assert_clean(report)
    info = report["info"]
    assert info["animationCount"] == 1 and info["hasSkins"] and info["maxInfluences"] == 4


@pytest.mark.parametrize("fps", [24, 25, 50])
def test_other_cli_rates_and_a_single_frame_are_valid(gltf_validator, tmp_path, rng, fps):
    paths = [
        write_glb(random_dance(rng, 2.0, fps), tmp_path / "two_seconds.glb"),
        write_glb(random_dance(rng, 1.0 / fps, fps), tmp_path / "one_frame.glb"),
    ]
    for report in validate(gltf_validator, *paths):
        assert_clean(report)


def test_validator_catches_a_broken_file(gltf_validator, tmp_path, rng):
    """The validator is a real check: a non-unit quaternion in our file is reported."""
    path = write_glb(random_dance(rng, 1.0, 30), tmp_path / "broken.glb")
    document, _ = read_glb(path)
    data = bytearray(path.read_bytes())
    acc = document["accessors"][document["animations"][0]["samplers"][3]["output"]]
    offset = 28 + struct.unpack_from("<I", data, 12)[0]
    offset += document["bufferViews"][acc["bufferView"]]["byteOffset"] + acc.get("byteOffset", 0)
    struct.pack_into("<f", data, offset, 2.0)
    path.write_bytes(bytes(data))
    (report,) = validate(gltf_validator, path)
    codes = {m["code"] for m in report["issues"]["messages"]}
    assert "ACCESSOR_ANIMATION_SAMPLER_OUTPUT_NON_NORMALIZED_QUATERNION" in codes


def test_document_holds_skeleton_skin_animation_and_provenance(tmp_path, rng):
    motion = random_dance(rng, 2.0, 30)
    document, binary = read_glb(write_glb(motion, tmp_path / "d.glb", provenance=PROVENANCE))

    assert document["asset"]["version"] == "2.0"
    assert document["asset"]["extras"] == PROVENANCE
    assert document["scenes"][document["scene"]]["extras"] == PROVENANCE
    nodes = document["nodes"]
    names = [node["name"] for node in nodes[:24]]
    assert names == list(motion.skeleton.names)
    for j, parent in enumerate(motion.skeleton.parents):
        if parent >= 0:
            assert j in nodes[parent]["children"]
            np.testing.assert_allclose(nodes[j]["translation"], motion.skeleton.offsets[j])
    np.testing.assert_allclose(nodes[0]["translation"], [0.0, REST_PELVIS_HEIGHT_M, 0.0])

    (skin,) = document["skins"]
    assert skin["joints"] == list(range(24))
    mesh_nodes = [node for node in nodes if "mesh" in node]
    assert len(mesh_nodes) == 1 and mesh_nodes[0]["skin"] == 0
    attributes = document["meshes"][0]["primitives"][0]["attributes"]
    weights = accessor(document, binary, attributes["WEIGHTS_0"])
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-6)
    assert accessor(document, binary, attributes["JOINTS_0"]).max() == 23

    (animation,) = document["animations"]
    targets = sorted((c["target"]["node"], c["target"]["path"]) for c in animation["channels"])
    assert targets == sorted([(j, "rotation") for j in range(24)] + [(0, "translation")])
    assert {s["interpolation"] for s in animation["samplers"]} == {"LINEAR"}
    inputs = {s["input"] for s in animation["samplers"]}
    assert len(inputs) == 1
    times = accessor(document, binary, inputs.pop())[:, 0]
    np.testing.assert_allclose(times, np.arange(motion.n_frames) / 30, atol=1e-6)


def document_joint_positions(document: dict, binary: bytes) -> dict[str, np.ndarray]:
    """World position of every node, ``name -> [frames, 3]``, by our own walk of the glTF node tree.

    Animated channels replace the node's rest rotation and translation; nodes
    without a channel keep them (glTF's rules).
    """
    (animation,) = document["animations"]
    samplers = animation["samplers"]
    tracks = {}
    for channel in animation["channels"]:
        output = samplers[channel["sampler"]]["output"]
        tracks[(channel["target"]["node"], channel["target"]["path"])] = accessor(document, binary, output)
    n_frames = document["accessors"][samplers[0]["input"]]["count"]
    positions: dict[str, np.ndarray] = {}

    def visit(index: int, parent_rot: np.ndarray, parent_pos: np.ndarray) -> None:
        node = document["nodes"][index]
        rest_rotation = np.asarray(node.get("rotation", [0.0, 0.0, 0.0, 1.0]))
        rotation = tracks.get((index, "rotation"), np.tile(rest_rotation, (n_frames, 1))).astype(np.float64)
        rest_translation = np.asarray(node.get("translation", [0.0, 0.0, 0.0]))
        translation = tracks.get((index, "translation"), np.tile(rest_translation, (n_frames, 1)))
        position = parent_pos + np.einsum("fab,fb->fa", parent_rot, translation)
        world_rot = parent_rot @ quat_to_mat(rotation)
        positions[node["name"]] = position
        for child in node.get("children", []):
            visit(child, world_rot, position)

    for root in document["scenes"][document["scene"]]["nodes"]:
        visit(root, np.tile(np.eye(3), (n_frames, 1, 1)), np.zeros((n_frames, 3)))
    return positions


@pytest.mark.parametrize("rig", GLB_RIGS)
def test_node_tree_reproduces_our_forward_kinematics(tmp_path, rng, rig):
    motion = random_dance(rng, 3.0, 60)
    document, binary = read_glb(write_glb(motion, tmp_path / "d.glb", rig=rig))
    positions = document_joint_positions(document, binary)
    names = get_rig(rig).joint_names
    ours = joint_positions(motion)
    for j, name in enumerate(names):
        np.testing.assert_allclose(positions[name], ours[:, j], atol=2e-6, err_msg=name)


def test_smpl_rig_keys_are_the_motion_rotations(tmp_path, rng):
    """With the smpl rig, every rotation key is the motion's own local rotation."""
    motion = random_dance(rng, 3.0, 60)
    document, binary = read_glb(write_glb(motion, tmp_path / "d.glb"))
    (animation,) = document["animations"]
    samplers = animation["samplers"]
    expected = aa_to_mat(motion.rotations)
    for channel in animation["channels"]:
        node, what = channel["target"]["node"], channel["target"]["path"]
        values = accessor(document, binary, samplers[channel["sampler"]]["output"]).astype(np.float64)
        if what == "translation":
            np.testing.assert_allclose(values, motion.root_translation, atol=1e-6)
            continue
        np.testing.assert_allclose(quat_to_mat(values), expected[:, node], atol=1e-6)
        # Neighbouring keys lie on the same hemisphere, so LINEAR (slerp) takes the short arc.
        assert np.all(np.sum(values[1:] * values[:-1], axis=1) >= 0.0)


def test_mixamo_rig_names_bones_and_carries_bone_axes(tmp_path, rng):
    motion = random_dance(rng, 1.0, 30)
    document, _ = read_glb(write_glb(motion, tmp_path / "d.glb", rig="mixamo"))
    nodes = document["nodes"]
    assert [node["name"] for node in nodes[:24]] == [MIXAMO_NAMES[name] for name in motion.skeleton.names]
    # Bones along +Y: the left forearm node sits straight up its parent's (upper arm's) Y axis.
    forearm = nodes[motion.skeleton.index("left_elbow")]
    assert forearm["translation"][1] == pytest.approx(np.linalg.norm(motion.skeleton.offsets[18]))
    assert abs(forearm["translation"][0]) < 1e-9 and abs(forearm["translation"][2]) < 1e-9
    assert sum("rotation" in node for node in nodes[:24]) > 10


def test_provenance_record_goes_into_asset_extras(tmp_path, rng):
    record = Provenance(
        model_version="m-2",
        seed=11,
        style="whirl",
        song_sha256="0f" * 32,
        data_credits=("CMU mocap",),
        model_trained=True,
    )
    document, _ = read_glb(write_glb(random_dance(rng, 1.0, 30), tmp_path / "d.glb", provenance=record))
    assert document["asset"]["extras"] == record.to_dict()


def test_inverse_bind_matrices_undo_the_rest_pose(tmp_path, rng):
    motion = random_dance(rng, 1.0, 30)
    document, binary = read_glb(write_glb(motion, tmp_path / "d.glb"))
    inverse_bind = accessor(document, binary, document["skins"][0]["inverseBindMatrices"])
    inverse_bind = inverse_bind.reshape(24, 4, 4).transpose(0, 2, 1)  # column-major in the file
    rest = motion.skeleton.rest_positions() + [0.0, REST_PELVIS_HEIGHT_M, 0.0]
    joint_in_own_space = inverse_bind[:, :3, :3] @ rest[:, :, None] + inverse_bind[:, :3, 3:]
    np.testing.assert_allclose(joint_in_own_space[..., 0], 0.0, atol=1e-6)


def _threejs_pose(node_tools: tuple[str, Path], path: Path, times_s: np.ndarray) -> dict:
    """What three.js's GLTFLoader and AnimationMixer report for ``path`` at ``times_s``."""
    node, folder = node_tools
    times = [f"{t:.9g}" for t in times_s]
    done = subprocess.run(
        [node, str(folder / "threejs_pose.mjs"), str(path), *times],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("rig", GLB_RIGS)
def test_threejs_plays_the_dance(node_tools, tmp_path, rng, rig):
    """three.js's GLTFLoader and AnimationMixer put every bone where our kinematics does."""
    motion = random_dance(rng, 4.0, 30)
    path = write_glb(motion, tmp_path / "d.glb", rig=rig, provenance=PROVENANCE)
    frames = np.unique(
        np.concatenate([[0, motion.n_frames - 1], rng.choice(motion.n_frames, 8, replace=False)])
    )
    report = _threejs_pose(node_tools, path, frames / motion.fps)
    assert (report["clip"], report["tracks"], report["skinned_meshes"], report["bones"]) == (
        "dance",
        25,
        1,
        24,
    )
    assert report["duration_s"] == pytest.approx((motion.n_frames - 1) / motion.fps, abs=1e-5)
    assert report["asset"]["extras"] == PROVENANCE
    assert report["scene_extras"] == PROVENANCE  # three.js puts scene extras in scene.userData
    # three.js drops ':' from node names (it is reserved in its property paths).
    assert report["node_names"] == [name.replace(":", "") for name in get_rig(rig).joint_names]
    error = np.linalg.norm(np.asarray(report["positions"]) - joint_positions(motion)[frames], axis=-1)
    assert error.max() < 1e-3, f"three.js is {error.max() * 1000:.3f} mm off"


@pytest.mark.parametrize("rig", GLB_RIGS)
def test_threejs_interpolates_between_keys(node_tools, tmp_path, rng, rig):
    """Half-way between two keys three.js slerps every joint the short way and lerps the root.

    The expected pose is our own: each joint's local rotation slerped half-way (the same
    in the rig's axes, which differ by fixed rotations on either side), the root's
    position averaged. This checks the key times and LINEAR semantics between keys; the
    writer's own hemisphere alignment is checked on the keys themselves (three.js and
    Blender both take the short arc even across a sign flip, but not every reader does).
    """
    motion = random_dance(rng, 4.0, 30)
    path = write_glb(motion, tmp_path / "d.glb", rig=rig)
    frames = np.sort(rng.choice(motion.n_frames - 1, 12, replace=False))
    report = _threejs_pose(node_tools, path, (frames + 0.5) / motion.fps)
    quats = aa_to_quat(motion.rotations)
    halfway = motion.replace(
        rotations=quat_to_aa(quat_slerp(quats[frames], quats[frames + 1], 0.5)),
        root_translation=0.5 * (motion.root_translation[frames] + motion.root_translation[frames + 1]),
    )
    measured = np.asarray(report["positions"])
    error = np.linalg.norm(measured - joint_positions(halfway), axis=-1)
    assert error.max() < 1e-3, f"three.js is {error.max() * 1000:.3f} mm off between keys"


def test_assimp_reads_bones_and_animation(tmp_path, rng):
    assimp = shutil.which("assimp")
    if assimp is None:
        pytest.fail("assimp is needed as an independent reader (make system-deps installs it)")
    path = write_glb(random_dance(rng, 2.0, 30), tmp_path / "d.glb")
    done = subprocess.run([assimp, "info", str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    counts = {
        key: int(re.search(rf"^{key}:\s+(\d+)", done.stdout, re.MULTILINE).group(1))
        for key in ("Meshes", "Animations", "Bones", "Animation Channels")
    }
    # assimp merges the root's rotation and translation channels into one per node.
    assert counts == {"Meshes": 1, "Animations": 1, "Bones": 24, "Animation Channels": 24}


def test_same_dance_gives_identical_bytes_and_replaces_the_file(tmp_path, rng):
    motion = random_dance(rng, 2.0, 30)
    first = write_glb(motion, tmp_path / "a.glb", rig="mixamo", provenance=PROVENANCE).read_bytes()
    target = tmp_path / "b.glb"
    target.write_bytes(b"old contents")
    assert write_glb(motion, target, rig="mixamo", provenance=PROVENANCE).read_bytes() == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.glb", "b.glb"]  # no temporary left


def test_rejects_bad_input(tmp_path, rng):
    motion = random_dance(rng, 1.0, 30)
    with pytest.raises(ParameterError, match="rig"):
        write_glb(motion, tmp_path / "d.glb", rig="unreal")
    with pytest.raises(ExportError, match="no frames"):
        write_glb(
            motion.replace(root_translation=np.zeros((0, 3)), rotations=np.zeros((0, 24, 3))),
            tmp_path / "e.glb",
        )
    bad = motion.rotations.copy()
    bad[5, 3, 1] = np.nan
    with pytest.raises(ExportError, match="non-finite"):
        write_glb(motion.replace(rotations=bad), tmp_path / "n.glb")
    with pytest.raises(ParameterError, match="provenance"):
        write_glb(motion, tmp_path / "p.glb", provenance={"seed": object()})
    with pytest.raises(ExportError, match="missing_dir"):
        write_glb(motion, tmp_path / "missing_dir" / "d.glb")


@pytest.mark.parametrize("fps", [30, 60])
def test_two_minute_dance_is_valid(gltf_validator, tmp_path, rng, fps):
    motion = random_dance(rng, 120.0, fps)
    path = write_glb(motion, tmp_path / "two_minutes.glb", provenance=PROVENANCE)
    (report,) = validate(gltf_validator, path)
    assert_clean(report)
    document, binary = read_glb(path)
    times = accessor(document, binary, document["animations"][0]["samplers"][0]["input"])[:, 0]
    assert times.size == 120 * fps and times[-1] == pytest.approx((120 * fps - 1) / fps, abs=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("fps", [30, 60])
def test_ten_minute_dance_is_valid(gltf_validator, tmp_path, rng, fps):
    motion = random_dance(rng, 600.0, fps)
    path = write_glb(motion, tmp_path / "ten_minutes.glb", provenance=PROVENANCE)
    (report,) = validate(gltf_validator, path)
    assert_clean(report)
    document, binary = read_glb(path)
    times = accessor(document, binary, document["animations"][0]["samplers"][0]["input"])[:, 0]
    assert times.size == 600 * fps
    assert np.all(np.diff(times) > 0)
