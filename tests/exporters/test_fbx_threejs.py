"""three.js's FBXLoader, the FBX reader web viewers use, loads our FBX files and plays the dance.

The loader runs in Node from the pinned ``three`` package of ``tools/gltf-validator``
(installed there with ``npm ci`` where missing). A small probe script, written for
each test, parses the file, plays its first clip with an AnimationMixer and prints
the world position of every bone at the requested times; the test compares them
with :func:`choreo.motion.kinematics.joint_positions`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from test_bvh_fbx_support import random_dance

from choreo.motion.kinematics import joint_positions
from exporters.fbx import write_fbx
from exporters.rigs import get_rig, units_scale

NODE_TOOLS = Path(__file__).resolve().parents[2] / "tools" / "gltf-validator"
THREE = NODE_TOOLS / "node_modules" / "three"
TOLERANCE_M = 1e-4

_PROBE = """
import { readFileSync } from "node:fs";
import * as THREE from "%(three)s/build/three.module.js";
import { FBXLoader } from "%(three)s/examples/jsm/loaders/FBXLoader.js";

const [file, ...times] = process.argv.slice(2);
const data = readFileSync(file);
const bytes = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
const group = new FBXLoader().parse(bytes, "");
const bones = [];
let skinned = 0;
group.traverse((o) => { if (o.isBone) bones.push(o); if (o.isSkinnedMesh) skinned += 1; });
const clip = group.animations[0];
const mixer = new THREE.AnimationMixer(group);
mixer.clipAction(clip).play();
const world = new THREE.Vector3();
const positions = times.map(Number).map((t) => {
  mixer.setTime(t);
  group.updateMatrixWorld(true);
  return bones.map((b) => b.getWorldPosition(world).toArray());
});
console.log(JSON.stringify({
  names: bones.map((b) => b.name), clip: clip.name, duration_s: clip.duration,
  tracks: clip.tracks.length, skinned, positions,
}));
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The command that runs the FBXLoader probe (``node SCRIPT``)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None:
        pytest.skip("node is needed for three.js (make system-deps installs it)")
    if not (THREE / "package.json").exists():
        if npm is None:
            pytest.skip("npm is needed to install three.js")
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=NODE_TOOLS,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            pytest.fail(f"npm ci in {NODE_TOOLS} failed:\n{done.stderr[-3000:]}")
    script = tmp_path_factory.mktemp("threejs") / "fbx_pose.mjs"
    script.write_text(_PROBE % {"three": THREE.as_posix()})
    return [node, str(script)]


def three_sees(probe: list[str], path: Path, times_s: list[float]) -> dict:
    done = subprocess.run(
        [*probe, str(path), *map(str, times_s)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"three.js could not load {path}: {done.stderr[-2000:]}"
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    ("rig_name", "units", "fps"), [("smpl", "m", 30), ("mixamo", "cm", 60), ("smpl", "cm", 24)]
)
def test_three_plays_the_same_dance(
    probe: list[str], rig_name: str, units: str, fps: int, rng, tmp_path
) -> None:
    motion = random_dance(rng, 2.0, fps)
    rig = get_rig(rig_name)
    path = write_fbx(motion, tmp_path / "dance.fbx", rig=rig_name, units=units)
    frames = [0, 5, motion.n_frames // 2, motion.n_frames - 1]
    seen = three_sees(probe, path, [k / fps for k in frames])
    assert seen["clip"] == "Dance" and seen["tracks"] == 25 and seen["skinned"] == 1
    assert seen["duration_s"] == pytest.approx((motion.n_frames - 1) / fps, abs=1e-4)
    # three.js drops the characters its animation paths reserve, such as ':' in "mixamorig:Hips"
    names = [name.replace(":", "") for name in rig.joint_names]
    assert sorted(seen["names"]) == sorted(names)
    order = [seen["names"].index(name) for name in names]
    positions = np.array(seen["positions"])[:, order] / units_scale(units)
    assert np.abs(positions - joint_positions(motion)[frames]).max() < TOLERANCE_M
