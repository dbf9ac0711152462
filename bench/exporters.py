"""Export time and file size per format (BVH, FBX, GLB) for a 3-minute dance at 30 fps.

Usage::

    .venv/bin/python bench/exporters.py [--song PATH] [--minutes 3] [--fps 30] [--repeats 5]
                                        [--out bench/results/exporters.json]

The dance is a real one: the pipeline (``dance_song``, as ``choreo render``)
dances the song with the default synthesizer, and the first ``minutes`` of it
are exported. Without a usable model or song it falls back to a
synthetic dance of the same length and says so in the JSON (``motion_source``).
Each format and rig is written ``repeats`` times into a temporary directory; the
first write is reported apart (imports, caches), then the best and median of the
rest, and the file size in bytes.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# This script's own name shadows the ``exporters`` package when Python puts the
# script's folder first on the path; drop that entry before importing the package.
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)

import numpy as np  # noqa: E402

from choreo.contracts.provenance import Provenance  # noqa: E402
from choreo.motion.motion import Motion  # noqa: E402
from exporters.bvh import write_bvh  # noqa: E402
from exporters.fbx import write_fbx  # noqa: E402

GPL_MUSIC = Path(__file__).resolve().parents[2] / "shared" / "data" / "music" / "gpl"


def default_song(minutes: float) -> Path | None:
    """The shortest GPL track of the shared data that lasts at least ``minutes``."""
    manifest = GPL_MUSIC / "MANIFEST.tsv"
    if not manifest.exists():
        return None
    with manifest.open() as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if float(r["duration_s"]) >= minutes * 60]
    if not rows:
        return None
    return GPL_MUSIC / min(rows, key=lambda r: float(r["duration_s"]))["file"]


def pipeline_dance(song: Path, fps: int) -> tuple[Motion, Provenance]:
    """Dance ``song`` as ``choreo render`` does, with its default synthesizer."""
    from choreo.pipeline import RenderOptions, dance_song

    dance = dance_song(song, RenderOptions(fps=fps))
    return dance.motion, dance.generated.provenance


def synthetic_dance(n_frames: int, fps: int) -> tuple[Motion, Provenance]:
    """Every joint swinging on its own sines, the root walking and turning."""
    rng = np.random.default_rng(0)
    t = np.arange(n_frames) / fps
    rot = 0.6 * np.sin(2 * np.pi * rng.uniform(0.3, 2.0, 72) * t[:, None] + rng.uniform(0, 6.3, 72))
    root = np.stack([0.5 * np.sin(0.3 * t), 0.94 + 0.05 * np.sin(4 * t), 0.5 * np.cos(0.2 * t)], axis=1)
    provenance = Provenance("synthetic", 0, "salsa", "0" * 64, (), model_trained=False)
    return Motion(float(fps), root, rot.reshape(n_frames, 24, 3)), provenance


def time_writer(write: Callable[[Path], Path], path: Path, repeats: int) -> dict[str, float | int]:
    """Time ``write(path)`` ``repeats`` times; return first/best/median seconds and the size."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        write(path)
        times.append(time.perf_counter() - start)
    rest = times[1:] or times
    return {
        "first_s": round(times[0], 4),
        "best_s": round(min(rest), 4),
        "median_s": round(statistics.median(rest), 4),
        "size_bytes": path.stat().st_size,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--song", type=Path, default=None)
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--fps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("bench/results/exporters.json"))
    args = parser.parse_args()

    n_frames = int(round(args.minutes * 60 * args.fps))
    song = args.song or default_song(args.minutes)
    source = "synthetic"
    try:
        if song is None:
            raise FileNotFoundError("no song of that length in the shared data")
        motion, provenance = pipeline_dance(song, args.fps)
        if motion.n_frames < n_frames:
            raise ValueError(f"{song} gives only {motion.n_frames} frames")
        motion = motion.replace(
            root_translation=motion.root_translation[:n_frames], rotations=motion.rotations[:n_frames]
        )
        source = f"pipeline: {song.name}"
    except Exception as exc:  # the benchmark still measures the writers without a model
        print(f"pipeline dance unavailable ({exc}); using a synthetic dance")
        motion, provenance = synthetic_dance(n_frames, args.fps)

    writers: dict[str, Callable[[Path, str], Path]] = {
        "bvh": lambda p, rig: write_bvh(motion, p, rig=rig, provenance=provenance),
        "fbx": lambda p, rig: write_fbx(motion, p, rig=rig, provenance=provenance),
        "fbx_bones_only": lambda p, rig: write_fbx(motion, p, rig=rig, provenance=provenance, skinned=False),
    }
    if importlib.util.find_spec("exporters.gltf") is not None:
        from exporters.gltf import write_glb

        writers["glb"] = lambda p, rig: write_glb(motion, p, rig=rig, provenance=provenance)

    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, write in writers.items():
            for rig in ("smpl", "mixamo"):
                suffix = name.split("_")[0]
                path = Path(tmp) / f"dance_{rig}.{suffix}"
                results[f"{name}/{rig}"] = time_writer(lambda p, w=write, r=rig: w(p, r), path, args.repeats)
                print(name, rig, results[f"{name}/{rig}"])

    report = {
        "benchmark": "exporters",
        "motion_source": source,
        "duration_s": motion.duration_s,
        "fps": args.fps,
        "frames": motion.n_frames,
        "repeats": args.repeats,
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_1min": round(os.getloadavg()[0], 2),
        },
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
