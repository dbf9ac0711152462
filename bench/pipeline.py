"""Time each stage of ``choreo render`` on real songs, cold and warm; peak memory on 20 minutes.

Usage::

    .venv/bin/python -P bench/pipeline.py [--out bench/results/pipeline.json] [--synth blend|model]

Each song is rendered twice in a fresh process: the first render is *cold*
(imports, model load and first-call costs included), the second *warm* (what a
long-running worker sees). Stages: decode, features, engine (generation),
post-processing, export. A 20-minute song is made by joining real tracks end to
end, and the peak resident memory of a process rendering it is reported.
Each stage is timed in wall seconds and in CPU seconds of the process
(``cpu_s``): on a shared machine the wall time measures the queue as much as
the code. The load average before and after the run is recorded beside them.
Results are machine-dependent: compare ratios within one run.

``--warm-ab --before CHECKOUT`` times warm renders of the 3-minute song from this tree and from
``CHECKOUT`` (each with its own code), in fresh processes taking turns, ``--repeats`` each, and writes
``bench/results/warm_render.json``.

``--cold-cli`` measures what a new user pays instead: ``choreo render`` of the
3-minute song as a fresh process, ``--repeats`` times per list of formats (BVH
alone; BVH, FBX and GLB), its CPU seconds (user + system, from the kernel's
accounting of the finished child). With ``--before CHECKOUT`` (another checkout
of this repository, say the commit before a change) the same commands run from
it too, alternating with this tree's so that both see the same load, and every
file written is compared byte for byte (the JSON summary without its timings).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MUSIC = REPO.parent / "shared" / "data" / "music"
SONGS = {
    "1min": REPO / "demo" / "Kevin_MacLeod_-_Vibe_Ace.ogg",
    "3min": MUSIC / "gpl" / "hedgewars__Music__EarthRise.ogg",
    "7min": MUSIC / "gpl" / "warzone2100__original_soundtrack__track1.opus",
}
LONG_SOURCES = [
    MUSIC / "gpl" / "warzone2100__legacy_soundtrack__track10.opus",
    MUSIC / "gpl" / "warzone2100__aftermath_soundtrack__track22.opus",
]
TWENTY_MIN_S = 1200.0


def child_run(song: Path, repeats: int, formats: tuple[str, ...], synth: str = "blend") -> dict:
    """Render ``song`` ``repeats`` times in this (fresh) process, timing every stage.

    With the blend synthesizer (the default) the plan and its guide get their own lap.
    """
    import resource

    started, cpu_started = time.perf_counter(), time.process_time()
    from choreo.audio import extract_features, load_audio, probe_duration_s
    from choreo.choreography.library import shipped_library
    from choreo.pipeline import (
        RenderOptions,
        choreograph,
        export_dance,
        finish_motion,
        generate_motion,
    )
    from choreo.runners import model_fps, synth_runner

    import_s, import_cpu_s = time.perf_counter() - started, time.process_time() - cpu_started
    options = RenderOptions(formats=formats, synth=synth)
    fps = model_fps()
    sr = fps * 512
    runs = []
    for _ in range(repeats):
        timings: dict[str, float] = {}
        cpu: dict[str, float] = {}
        clock, cpu_clock = time.perf_counter(), time.process_time()

        def lap(name: str, _t: dict[str, float] = timings, _c: dict[str, float] = cpu) -> None:
            nonlocal clock, cpu_clock
            now, cpu_now = time.perf_counter(), time.process_time()
            _t[name], _c[name] = now - clock, cpu_now - cpu_clock
            clock, cpu_clock = now, cpu_now

        library = shipped_library()
        runner = synth_runner(options.synth, library)
        lap("load_engine_s")
        probe_duration_s(song)
        y = load_audio(song, sr=sr)
        lap("decode_s")
        features = extract_features(y, sr, fps=fps)
        lap("features_s")
        choreography = choreograph(features, options, library)
        lap("plan_and_guide_s")
        generated = generate_motion(
            runner, features, options, song_sha256="0" * 64, choreography=choreography
        )
        lap("engine_s")
        motion = finish_motion(generated, options)
        lap("postprocess_s")
        with tempfile.TemporaryDirectory() as out:
            exported = export_dance(motion, generated, options, Path(out), song.stem)
            exported.summary.write(Path(out) / f"{song.stem}.json")
        lap("export_s")
        timings["total_s"] = sum(timings.values())
        cpu["total_s"] = sum(cpu.values())
        runs.append(timings | {"cpu_s": cpu})
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "import_s": import_s,
        "import_cpu_s": import_cpu_s,
        "runs": runs,
        "duration_s": features.duration_s,
        "peak_rss_mb": peak_rss_mb,
    }


def _child(song: Path, repeats: int, formats: str, synth: str, checkout: Path = REPO) -> dict:
    """:func:`child_run` in a fresh process, with the code (and this script) of ``checkout``."""
    proc = subprocess.run(  # noqa: S603 - this interpreter, a checkout's own script, fixed arguments
        [sys.executable, "-P", str(checkout / "bench" / "pipeline.py"), "--child", str(song), str(repeats)]
        + [formats, synth],
        capture_output=True,
        text=True,
        check=True,
        cwd=checkout,
        env=os.environ | {"PYTHONPATH": str(checkout)},
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _twenty_minute_song(folder: Path) -> Path:
    """Real tracks joined end to end and cut to exactly 20 minutes (FLAC)."""
    import numpy as np
    import soundfile as sf

    from choreo.audio import load_audio

    sr = 22050
    parts, total = [], 0
    while total < TWENTY_MIN_S * sr:
        for src in LONG_SOURCES:
            y = load_audio(src, sr=sr)
            parts.append(y)
            total += y.size
    path = folder / "twenty_minutes.flac"
    sf.write(path, np.concatenate(parts)[: int(TWENTY_MIN_S * sr)], sr)
    return path


COLD_FORMATS = ("bvh", "bvh,fbx,glb")


def _cold_cli_cpu_s(checkout: Path, song: Path, formats: str, out: Path) -> float:
    """CPU seconds of one ``choreo render`` run as a fresh process from ``checkout``."""
    before = os.times()
    subprocess.run(
        [sys.executable, "-m", "choreo.cli.main", "render", str(song), "-o", str(out), "--formats", formats],
        check=True,
        capture_output=True,
        cwd=checkout,
        env=os.environ | {"PYTHONPATH": str(checkout)},
    )
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def _files_equal(a: Path, b: Path) -> dict[str, bool]:
    """Which of the files in ``a`` are byte-identical in ``b`` (a JSON summary without ``timings_s``)."""
    same = {}
    for left in sorted(a.iterdir()):
        right = b / left.name
        if left.suffix == ".json":
            same[left.name] = _untimed(left) == _untimed(right)
        else:
            same[left.name] = right.exists() and left.read_bytes() == right.read_bytes()
    return same


def _untimed(path: Path) -> dict:
    summary = json.loads(path.read_text())
    summary.pop("timings_s", None)
    return summary


def _summary(values: list[float]) -> dict:
    return {
        "runs": [round(v, 3) for v in values],
        "min": round(min(values), 3),
        "median": round(statistics.median(values), 3),
    }


def cold_cli(repeats: int, before: Path | None) -> dict:
    """Cold ``choreo render`` of the 3-minute song, this tree against ``before`` (optional)."""
    song = SONGS["3min"]
    trees = {"after": REPO} | ({"before": before.resolve()} if before else {})
    results: dict = {"song": song.name, "repeats": repeats, "load_average_before": _load(), "formats": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for formats in COLD_FORMATS:
            cpu: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(repeats):
                for name, checkout in trees.items():
                    cpu[name].append(_cold_cli_cpu_s(checkout, song, formats, Path(tmp) / name))
            entry: dict = {name: _summary(values) for name, values in cpu.items()}
            if before:
                entry["median_ratio_after_to_before"] = round(
                    statistics.median(cpu["after"]) / statistics.median(cpu["before"]), 3
                )
                entry["byte_identical"] = _files_equal(Path(tmp) / "before", Path(tmp) / "after")
            results["formats"][formats] = entry
            print(f"cold choreo render --formats {formats}: {json.dumps(entry)}", file=sys.stderr)
    results["load_average_after"] = _load()
    return results


def warm_ab(repeats: int, before: Path) -> dict:
    """Warm renders of the 3-minute song, this tree against ``before``: fresh processes taking turns,
    each rendering three times and counting the last two (the CPU of every stage)."""
    song = SONGS["3min"]
    trees = {"after": REPO, "before": before.resolve()}
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    load_before = _load()
    for r in range(repeats):
        for name in list(trees)[:: 1 if r % 2 else -1]:
            runs[name] += _child(song, 3, "bvh", "blend", trees[name])["runs"][1:]
    entry: dict = {}
    for name, warm in runs.items():
        stages = warm[0]["cpu_s"].keys()
        entry[name] = {
            "cpu_total_s": _summary([w["cpu_s"]["total_s"] for w in warm]),
            "cpu_median_by_stage_s": {
                k: round(statistics.median(w["cpu_s"][k] for w in warm), 3) for k in stages
            },
        }
    entry["median_ratio_after_to_before"] = round(
        entry["after"]["cpu_total_s"]["median"] / entry["before"]["cpu_total_s"]["median"], 3
    )
    return (
        {"song": song.name, "repeats": repeats, "load_average_before": load_before}
        | entry
        | {"load_average_after": _load()}
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "pipeline.json")
    parser.add_argument("--formats", default="bvh")
    parser.add_argument("--synth", default="blend", choices=("blend", "model"))
    parser.add_argument("--cold-cli", action="store_true", help="time cold `choreo render` runs instead")
    parser.add_argument("--warm-ab", action="store_true", help="warm renders against --before instead")
    parser.add_argument(
        "--before", type=Path, default=None, help="--cold-cli, --warm-ab: a checkout to compare with"
    )
    parser.add_argument("--repeats", type=int, default=5, help="--cold-cli, --warm-ab: runs per tree")
    parser.add_argument(
        "--child", nargs=4, metavar=("SONG", "REPEATS", "FORMATS", "SYNTH"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        song, repeats, formats, synth = args.child
        print(json.dumps(child_run(Path(song), int(repeats), tuple(formats.split(",")), synth)))
        return
    if args.warm_ab:
        if args.before is None:
            parser.error("--warm-ab needs --before CHECKOUT")
        out = args.out if args.out != parser.get_default("out") else args.out.with_name("warm_render.json")
        warm = warm_ab(args.repeats, args.before)
        out.write_text(json.dumps({"machine": _machine(), "when": _now()} | warm, indent=2) + "\n")
        print(out)
        return
    if args.cold_cli:
        out = args.out if args.out != parser.get_default("out") else args.out.with_name("cold_render.json")
        cold = cold_cli(args.repeats, args.before)
        out.write_text(json.dumps({"machine": _machine(), "when": _now()} | cold, indent=2) + "\n")
        print(out)
        return

    results: dict = {
        "machine": _machine(),
        "when": _now(),
        "load_average_before": _load(),
        "formats": args.formats,
        "synth": args.synth,
        "songs": {},
    }
    for label, song in SONGS.items():
        child = _child(song, 2, args.formats, args.synth)
        cold, warm = child["runs"]
        cold = dict(cold, total_s=cold["total_s"] + child["import_s"], import_s=child["import_s"])
        cold["cpu_s"] = dict(cold["cpu_s"], import_s=child["import_cpu_s"])
        cold["cpu_s"]["total_s"] += child["import_cpu_s"]
        results["songs"][label] = {
            "song": song.name,
            "duration_s": child["duration_s"],
            "cold": cold,
            "warm": warm,
        }
        print(
            f"{label}: warm {warm['total_s']:.2f} s ({warm['cpu_s']['total_s']:.2f} s CPU), "
            f"cold {cold['total_s']:.2f} s ({cold['cpu_s']['total_s']:.2f} s CPU)",
            file=sys.stderr,
        )
    with tempfile.TemporaryDirectory() as tmp:
        long_song = _twenty_minute_song(Path(tmp))
        child = _child(long_song, 1, args.formats, args.synth)
        results["twenty_minutes"] = {
            "duration_s": child["duration_s"],
            "peak_rss_mb": child["peak_rss_mb"],
            "run": child["runs"][0],
        }
        print(f"20min: peak RSS {child['peak_rss_mb']:.0f} MB", file=sys.stderr)
    results["load_average_after"] = _load()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(args.out)


def _machine() -> dict:
    return {"platform": platform.platform(), "processor": platform.processor(), "cpus": _cpus()}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _cpus() -> int:
    return len(os.sched_getaffinity(0))


if __name__ == "__main__":
    main()
