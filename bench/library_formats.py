"""Phrase libraries from FBX, glTF and BVH: the round-trip retargeting error per format, and the build time.

Usage::

    .venv/bin/python -P bench/library_formats.py [--out bench/results/library_formats.json]

1. **Round trip**: three CMU clips (salsa 60_09, breakdance 85_14, modern 05_02,
   the clips docs/choreography.md reports the BVH round trip for) are retargeted
   to SMPL; each is written by our exporters as BVH, FBX and GLB in both rigs
   (smpl in metres, mixamo in centimetres), read back through
   :func:`choreo.mocap.readers.read_takes` and retargeted again. The error is the
   joints' distance from the source's, relative to the pelvis, in mm (mean, 95th
   percentile, max), and each format's excess over BVH's. Blender's own FBX
   (Y up and Z up, every key kept; and its default, simplified curves) and GLB of
   the CMU BVH files are compared with the BVH read directly.
2. **Build time**: every CMU clip (12 minutes) as the BVH folders, and the same
   retargeted clips written as FBX and as GLB (mixamo rig), built into a library
   with ``choreo library build``'s functions: seconds reading and retargeting,
   seconds cutting and precomputing, per minute of motion.

Blender comes from the tests' ``.blender-venv`` (``tests/exporters/test_blender.py``
builds it); without it the Blender rows are left out, said so in the JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from choreo.choreography.library import build_library
from choreo.mocap.dataset import FOLDER_STYLES, retargeted_dance
from choreo.mocap.library_clips import MotionSource, read_sources, sources_from_folders
from choreo.mocap.readers import read_takes
from choreo.mocap.retarget import retarget
from choreo.mocap.roundtrip import pose_error_m
from choreo.motion.motion import Motion
from exporters.bvh import write_bvh
from exporters.fbx import write_fbx
from exporters.gltf import write_glb

REPO = Path(__file__).resolve().parents[1]
MOCAP = REPO.parent / "shared" / "data" / "mocap"
BLENDER_PYTHON = REPO / ".blender-venv" / "bin" / "python"
BLENDER_CONVERT = REPO / "tests" / "mocap" / "blender_convert.py"
CLIPS = {
    "salsa 60_09": "cmu_60_61_salsa/60_09_scaled.bvh",
    "breakdance 85_14": "cmu_85_breakdance/85_14_keijiro_neo30fps.bvh",
    "modern 05_02": "cmu_05_modern/05_02.bvh",
}
RIGS = {"smpl": "m", "mixamo": "cm"}


def _stats_mm(error_m: np.ndarray) -> dict[str, float]:
    mm = 1000.0 * error_m
    return {
        "mean": round(float(mm.mean()), 3),
        "p95": round(float(np.percentile(mm, 95)), 3),
        "max": round(float(mm.max()), 3),
    }


def _write(fmt: str, motion: Motion, path: Path, rig: str) -> Path:
    if fmt == "bvh":
        return write_bvh(motion, path, rig=rig, units=RIGS[rig])
    if fmt == "fbx":
        return write_fbx(motion, path, rig=rig, units=RIGS[rig])
    return write_glb(motion, path, rig=rig)


def round_trip(tmp: Path) -> dict:
    """Our exports of each clip, per rig and format, read back and retargeted: error against the source."""
    out: dict = {}
    for label, rel in CLIPS.items():
        source, _ = retargeted_dance(MOCAP / rel)
        out[label] = {"frames": source.n_frames, "fps": round(source.fps, 4)}
        for rig in RIGS:
            rows = {}
            for fmt in ("bvh", "fbx", "glb"):
                path = _write(fmt, source, tmp / f"{label.split()[1]}_{rig}.{fmt}", rig)
                (take,) = read_takes(path)
                rows[fmt] = _stats_mm(pose_error_m(retarget(take), source))
            for fmt in ("fbx", "glb"):
                rows[f"{fmt}_minus_bvh"] = {k: round(rows[fmt][k] - rows["bvh"][k], 3) for k in rows[fmt]}
            out[label][rig] = rows
    return out


def blender_round_trip(tmp: Path) -> dict:
    """Blender's FBX and GLB of each CMU BVH, read and retargeted, against the BVH read directly."""
    if not BLENDER_PYTHON.is_file():
        return {"skipped": f"no Blender: {BLENDER_PYTHON} is missing (the tests build it)"}
    exact = {"bake_anim_simplify_factor": 0.0}
    variants = {
        "fbx_y_up": ("fbx", exact),
        "fbx_z_up": ("fbx", exact | {"axis_up": "Z", "axis_forward": "Y"}),
        "fbx_simplified": ("fbx", {}),
        "glb": ("glb", {}),
    }
    jobs = [
        {"bvh": str(MOCAP / rel), "out": str(tmp / f"blender_{label.split()[1]}_{name}.{fmt}"),
         "format": fmt, "options": o}
        for label, rel in CLIPS.items()
        for name, (fmt, o) in variants.items()
    ]  # fmt: skip
    request = tmp / "blender.json"
    request.write_text(json.dumps({"jobs": jobs}))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    subprocess.run(
        [str(BLENDER_PYTHON), str(BLENDER_CONVERT), str(request)], check=True, capture_output=True, env=env
    )
    out: dict = {}
    for label, rel in CLIPS.items():
        reference = retarget(read_takes(MOCAP / rel)[0])
        out[label] = {}
        for name, (fmt, _) in variants.items():
            (take,) = read_takes(tmp / f"blender_{label.split()[1]}_{name}.{fmt}")
            out[label][name] = _stats_mm(pose_error_m(retarget(take), reference)) | {
                "fps": round(take.fps, 4)
            }
    return out


def _timed_build(sources: list[MotionSource]) -> dict:
    start = time.perf_counter()
    read = read_sources(sources)
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    library = build_library(read.clips, version="bench")
    build_s = time.perf_counter() - start
    minutes = sum(c.motion.n_frames / c.motion.fps for c in read.clips) / 60.0
    return {
        "files": len(sources),
        "refused": len(read.refused),
        "minutes_of_motion": round(minutes, 2),
        "phrases": int(library.phrase_key.size),
        "read_and_retarget_s": round(read_s, 2),
        "cut_and_precompute_s": round(build_s, 2),
        "s_per_minute": round((read_s + build_s) / minutes, 2),
        "read_s_per_minute": round(read_s / minutes, 2),
    }


def build_times(tmp: Path) -> dict:
    """The CMU folders as BVH, and their retargeted clips as FBX and GLB, built into a library."""
    bvh = sources_from_folders([MOCAP / folder for folder in FOLDER_STYLES])
    out = {"bvh": _timed_build(bvh)}
    for fmt in ("fbx", "glb"):
        sources = []
        for source in bvh:
            motion, _ = retargeted_dance(source.path)
            path = _write(fmt, motion, tmp / f"{fmt}_{source.path.stem}.{fmt}", "mixamo")
            sources.append(MotionSource(path, source.style, source.credit, f"{fmt}/{path.name}"))
        out[fmt] = _timed_build(sources)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "library_formats.json")
    args = parser.parse_args()
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="choreo-bench-formats-") as tmp_name:
        tmp = Path(tmp_name)
        report = {
            "command": "python -P bench/library_formats.py",
            "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()},
            "load_average": os.getloadavg(),
            "error": "joints relative to the pelvis, mm, against the source (our exports) or against the "
            "BVH read directly (Blender's)",
            "round_trip": round_trip(tmp),
            "blender": blender_round_trip(tmp),
            "build": build_times(tmp),
        }
    report["wall_s"] = round(time.time() - started, 1)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
