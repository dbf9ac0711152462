"""What assimp, a reader we did not write, sees in a file; shared by the BVH and FBX tests.

assimp (Debian's assimp-utils) gives three views:

* ``assimp info FILE``: the node tree, the bone count, the animations and their channels;
* ``assimp export FILE OUT.assxml``: everything as XML, including each animation's
  duration and tick rate and every key, from which the tests rebuild world positions;
* ``assimp export FILE OUT.assbin``: the same in binary, compact enough for ten-minute
  dances, read here only for the animation's duration and tick rate.

The tests at the bottom check these helpers on files written by other tools (the
reference files in ../shared/data/ref_anim), so a helper that misreads assimp's output
fails here rather than hiding a fault in our exporters.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from choreo.motion.motion import Motion
from choreo.motion.rotations import quat_to_mat
from exporters.fbx.binary import read_fbx

REF_ANIM = Path(__file__).resolve().parents[3] / "shared" / "data" / "ref_anim"
_TREE_GLYPHS = re.compile(r"^[\s│├└╴─]*")
_ASSBIN_ANIMATION_CHUNK = 0x123B

needs_assimp = pytest.mark.skipif(
    shutil.which("assimp") is None, reason="assimp (assimp-utils) is not installed"
)


def random_dance(
    rng: np.random.Generator, duration_s: float, fps: float, *, spin_turns: float = 1.5
) -> Motion:
    """A smooth dance-like motion: every joint swings on its own sines, the root
    walks, bobs and turns ``spin_turns`` full turns about the vertical (which
    drives the Euler angles through their branch changes)."""
    n = max(int(round(duration_s * fps)), 2)
    t = np.arange(n) / fps
    freq = rng.uniform(0.3, 2.0, 72)
    phase = rng.uniform(0.0, 2 * np.pi, 72)
    amp = rng.uniform(0.2, 1.0, 72)
    rot = (amp * np.sin(2 * np.pi * freq * t[:, None] + phase)).reshape(n, 24, 3)
    yaw = 2 * np.pi * spin_turns * t / t[-1]
    rot[:, 0] = rot[:, 0] * 0.3 + np.stack([np.zeros(n), yaw, np.zeros(n)], axis=1)
    root = np.stack([0.5 * np.sin(0.3 * t), 0.94 + 0.05 * np.sin(4.0 * t), 0.5 * np.cos(0.2 * t)], axis=1)
    return Motion(float(fps), root, rot)


def _run(args: list[str], timeout_s: float = 300) -> str:
    result = subprocess.run(args, capture_output=True, text=True, timeout=timeout_s)
    assert result.returncode == 0, f"{' '.join(args)} failed: {result.stdout[-2000:]}{result.stderr[-2000:]}"
    return result.stdout


@dataclass(frozen=True)
class AssimpInfo:
    """``assimp info``: node names in tree order, bones, animations and channels."""

    node_names: list[str]
    bones: int
    animations: int
    channels: int
    animation_names: list[str]


def assimp_info(path: Path) -> AssimpInfo:
    """Run ``assimp info`` on ``path`` and parse its summary and node tree."""
    out = _run(["assimp", "info", str(path)])

    def count(label: str) -> int:
        match = re.search(rf"^{label}:\s+(\d+)", out, re.MULTILINE)
        assert match, f"assimp info printed no {label!r} line"
        return int(match.group(1))

    names_block = (
        out.split("Named Animations:", 1)[1].split("Node hierarchy:", 1)[0]
        if "Named Animations:" in out
        else ""
    )
    tree = out.split("Node hierarchy:", 1)[1]
    nodes = []
    for line in tree.splitlines():
        name = _TREE_GLYPHS.sub("", line).strip()
        if name:
            nodes.append(re.sub(r" \(mesh \d+\)$", "", name))
    return AssimpInfo(
        node_names=nodes,
        bones=count("Bones"),
        animations=count("Animations"),
        channels=count("Animation Channels"),
        animation_names=[n.strip().strip("'") for n in names_block.splitlines() if n.strip()],
    )


def assimp_duration_s(path: Path, animation_name: str, tmp_path: Path) -> float:
    """Duration of the animation ``animation_name`` as assimp reads it, seconds (ticks / ticks per second).

    Read from assimp's binary dump, which stays small for long dances: the
    animation chunk holds its name, then the duration and tick rate as doubles.
    """
    out = tmp_path / f"{path.stem}.assbin"
    _run(["assimp", "export", str(path), str(out), "-fassbin"])
    data = out.read_bytes()
    out.unlink()
    key = struct.pack("<I", len(animation_name.encode())) + animation_name.encode()
    start = data.find(key)
    while start >= 0:
        if start >= 8 and struct.unpack_from("<I", data, start - 8)[0] == _ASSBIN_ANIMATION_CHUNK:
            duration, ticks_per_second = struct.unpack_from("<dd", data, start + len(key))
            return duration / ticks_per_second
        start = data.find(key, start + 1)
    raise AssertionError(f"no animation {animation_name!r} in assimp's dump of {path}")


@dataclass(frozen=True)
class AssimpScene:
    """assimp's full view of a file from its XML export."""

    parents: dict[str, str | None]
    matrices: dict[str, np.ndarray]
    duration_ticks: float
    ticks_per_second: float
    tracks: dict[str, tuple[np.ndarray, np.ndarray]]

    def world_positions(self, names: list[str], frames: np.ndarray) -> np.ndarray:
        """World position of each node in ``names`` at key index ``frames``, ``[frames, names, 3]``.

        Animated nodes use their position and rotation keys (scale keys are 1
        here), the others their static matrices.
        """
        out = np.empty((len(frames), len(names), 3))
        for i, k in enumerate(frames):
            world: dict[str, np.ndarray] = {}

            def transform(name: str, k: int = int(k), world: dict = world) -> np.ndarray:
                if name in world:
                    return world[name]
                if name in self.tracks:
                    pos, rot = self.tracks[name]
                    local = np.eye(4)
                    # a constant channel holds a single key
                    local[:3, :3] = quat_to_mat(rot[min(k, len(rot) - 1)])
                    local[:3, 3] = pos[min(k, len(pos) - 1)]
                else:
                    local = self.matrices[name]
                parent = self.parents[name]
                world[name] = local if parent is None else transform(parent) @ local
                return world[name]

            for j, name in enumerate(names):
                out[i, j] = transform(name)[:3, 3]
        return out


def assimp_scene(path: Path, tmp_path: Path) -> AssimpScene:
    """Export ``path`` with assimp to XML and read its node tree and first animation."""
    out = tmp_path / f"{path.stem}.assxml"
    _run(["assimp", "export", str(path), str(out), "-fassxml"])
    root = ET.parse(out).getroot()  # noqa: S314  the file this test's exporter just wrote
    out.unlink()
    parents: dict[str, str | None] = {}
    matrices: dict[str, np.ndarray] = {}

    def visit(node: ET.Element, parent: str | None) -> None:
        name = node.get("name")
        parents[name] = parent
        matrices[name] = np.array(node.find("Matrix4").text.split(), dtype=float).reshape(4, 4)
        node_list = node.find("NodeList")
        for child in [] if node_list is None else node_list.findall("Node"):
            visit(child, name)

    visit(root.find("Scene/Node"), None)
    anim = root.find("Scene/AnimationList/Animation")
    tracks = {}
    for channel in anim.iter("NodeAnim"):
        pos = np.array([k.text.split() for k in channel.iter("PositionKey")], dtype=float)
        rot = np.array([k.text.split() for k in channel.iter("RotationKey")], dtype=float)
        tracks[channel.get("node")] = (pos, rot)
    return AssimpScene(parents, matrices, float(anim.get("duration")), float(anim.get("tick_cnt")), tracks)


# ---- the helpers on files other tools wrote -------------------------------------------------


@needs_assimp
def test_assimp_info_reads_a_blender_fbx_tree() -> None:
    path = REF_ANIM / "assimp_bsd" / "huesitos.fbx"
    if not path.exists():
        pytest.skip(f"reference file {path} not found")
    info = assimp_info(path)
    assert info.node_names[0] == "RootNode"
    assert {"Armature", "Bone", "Bone.008", "Cylinder"} <= set(info.node_names)
    assert info.bones == 9 and info.animations == 1 and info.channels == 10
    assert info.animation_names == ["Armature|Action"]


@needs_assimp
def test_assimp_duration_of_a_cmu_bvh_matches_its_header(tmp_path: Path) -> None:
    path = REF_ANIM / "assimp_bsd" / "01_01.bvh"
    if not path.exists():
        pytest.skip(f"reference file {path} not found")
    header = path.read_text()[:20000]
    frames = int(re.search(r"Frames:\s+(\d+)", header).group(1))
    frame_time = float(re.search(r"Frame Time:\s+([\d.]+)", header).group(1))
    # assimp's duration runs from the first key to the last: (frames - 1) frame times.
    assert assimp_duration_s(path, "Motion", tmp_path) == pytest.approx((frames - 1) * frame_time, rel=1e-4)


@pytest.mark.parametrize(
    "name",
    [
        "assimp_bsd/huesitos.fbx",
        "assimp_bsd/box.fbx",
        "ufbx_testdata/maya_human_ik_7400_binary.fbx",
        "ufbx_testdata/motionbuilder_cube_7700_binary.fbx",
    ],
)
def test_our_fbx_decoder_reads_files_other_tools_wrote(name: str) -> None:
    path = REF_ANIM / name
    if not path.exists():
        pytest.skip(f"reference file {path} not found")
    version, nodes = read_fbx(path)
    assert version >= 7400
    top = [n.name for n in nodes]
    assert top[0] == "FBXHeaderExtension" and "Objects" in top and "Connections" in top
