"""Blender, a reader we did not write, imports our GLB/BVH/FBX files and sees our dance.

The checks cover every rig (smpl, mixamo) and frame rates 30 and 60 for each format.
Blender comes from PyPI (``bpy``) in its own venv, ``.blender-venv`` at the repository
root, because ``bpy`` pins numpy<2. The session fixture builds that venv where it is
missing (``python3.11 -m venv`` and ``pip install --no-cache-dir bpy==BPY_VERSION``: a
375 MB wheel, about 30 s here; nothing is cached outside the repository). Each test
writes a file, has ``blender_probe.py`` import it with
Blender's own importer in a subprocess, and compares the bone count, the keyed frame
range and the world position of every bone's head at sampled frames with
:func:`choreo.motion.kinematics.joint_positions`, within 1 mm; for GLB and FBX also the
mannequin as Blender's armature deforms it against our own skinning, within 1 mm.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial import cKDTree

from choreo.contracts.choices import RIGS
from choreo.motion.kinematics import global_rotations, joint_positions
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_mat, aa_to_quat, mat_to_aa, quat_slerp, quat_to_aa
from choreo.motion.skeleton import REST_PELVIS_HEIGHT_M
from exporters.bvh import write_bvh
from exporters.fbx import write_fbx
from exporters.gltf import write_glb
from exporters.mannequin import build_mannequin
from exporters.rigs import get_rig, units_scale

REPO_ROOT = Path(__file__).resolve().parents[2]
BLENDER_VENV = REPO_ROOT / ".blender-venv"
BPY_VERSION = "5.0.1"  # the newest bpy on PyPI built for Python 3.11
BLENDER_PYTHON_BUILD = "python3.11"
PROBE = Path(__file__).with_name("blender_probe.py")
TOLERANCE_M = 1e-3


def _venv_python() -> Path:
    return BLENDER_VENV / "bin" / "python"


def _bpy_ready(marker: Path) -> bool:
    if not marker.exists() or not _venv_python().exists():
        return False
    probe = subprocess.run([_venv_python(), "-c", "import bpy"], capture_output=True, timeout=120)
    return probe.returncode == 0


@pytest.fixture(scope="session")
def blender_python() -> Path:
    """The Python of ``.blender-venv`` with ``bpy`` importable, built here if missing."""
    marker = BLENDER_VENV / f".choreo-bpy-{BPY_VERSION}"
    BLENDER_VENV.mkdir(exist_ok=True)
    with open(BLENDER_VENV / ".build-lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder at a time, if tests run in parallel
        if not _bpy_ready(marker):
            base = shutil.which(BLENDER_PYTHON_BUILD)
            if base is None and sys.version_info[:2] == (3, 11):
                base = sys.executable  # this venv's interpreter is a 3.11 too
            if base is None:
                pytest.fail(
                    f"{BLENDER_PYTHON_BUILD} is needed to build {BLENDER_VENV} (bpy wheels need 3.11)"
                )
            pip = [str(_venv_python()), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
            steps = [[base, "-m", "venv", str(BLENDER_VENV)], [*pip, "--no-cache-dir", f"bpy=={BPY_VERSION}"]]
            for step in steps:
                done = subprocess.run(step, capture_output=True, text=True, timeout=800)
                if done.returncode != 0:
                    pytest.fail(f"building {BLENDER_VENV} failed at {' '.join(step)}:\n{done.stderr[-4000:]}")
            marker.touch()
    return _venv_python()


def run_probe(blender_python: Path, jobs: list[dict], workdir: Path) -> list[dict]:
    """Run ``blender_probe.py`` on ``jobs`` and return its report per job."""
    request, report = workdir / "probe_request.json", workdir / "probe_report.json"
    request.write_text(json.dumps({"jobs": jobs}))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run(
        [str(blender_python), str(PROBE), str(request), str(report)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=workdir,
    )
    assert done.returncode == 0, f"Blender probe failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return json.loads(report.read_text())["jobs"]


def to_blender(points_y_up: np.ndarray) -> np.ndarray:
    """Y-up (glTF, BVH, SMPL) to Blender's Z-up, as the importers convert: (x, y, z) -> (x, -z, y)."""
    return np.stack([points_y_up[..., 0], -points_y_up[..., 2], points_y_up[..., 1]], axis=-1)


def dance_motion(rng: np.random.Generator, n_frames: int, fps: float) -> Motion:
    """A smooth, wide-ranging synthetic dance: every joint swings up to about 1.2 rad,
    the root turns more than a full circle and travels. Rotations are stored as a model's
    output is, with angles in [0, pi], so the root's axis-angle jumps where its turn
    passes half a circle: quaternion sign flips and Euler branch changes are exercised."""
    t = np.arange(n_frames) / fps
    freqs = rng.uniform(0.2, 1.5, size=(3, 24, 3))
    phases = rng.uniform(0, 2 * np.pi, size=(3, 24, 3))
    amps = rng.uniform(0.1, 0.4, size=(3, 24, 3))
    rotations = np.sum(
        amps[:, None] * np.sin(2 * np.pi * freqs[:, None] * t[None, :, None, None] + phases[:, None]), 0
    )
    rotations[:, 0] = 0.3 * rotations[:, 0]
    rotations[:, 0, 1] += np.linspace(0.0, 2.5 * np.pi, n_frames)  # root turns about Y
    root = np.stack(
        [0.5 * np.sin(0.3 * t), REST_PELVIS_HEIGHT_M + 0.05 * np.sin(4 * t), 0.4 * np.cos(0.2 * t)], 1
    )
    return Motion(fps=fps, root_translation=root, rotations=mat_to_aa(aa_to_mat(rotations)))


def sampled_frames(rng: np.random.Generator, n_frames: int, count: int = 10) -> np.ndarray:
    """The first and last frame plus ``count`` others, ascending."""
    middle = rng.choice(np.arange(1, n_frames - 1), size=count, replace=False)
    return np.unique(np.concatenate([[0, n_frames - 1], middle]))


def check_heads(report: dict, motion: Motion, frames: np.ndarray, names: tuple[str, ...]) -> None:
    """Every joint's head in Blender agrees with our forward kinematics within 1 mm."""
    expected = to_blender(joint_positions(motion)[frames])  # [F, J, 3]
    index = {name: i for i, name in enumerate(report["bones"])}
    missing = [name for name in names if name not in index]
    assert not missing, f"Blender has no bones called {missing}; it has {report['bones']}"
    measured = np.asarray(report["heads"])[:, [index[name] for name in names]]
    error = np.linalg.norm(measured - expected, axis=-1)
    worst = np.unravel_index(np.argmax(error), error.shape)
    assert error.max() < TOLERANCE_M, (
        f"joint {names[worst[1]]!r} at motion frame {frames[worst[0]]} is {error.max() * 1000:.2f} mm off"
        f" (Blender {measured[worst]}, ours {expected[worst]})"
    )


def skinned_mannequin(motion: Motion, frames: np.ndarray) -> np.ndarray:
    """Our own linear blend skinning of the mannequin, ``[frames, vertices, 3]``, Y up.

    A joint with world rotation ``G``, position ``p`` and bind position ``r`` moves a
    bound vertex ``v`` to ``G (v - r) + p``, whatever its rig's bone axes (they cancel).
    """
    figure = build_mannequin(motion.skeleton)
    rotations = global_rotations(motion)[frames]  # [F, J, 3, 3]
    positions = joint_positions(motion)[frames]  # [F, J, 3]
    rest = figure.positions.astype(np.float64)
    bind = figure.bind_matrices[:, :3, 3]
    weighted = np.zeros((len(frames), figure.n_vertices, 3))
    for slot in range(figure.joints.shape[1]):
        joint = figure.joints[:, slot]
        moved = np.einsum("fvab,vb->fva", rotations[:, joint], rest - bind[joint]) + positions[:, joint]
        weighted += figure.weights[None, :, slot, None] * moved
    return weighted


def check_skin(report: dict, motion: Motion, frames: np.ndarray) -> None:
    """Blender deforms the one skinned mesh as our skinning does: every vertex within 1 mm.

    Compared as point sets (the symmetric Hausdorff distance), so that an importer may
    reorder vertices.
    """
    assert len(report["skinned"]) == 1, f"expected one skinned mesh, Blender has {len(report['skinned'])}"
    (mesh,) = report["skinned"]
    assert mesh["vertex_groups"] == motion.skeleton.n_joints
    expected = to_blender(skinned_mannequin(motion, frames))
    for k, frame in enumerate(frames):
        measured = np.asarray(mesh["vertices"][k])
        distance = max(
            cKDTree(measured).query(expected[k])[0].max(), cKDTree(expected[k]).query(measured)[0].max()
        )
        assert distance < TOLERANCE_M, f"mesh at motion frame {frame} is {distance * 1000:.2f} mm off"


@pytest.mark.parametrize("rig", RIGS)
@pytest.mark.parametrize("fps", [30, 60])
def test_blender_imports_glb(
    blender_python: Path, tmp_path: Path, rng: np.random.Generator, fps: int, rig: str
):
    motion = dance_motion(rng, n_frames=3 * fps, fps=fps)
    provenance = {"model_version": "t-1", "seed": 9, "style": "modern", "data_credits": ["CMU", "Choreo"]}
    path = write_glb(motion, tmp_path / "dance.glb", rig=rig, provenance=provenance)
    frames = sampled_frames(rng, motion.n_frames)
    # Blender's glTF importer keys time t at frame t * (scene fps), from frame 0.
    (report,) = run_probe(
        blender_python,
        [{"path": str(path), "format": "glb", "fps": fps, "frames": frames.tolist(), "options": {}}],
        tmp_path,
    )
    assert report["armatures"] == 1
    assert len(report["bones"]) == 24
    assert report["frame_range"] == [0.0, float(motion.n_frames - 1)]
    assert report["scene_properties"] == provenance  # the scene extras, shown as custom properties
    check_heads(report, motion, frames, get_rig(rig).joint_names)
    check_skin(report, motion, frames)


@pytest.mark.parametrize(("rig", "units"), [("smpl", "m"), ("mixamo", "cm")])
@pytest.mark.parametrize("fps", [30, 60])
def test_blender_imports_bvh(
    blender_python: Path, tmp_path: Path, rng: np.random.Generator, fps: int, rig: str, units: str
):
    motion = dance_motion(rng, n_frames=3 * fps, fps=fps)
    path = write_bvh(motion, tmp_path / "dance.bvh", rig=rig, units=units)
    frames = sampled_frames(rng, motion.n_frames)
    # Blender's BVH importer puts motion frame k at frame_start + k; centimetres need global_scale 0.01.
    options = {"global_scale": 1.0 / units_scale(units), "frame_start": 1, "update_scene_fps": True}
    (report,) = run_probe(
        blender_python,
        [
            {
                "path": str(path),
                "format": "bvh",
                "fps": fps,
                "frames": (frames + 1).tolist(),
                "options": options,
            }
        ],
        tmp_path,
    )
    assert report["armatures"] == 1
    assert len(report["bones"]) == 24
    assert report["frame_range"] == [1.0, float(motion.n_frames)]
    assert report["scene_fps"] == fps
    check_heads(report, motion, frames, get_rig(rig).joint_names)
    assert report["skinned"] == []  # BVH holds bones only


def test_blender_interpolates_glb_between_keys(
    blender_python: Path, tmp_path: Path, rng: np.random.Generator
):
    """Half-way between keys Blender shows each joint's rotation slerped half-way (both rigs)."""
    motion = dance_motion(rng, n_frames=90, fps=30)
    frames = np.sort(rng.choice(motion.n_frames - 1, 10, replace=False))
    quats = aa_to_quat(motion.rotations)
    halfway = motion.replace(
        rotations=quat_to_aa(quat_slerp(quats[frames], quats[frames + 1], 0.5)),
        root_translation=0.5 * (motion.root_translation[frames] + motion.root_translation[frames + 1]),
    )
    jobs = [
        {"path": str(write_glb(motion, tmp_path / f"{rig}.glb", rig=rig)), "format": "glb", "fps": 30,
         "frames": (frames + 0.5).tolist()}
        for rig in RIGS
    ]  # fmt: skip
    for rig, report in zip(RIGS, run_probe(blender_python, jobs, tmp_path), strict=True):
        check_heads(report, halfway, np.arange(len(frames)), get_rig(rig).joint_names)


def test_blender_glb_bone_heuristics_keep_joint_positions(
    blender_python: Path, tmp_path: Path, rng: np.random.Generator
):
    """The importer's 'Bone Dir' choices only change how bones are drawn, not where joints go."""
    motion = dance_motion(rng, n_frames=60, fps=30)
    path = write_glb(motion, tmp_path / "dance.glb", rig="smpl")
    frames = sampled_frames(rng, motion.n_frames, count=5)
    heuristics = ("BLENDER", "TEMPERANCE", "FORTUNE")
    jobs = [
        {
            "path": str(path),
            "format": "glb",
            "fps": 30,
            "frames": frames.tolist(),
            "options": {"bone_heuristic": h},
        }
        for h in heuristics
    ]
    for report in run_probe(blender_python, jobs, tmp_path):
        assert len(report["bones"]) == 24
        check_heads(report, motion, frames, motion.skeleton.names)


@pytest.mark.parametrize(("rig", "units"), [("smpl", "m"), ("mixamo", "cm")])
@pytest.mark.parametrize("fps", [30, 60])
def test_blender_imports_fbx(
    blender_python: Path, tmp_path: Path, rng: np.random.Generator, fps: int, rig: str, units: str
):
    motion = dance_motion(rng, n_frames=3 * fps, fps=fps)
    path = write_fbx(motion, tmp_path / "dance.fbx", rig=rig, units=units)
    frames = sampled_frames(rng, motion.n_frames)
    # The scene starts at another rate: the importer must take the file's. Blender's FBX
    # importer keys time 0 at frame 1 (its default animation offset) and applies the unit
    # scale. Its defaults, then "Automatic Bone Orientation" (popular for Mixamo files),
    # which only changes how bones are drawn.
    jobs = [
        {"path": str(path), "format": "fbx", "fps": 25, "frames": (frames + 1).tolist(), "options": options}
        for options in ({}, {"automatic_bone_orientation": True})
    ]
    for report in run_probe(blender_python, jobs, tmp_path):
        assert report["armatures"] == 1
        assert len(report["bones"]) == 24
        assert report["scene_fps"] == fps
        assert report["frame_range"] == [1.0, float(motion.n_frames)]
        check_heads(report, motion, frames, get_rig(rig).joint_names)
        check_skin(report, motion, frames)


def test_blender_takes_every_cli_frame_rate_from_fbx(
    blender_python: Path, tmp_path: Path, rng: np.random.Generator
):
    """24, 25 and 50 fps files (the CLI's other rates) set Blender's scene rate and keep their poses."""
    jobs, motions = [], []
    for fps in (24, 25, 50):
        motion = dance_motion(rng, n_frames=2 * fps, fps=fps)
        path = write_fbx(motion, tmp_path / f"dance_{fps}.fbx", rig="smpl", units="cm")
        frames = sampled_frames(rng, motion.n_frames, count=4)
        motions.append((motion, frames))
        jobs.append(
            {"path": str(path), "format": "fbx", "fps": 30, "frames": (frames + 1).tolist(), "options": {}}
        )
    for (motion, frames), report in zip(motions, run_probe(blender_python, jobs, tmp_path), strict=True):
        assert report["scene_fps"] == motion.fps
        assert report["frame_range"] == [1.0, float(motion.n_frames)]
        check_heads(report, motion, frames, motion.skeleton.names)


@pytest.mark.parametrize(
    ("duration_s", "fps"),
    [
        (120, 30),
        (120, 60),
        pytest.param(600, 30, marks=pytest.mark.slow),
        pytest.param(600, 60, marks=pytest.mark.slow),
    ],
)
def test_blender_imports_long_dances_in_every_format(
    blender_python: Path, tmp_path: Path, rng: np.random.Generator, duration_s: int, fps: int
):
    """Two- and ten-minute dances: Blender keys every frame of each format and the poses still agree."""
    motion = dance_motion(rng, n_frames=duration_s * fps, fps=fps)
    frames = sampled_frames(rng, motion.n_frames, count=4)
    # Blender keys GLB from frame 0, BVH and FBX from frame 1 (see the tests above).
    writers = {
        "glb": (write_glb, 0, {}),
        "bvh": (write_bvh, 1, {"update_scene_fps": True}),
        "fbx": (write_fbx, 1, {}),
    }
    jobs = []
    for fmt, (write, first, options) in writers.items():
        path = write(motion, tmp_path / f"dance.{fmt}")
        jobs.append(
            {
                "path": str(path),
                "format": fmt,
                "fps": fps,
                "frames": (frames + first).tolist(),
                "options": options,
            }
        )
    for (fmt, (_, first, _)), report in zip(
        writers.items(), run_probe(blender_python, jobs, tmp_path), strict=True
    ):
        assert report["frame_range"] == [float(first), float(first + motion.n_frames - 1)], fmt
        check_heads(report, motion, frames, motion.skeleton.names)
