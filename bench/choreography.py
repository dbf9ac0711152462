"""Time the choreography on real songs: music structure, plan and guide, warm, wall and CPU seconds.

Usage::

    .venv/bin/python -P bench/choreography.py [--out bench/results/choreography.json]

Songs: a 3-minute track, the 12.6-minute held-out track, and 20 minutes of
real tracks joined end to end (features extracted once, outside the timing).
Each is planned three times with seeds 0-2 after one warm-up; the median is
reported. CPU seconds (``time.process_time``) are given beside wall seconds
because this machine is shared: with other work running, wall time measures
the queue as much as the code.

``--before CHECKOUT`` (another checkout of this repository, say the commit
before a change to the planner) also plans the 20-minute song with that
checkout's ``choreo/choreography/planner.py``, in the same process, taking turns
with this tree's (``--ab-rounds`` rounds of seeds 0-2), and records both sides'
medians, their ratio and whether every plan came out the same.
"""

from __future__ import annotations

import argparse
import importlib.util
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


def _planner_from(checkout: Path):
    """``checkout``'s planner module, loaded beside this tree's (its imports are this tree's)."""
    spec = importlib.util.spec_from_file_location(
        "planner_before", checkout / "choreo" / "choreography" / "planner.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def planner_ab(library, checkout: Path, rounds: int) -> dict:
    """The 20-minute song planned by this tree's planner and ``checkout``'s, in turns, wall and CPU."""
    from choreo.audio.structure import analyze_structure
    from choreo.choreography import planner

    structure = analyze_structure(_features(SONGS["20min"], TWENTY_MIN_S))
    sides = {"after": planner, "before": _planner_from(checkout)}
    times: dict[str, dict[str, list[float]]] = {side: {"wall": [], "cpu": []} for side in sides}
    same = True
    load_before = [round(x, 2) for x in os.getloadavg()]
    for module in sides.values():  # warm-up
        module.plan_dance(library, structure, style="salsa", seed=0)
    for _ in range(rounds):
        for seed in (0, 1, 2):
            plans = {}
            for side, module in sides.items():
                wall, cpu = time.perf_counter(), time.process_time()
                plans[side] = module.plan_dance(library, structure, style="salsa", seed=seed)
                times[side]["wall"].append(time.perf_counter() - wall)
                times[side]["cpu"].append(time.process_time() - cpu)
            same &= plans["after"] == plans["before"]
    entry: dict = {"before": str(checkout), "rounds": rounds, "load_average_before": load_before}
    for side, laps in times.items():
        entry[side] = {
            f"plan_{kind}_s": {"median": round(statistics.median(v), 4), "min": round(min(v), 4)}
            for kind, v in laps.items()
        }
    for kind in ("wall", "cpu"):
        entry[f"median_{kind}_ratio_after_to_before"] = round(
            statistics.median(times["after"][kind]) / statistics.median(times["before"][kind]), 3
        )
    entry["plans_identical"] = bool(same)
    entry["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return entry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "choreography.json")
    parser.add_argument("--before", type=Path, default=None, help="a checkout whose planner to compare with")
    parser.add_argument("--ab-rounds", type=int, default=5, help="--before: rounds of seeds 0-2 per side")
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
    if args.before is not None:
        results["planner_ab_20min"] = planner_ab(library, args.before, args.ab_rounds)
        print("planner A/B", results["planner_ab_20min"], file=sys.stderr)
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(args.out)


if __name__ == "__main__":
    main()
