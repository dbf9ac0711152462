"""A dance in a team style built from FBX files, scored by ``choreo eval`` like the shipped styles.

Usage::

    .venv/bin/python -P bench/eval_team_style.py --data /work/evaldata/data \\
        [--seeds 1] [--out bench/results/eval_team_style.json]

What a content team would do, with material whose shipped twin the held-out
evaluation already scores: the CMU modern-dance clips go through Blender (BVH
in, FBX out with Blender's default export settings: simplified curves,
irregular keys), and the FBX files become a team style, ``contemporary``,
built by ``choreo library build``'s functions without the held-out clip
(05_20), as the shipped evaluation's library is. ``choreo eval`` then dances
the six held-out songs in it and scores them against references of the team
style's own files:

- ``--reference``: the held-out clip's FBX retimed onto the held-out songs (the
  metrics' reference rows, ``write_reference`` of ``choreo prepare-data``),
  for spread, reach, energy and foot skating against the style;
- ``--style-reference``: the style centroids of ``--data``/train.npz's salsa and
  breakdance (the shipped styles the team style must be told apart from; its
  modern rows are the same material, so they are left out) and the team
  style's own FBX clips, for style separability.

The JSON holds the ``choreo eval`` report and, beside it, the shipped modern
style's numbers from ``bench/results/eval_plan30.json`` (the same material
from BVH, danced by the held-out-free library).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from choreo.audio import analyze_song
from choreo.choreography.library import build_library
from choreo.mocap.dataset import DATA_FPS, Clip, Song, retargeted_take, write_reference
from choreo.mocap.library_clips import MotionSource, read_sources
from choreo.mocap.readers import read_takes
from choreo.motion.resample import resample

REPO = Path(__file__).resolve().parents[1]
MUSIC = REPO.parent / "shared" / "data" / "music"
MOCAP = REPO.parent / "shared" / "data" / "mocap" / "cmu_05_modern"
BLENDER_PYTHON = REPO / ".blender-venv" / "bin" / "python"
BLENDER_CONVERT = REPO / "tests" / "mocap" / "blender_convert.py"
STYLE = "contemporary"
HELD_OUT = "05_20"
sys.path.insert(0, str(REPO))
from bench.eval_plan import HELD_OUT_SONGS  # noqa: E402


def blender_fbx(out: Path) -> list[Path]:
    """Every CMU modern clip as the FBX Blender's exporter writes by default."""
    out.mkdir(parents=True)
    jobs = [
        {"bvh": str(p), "out": str(out / f"{p.stem}.fbx"), "format": "fbx"}
        for p in sorted(MOCAP.glob("*.bvh"))
    ]
    request = out.parent / "blender.json"
    request.write_text(json.dumps({"jobs": jobs}))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    subprocess.run(
        [str(BLENDER_PYTHON), str(BLENDER_CONVERT), str(request)], check=True, capture_output=True, env=env
    )
    return sorted(out.glob("*.fbx"))


def style_reference(train: Path, clips: list, out: Path) -> Path:
    """train.npz's salsa and breakdance sequences, and the team clips at 30 fps as the team style's."""
    with np.load(train, allow_pickle=False) as data:
        styles = [str(s) for s in data["styles"]]
        keep = [i for i, s in enumerate(data["style"]) if styles[s] in ("salsa", "breakdance")]
        chunks = [data["motion"][data["offsets"][i] : data["offsets"][i] + data["lengths"][i]] for i in keep]
        names = [styles[data["style"][i]] for i in keep]
        clip_names = [str(data["clip"][i]) for i in keep]
    for clip in clips:
        chunks.append(resample(clip.motion, DATA_FPS).to_array().astype(np.float16))
        names.append(STYLE)
        clip_names.append(clip.name)
    order = sorted(set(names))
    lengths = np.array([len(c) for c in chunks], dtype=np.int64)
    np.savez_compressed(
        out,
        motion=np.concatenate(chunks),
        offsets=np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64),
        lengths=lengths,
        style=np.array([order.index(n) for n in names], dtype=np.int64),
        styles=np.array(order),
        clip=np.array(clip_names),
        fps=np.int64(DATA_FPS),
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="choreo prepare-data's output (train.npz)")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "eval_team_style.json")
    args = parser.parse_args()
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="choreo-team-style-") as tmp_name:
        tmp = Path(tmp_name)
        files = blender_fbx(tmp / STYLE)
        credit = "The data used in this project was obtained from mocap.cs.cmu.edu (through Blender's FBX)"
        sources = [MotionSource(p, STYLE, credit, f"{STYLE}/{p.name}") for p in files]
        start = time.perf_counter()
        read = read_sources(sources, exclude=[HELD_OUT])
        library = build_library(read.clips, version="team-contemporary")
        build_s = time.perf_counter() - start
        library_path = tmp / "team.npz"
        library_sha256 = library.save(library_path)
        (take,) = read_takes(tmp / STYLE / f"{HELD_OUT}.fbx")
        motion, quality = retargeted_take(take)
        held_out = [Clip(HELD_OUT, STYLE, f"{STYLE}/{HELD_OUT}.fbx", motion, True, quality)]
        songs = [Song(Path(s).name, "", analyze_song(MUSIC / s, fps=DATA_FPS), True) for s in HELD_OUT_SONGS]
        reference = tmp / "reference.npz"
        write_reference(reference, held_out, songs, np.random.default_rng(0), styles=(STYLE,))
        centroids = style_reference(args.data / "train.npz", read.clips, tmp / "style_reference.npz")
        report_path = tmp / "eval.json"
        command = [
            sys.executable, "-m", "choreo.cli.main", "eval", *[str(MUSIC / s) for s in HELD_OUT_SONGS],
            "--seeds", str(args.seeds), "--style", STYLE, "--library", str(library_path),
            "--reference", str(reference), "--style-reference", str(centroids),
            "--music-dir", str(MUSIC / "cc"), "--music-dir", str(MUSIC / "gpl"), "--json", str(report_path),
        ]  # fmt: skip
        eval_start = time.time()
        done = subprocess.run(
            command, capture_output=True, text=True, cwd=REPO, env=os.environ | {"PYTHONPATH": str(REPO)}
        )
        if not report_path.is_file():
            raise SystemExit(f"choreo eval failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        evaluated = json.loads(report_path.read_text())
    shipped = json.loads((REPO / "bench" / "results" / "eval_plan30.json").read_text())["blend"]["held_out"]
    report = {
        "command": " ".join(
            ["python -P bench/eval_team_style.py", "--data", str(args.data), "--seeds", str(args.seeds)]
        ),
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()},
        "team_style": {
            "style": STYLE,
            "files": len(files),
            "clips": len(read.clips),
            "refused": [{"file": r.file, "reason": r.reason} for r in read.refused],
            "minutes": library.coverage()[STYLE]["minutes"],
            "phrases": library.coverage()[STYLE]["phrases"],
            "build_s": round(build_s, 2),
            "library_sha256": library_sha256,
        },
        "eval_wall_s": round(time.time() - eval_start, 1),
        "eval_exit": done.returncode,
        "eval": evaluated,
        "shipped_modern_from_bvh": {
            "by_style": shipped["summary"]["by_style"]["modern"],
            "generated_mean": shipped["summary"]["generated_mean"],
            "source": "bench/results/eval_plan30.json (blend, held-out songs, style auto)",
        },
        "wall_s": round(time.time() - started, 1),
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    summary = evaluated["summary"]
    print(json.dumps({"met": summary["met"], "by_style": summary["by_style"].get(STYLE)}, indent=2))


if __name__ == "__main__":
    main()
