"""Stalls of a dance before and after the foot locks: does the lock step make the dancer stall?

Usage::

    PYTHONPATH=TREE .venv/bin/python -P bench/lock_stalls.py SONG [--seeds 1] [--style auto] \
        --library library-heldout.npz --out bench/results/lock_stalls.json

The song is danced as ``choreo eval`` dances it (blend, 30 fps, the given library), and
:func:`choreo.metrics.stalls.stalls` is measured with the song's bar energy (the same
music the evaluation uses) on the dance at each step of the clean-up: resampled only,
post-processed without the locks, and with them (the finished dance). With ``PYTHONPATH``
on another checkout it measures that checkout's code, so two commits' locks can be
compared on the same song. Besides the stall seconds it reports the dancer's median
energy (the mean squared joint speed over half a second), which the stall threshold is a
fraction of: a lock that makes the feet jump raises it and so counts more frames as stalled.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
from scipy.ndimage import uniform_filter1d

from choreo import pipeline
from choreo.audio import song_sha256
from choreo.choreography.library import shipped_library
from choreo.cli.eval import _features
from choreo.metrics.context import bar_values_at
from choreo.metrics.music_pool import MusicPool
from choreo.metrics.stalls import SMOOTHING_S, stalls
from choreo.motion import Motion, joint_positions
from choreo.postprocess.chain import postprocess
from choreo.runners import synth_runner

FPS = 30


def _measure(motion: Motion, music: np.ndarray) -> dict[str, float]:
    """Stall seconds, the longest stall and the median energy the threshold is taken from."""
    pos = joint_positions(motion)
    found = stalls(pos, music, fps=FPS)
    speed_sq = np.mean(np.sum(np.diff(pos, axis=0) ** 2, axis=-1), axis=1) * FPS**2
    window = round(SMOOTHING_S * FPS)
    energy = uniform_filter1d(np.append(speed_sq, speed_sq[-1]), size=window, mode="nearest")
    return {**found.to_dict(), "median_energy_m2_s2": round(float(np.median(energy)), 4)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("song", type=Path)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--style", default="auto")
    parser.add_argument("--library", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    library = shipped_library(args.library)
    runner = synth_runner("blend", library)
    features = _features(args.song, FPS)
    pool = MusicPool([args.song], lambda song: _features(song, FPS))
    rows = []
    for seed in range(args.seeds):
        options = pipeline.RenderOptions(fps=FPS, seed=seed, style=args.style, synth="blend")
        danced = pipeline.perform_song(runner, features, options, library, song_sha256=song_sha256(args.song))
        generated = danced.generated
        motion = pipeline.face_front(generated.motion)
        n_frames = pipeline.frames_for_duration(generated.song.duration_s, FPS)
        if motion.fps != FPS or motion.n_frames != n_frames:
            motion = pipeline.resample(motion, FPS, n_frames=n_frames)
        context = pool.context(args.song.name, duration_s=danced.motion.duration_s)
        music = bar_values_at(np.arange(n_frames) / FPS, context.bar_starts_s, context.bar_energy)
        steps = {
            "resampled": motion,
            "postprocessed_without_locks": postprocess(motion, lock=False),
            "finished": danced.motion,
        }
        row = {"seed": seed, "style": danced.choreography.plan.style}
        row.update({name: _measure(m, music) for name, m in steps.items()})
        rows.append(row)
        print(json.dumps(row), flush=True)
    code = Path(pipeline.__file__).resolve().parents[1]
    commit = subprocess.run(
        ["git", "-C", str(code), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    report = {
        "command": " ".join(sys.argv),
        "code": f"{code} at {commit}",
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "song": args.song.name,
        "library": str(args.library),
        "dances": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
