"""Time the choreography on real songs: music structure, plan and guide, warm, wall and CPU seconds.

Usage::

    .venv/bin/python -P bench/choreography.py [--out bench/results/choreography.json]

Songs: a 3-minute track, the 12.6-minute held-out track, and 20 minutes of
real tracks joined end to end (features extracted once, outside the timing).
Each is planned three times with seeds 0-2 after one warm-up; the median is
reported. CPU seconds (``time.process_time``) are given beside wall seconds
because this machine is shared: with other work running, wall time measures
the queue as much as the code.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
MUSIC = REPO.parent / "shared" / "data" / "music" / "gpl"
SONGS = {
    "3min": [MUSIC / "hedgewars__Music__EarthRise.ogg"],
    "12.6min": [MUSIC / "warzone2100__legacy_soundtrack__track10.opus"],
    "20min": [
        MUSIC / "warzone2100__legacy_soundtrack__track10.opus",
        MUSIC / "warzone2100__aftermath_soundtrack__track22.opus",
    ],
}
TWENTY_MIN_S = 1200.0


def _features(paths: list[Path], limit_s: float | None):
    from choreo.audio import extract_features, load_audio

    sr = 30 * 512
    y = np.concatenate([load_audio(p, sr=sr) for p in paths])
    if limit_s is not None:
        y = y[: int(limit_s * sr)]
    return extract_features(y, sr, fps=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "choreography.json")
    args = parser.parse_args()
    from choreo.audio.structure import analyze_structure
    from choreo.choreography.guide import build_guide
    from choreo.choreography.library import shipped_library
    from choreo.choreography.planner import plan_dance

    library = shipped_library()
    results: dict = {
        "machine": {"platform": platform.platform(), "processor": platform.processor()},
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "library_sha256": library.sha256,
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "songs": {},
    }
    for label, paths in SONGS.items():
        features = _features(paths, TWENTY_MIN_S if label == "20min" else None)
        rows = []
        for seed in (-1, 0, 1, 2):
            laps = {}
            wall, cpu = time.perf_counter(), time.process_time()
            structure = analyze_structure(features)
            laps["structure"] = (time.perf_counter() - wall, time.process_time() - cpu)
            wall, cpu = time.perf_counter(), time.process_time()
            plan = plan_dance(library, structure, style="salsa", seed=max(seed, 0))
            laps["plan"] = (time.perf_counter() - wall, time.process_time() - cpu)
            wall, cpu = time.perf_counter(), time.process_time()
            build_guide(library, plan, features.n_frames, features.fps)
            laps["guide"] = (time.perf_counter() - wall, time.process_time() - cpu)
            if seed >= 0:  # seed -1 is the warm-up
                rows.append(laps)
        entry = {
            "duration_s": features.duration_s,
            "bars": int(structure.n_bars),
            "segments": len(plan.segments),
        }
        for stage in ("structure", "plan", "guide"):
            entry[f"{stage}_wall_s"] = round(statistics.median(r[stage][0] for r in rows), 4)
            entry[f"{stage}_cpu_s"] = round(statistics.median(r[stage][1] for r in rows), 4)
        results["songs"][label] = entry
        print(label, entry, file=sys.stderr)
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(args.out)


if __name__ == "__main__":
    main()
