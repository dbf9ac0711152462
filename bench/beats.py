"""Beat and downbeat tracking scored against songs whose beats are known by construction.

Usage::

    .venv/bin/python -P bench/beats.py [--cache ~/.cache/choreo/beat-truth]
        [--trackers choreo,choreo-features,librosa,librosa-plp,beat-pointer]
        [--out bench/results/beats.json] [--table bench/results/beats.md]

Builds the beat-truth set into ``--cache`` first (:mod:`bench.beat_truth.catalogue`:
56 songs in 9 categories, about 2.5 minutes of CPU the first time, nothing
after), writes ``bench/beat_truth/manifest.json``, then runs every tracker on
every song and scores it (:mod:`bench.beat_truth.scoring`): per song, per
category, per half of the set (tuning: even seeds; held-out: odd seeds) and
over all, with each tracker's warm CPU seconds per song-minute (decoding
included; each tracker is run once on a song before timing so imports and
compiled kernels are warm). ``bench/results/beats.md`` is the table for the
README. The goals (issue 20) are checked on the mean and per category.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.beat_truth.catalogue import CATEGORIES, SONGS, build, truth_of  # noqa: E402
from bench.beat_truth.scoring import score_song, summarise  # noqa: E402
from bench.beat_truth.trackers import TRACKERS  # noqa: E402

DEFAULT_CACHE = Path(os.environ.get("CHOREO_BEAT_TRUTH", Path.home() / ".cache" / "choreo" / "beat-truth"))
MANIFEST = REPO / "bench" / "beat_truth" / "manifest.json"

GOALS = {"f": 0.85, "cmlt": 0.8, "downbeat_f": 0.75, "max_off_beat_share": 0.2, "cpu_s_per_minute": 0.25}
"""Issue 20's goals: F and CMLt on the mean and in every category, downbeat F on the mean, no song over
20 % of its beats nearer the off-beats, CPU per song-minute warm."""


def run_tracker(name: str, cache: Path) -> dict:
    """Scores and CPU time of one tracker on every song of the set."""
    tracker = TRACKERS[name]
    tracker(cache / f"{SONGS[0].id}.flac")  # warm: imports, numba kernels, caches of filter banks
    songs, cpu_s, minutes = {}, 0.0, 0.0
    for song in SONGS:
        truth = truth_of(cache, song)
        start = time.process_time()
        beats, downbeats = tracker(cache / f"{song.id}.flac")
        spent = time.process_time() - start
        cpu_s += spent
        minutes += truth["duration_s"] / 60.0
        scores = score_song(
            truth["beats_s"], beats, truth["downbeats_s"], downbeats if downbeats is not None else None
        )
        songs[song.id] = scores | {"cpu_s": round(spent, 3), "beats": int(len(beats))}
        print(f"{name:16s} {song.id:40s} " + " ".join(f"{k}={v}" for k, v in scores.items()), file=sys.stderr)
    return {"cpu_s_per_minute": round(cpu_s / minutes, 4), "songs": songs, **_summaries(songs)}


def _summaries(songs: dict[str, dict]) -> dict:
    by_category = {
        category: summarise([songs[s.id] for s in SONGS if s.category == category]) for category in CATEGORIES
    }
    halves = {
        half: summarise([songs[s.id] for s in SONGS if s.held_out == (half == "held_out")])
        for half in ("tuning", "held_out")
    }
    return {"all": summarise(list(songs.values())), "categories": by_category, "halves": halves}


def goals_met(result: dict) -> dict[str, bool]:
    """Which of :data:`GOALS` one tracker's result meets."""
    categories = result["categories"].values()
    every = lambda metric, goal: result["all"][metric] >= goal and all(c[metric] >= goal for c in categories)  # noqa: E731
    downbeat = result["all"]["downbeat_f"]
    return {
        "f": every("f", GOALS["f"]),
        "cmlt": every("cmlt", GOALS["cmlt"]),
        "downbeat_f": downbeat is not None and downbeat >= GOALS["downbeat_f"],
        "max_off_beat_share": result["all"]["max_off_beat_share"] <= GOALS["max_off_beat_share"],
        "cpu_s_per_minute": result["cpu_s_per_minute"] <= GOALS["cpu_s_per_minute"],
    }


def markdown(results: dict[str, dict]) -> str:
    """The README table: each tracker's mean scores, its worst category, its halves and CPU."""

    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    lines = [
        "| tracker | beat F | CMLt | AMLt | downbeat F | right octave | worst off-beat share "
        "| worst category (F / CMLt) | held-out F / CMLt | tuning F / CMLt | CPU s per song-minute |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, result in results.items():
        total, halves = result["all"], result["halves"]
        worst = min(result["categories"].items(), key=lambda item: item[1]["cmlt"])
        lines.append(
            f"| {name} | {cell(total['f'])} | {cell(total['cmlt'])} | {cell(total['amlt'])} | "
            f"{cell(total['downbeat_f'])} | {total['octave_1_share']:.0%} | "
            f"{total['max_off_beat_share']:.0%} | "
            f"{worst[0]} ({cell(worst[1]['f'])} / {cell(worst[1]['cmlt'])}) | "
            f"{cell(halves['held_out']['f'])} / {cell(halves['held_out']['cmlt'])} | "
            f"{cell(halves['tuning']['f'])} / {cell(halves['tuning']['cmlt'])} | "
            f"{result['cpu_s_per_minute']:.3f} |"
        )
    lines += ["", "Beat F / CMLt per category:", ""]
    lines.append("| tracker | " + " | ".join(CATEGORIES) + " |")
    lines.append("|---|" + "---|" * len(CATEGORIES))
    for name, result in results.items():
        cells = [
            f"{cell(result['categories'][c]['f'])} / {cell(result['categories'][c]['cmlt'])}"
            for c in CATEGORIES
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--trackers", default=",".join(TRACKERS))
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "beats.json")
    parser.add_argument("--table", type=Path, default=REPO / "bench" / "results" / "beats.md")
    parser.add_argument(
        "--build-only", action="store_true", help="build the set and the manifest, score nothing"
    )
    args = parser.parse_args()

    manifest = build(args.cache, log=lambda line: print(line, file=sys.stderr))
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    if args.build_only:
        return
    load_before = os.getloadavg()
    # Trackers not run this time keep their last results.
    results = json.loads(args.out.read_text())["trackers"] if args.out.is_file() else {}
    for name in args.trackers.split(","):
        results[name] = run_tracker(name, args.cache)
        results[name]["goals_met"] = goals_met(results[name])
    results = {name: results[name] for name in TRACKERS if name in results}
    report = {
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_average_before": [round(x, 2) for x in load_before],
        "songs": len(SONGS),
        "goals": GOALS,
        "trackers": results,
    }
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    args.table.write_text(markdown(results), encoding="utf-8")
    print(markdown(results))


if __name__ == "__main__":
    main()
