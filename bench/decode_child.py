"""A short song's decode and analysis: in the worker's own process, in a fresh child of a cold
forkserver, in a fresh child of a warmed one, and in a long-lived child of the warmed one
(``worker.isolated``, ``worker.warm_decode``).

A CPU worker decodes and analyses each song in a child process, so that a deadline can kill a decoder
that hangs. A child forked for each song costs a fork, and, if the forkserver has only imported the
pipeline, the set-up a first analysis does (filterbanks, FFT plans, codec set-up), redone in every
child and thrown away with it; the warmed forkserver has analysed a few seconds of clicks once. What
ships keeps each pool thread's child for call after call (``child_reused``): a song pays two messages.

Three modes, each in a process of its own (as each worker has one forkserver), fresh each round,
take the same songs in turns: ``--rounds`` rounds over ``--songs`` distinct 6 s WAV cuts (the load
run's songs), each song run in every mode before the next, the order rotated song by song, after one
song not counted (a long-lived worker's process is warm too). Per song: the wall time of the call
and the CPU it cost, all processes together (the caller; the child, from its fork to its answer;
the forkserver's share, its fork).
Writes ``bench/results/decode_child.json``::

    .venv/bin/python -P bench/decode_child.py --songs 12 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MODES = ("in_process", "child_cold", "child_warm", "child_reused")
ENV = {"OMP_NUM_THREADS": "1", "CHOREO_ENGINE_THREADS": "1"}
"""As the stack runs its workers."""


def timed_prepare(song: Path, fps: int) -> tuple[float, float, int, int]:
    """Decode and analyse ``song``; this process's CPU seconds before and after, the frames found and
    this process's id.

    Module-level (and this module importable as ``bench.decode_child``), so that it pickles into a
    forkserver's child. A forked child starts with no CPU time of its own, so there the CPU is the
    child's from its fork: before the call, what starting it cost.
    """
    from choreo.pipeline import prepare_song

    started = time.process_time()
    features = prepare_song(song, fps=fps)
    return started, time.process_time(), int(features.n_frames), os.getpid()


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) another process has used: its CPU-time clock (Linux's
    ``clock_getcpuclockid``, made by hand as Python does not expose it), to the nanosecond."""
    return time.clock_gettime(((~pid) << 3) | 2)


def serve_mode(mode: str) -> None:
    """Decode and analyse each song whose path comes on stdin in ``mode``; one JSON row out for each."""
    from multiprocessing import forkserver

    from choreo.runners import native_fps
    from worker import isolated
    from worker.isolated import PRELOAD, run_isolated, start_forkserver

    fps = native_fps("blend")
    server_pid = 0
    if mode != "in_process":
        # Cold: the forkserver as it was, the pipeline imported and nothing run. Both preload this
        # script too (as the main module, which each child would otherwise run again, and by its
        # name, for the call), which a worker's children need not import.
        preload = [m for m in PRELOAD if mode != "child_cold" or m != "worker.warm_decode"]
        multiprocessing.get_context("forkserver").set_forkserver_preload(
            [*preload, "__main__", "bench.decode_child"]
        )
        start_forkserver()
        server_pid = forkserver._forkserver._forkserver_pid  # type: ignore[attr-defined]
    if mode in ("child_cold", "child_warm"):
        isolated.CALLS_PER_CHILD = 1  # a fresh child for every song, as before the children were kept
    child_pid = 0  # the kept child, known from the call before
    for line in sys.stdin:
        call = partial(timed_prepare, Path(line.strip()), fps)
        server = _cpu_of(server_pid) if server_pid else 0.0
        kept_before = _cpu_of(child_pid) if child_pid else 0.0
        wall, mine = time.perf_counter(), time.process_time()
        if mode == "in_process":
            _, _, frames, _ = call()
            child_start = child = 0.0
        else:
            child_start, child, frames, pid = run_isolated(call, timeout_s=60, what="decoding the song")
        wall, mine = time.perf_counter() - wall, time.process_time() - mine
        if mode == "child_reused":
            # the kept child's CPU over this call, its messages included (none before its first call)
            child_start, child = 0.0, (_cpu_of(pid) - kept_before if pid == child_pid else child)
            child_pid = pid
        server = _cpu_of(server_pid) - server if server_pid else 0.0
        row = {
            "wall_s": wall,
            "cpu_s": mine + child + server,
            "caller_cpu_s": mine,
            "child_cpu_s": child,
            "child_start_cpu_s": child_start,
            "forkserver_cpu_s": server,
            "frames": frames,
        }
        print(json.dumps(row), flush=True)


def _summary(rows: list[dict[str, float]]) -> dict[str, float]:
    walls, cpus = [r["wall_s"] for r in rows], [r["cpu_s"] for r in rows]
    return {
        "songs": len(rows),
        "wall_ms_median": round(1000 * statistics.median(walls), 1),
        "wall_ms_mean": round(1000 * statistics.fmean(walls), 1),
        "cpu_ms_median": round(1000 * statistics.median(cpus), 1),
        "cpu_ms_mean": round(1000 * statistics.fmean(cpus), 1),
        **{
            f"{who}_cpu_ms_median": round(1000 * statistics.median(r[f"{who}_cpu_s"] for r in rows), 1)
            for who in ("caller", "child", "child_start", "forkserver")
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--songs", type=int, default=12, help="songs counted per run (one more runs first)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "decode_child.json")
    parser.add_argument("--run", choices=MODES, help=argparse.SUPPRESS)  # one mode's process
    args = parser.parse_args()
    if args.run:
        from bench import decode_child  # by its importable name, so the child can unpickle the call

        decode_child.serve_mode(args.run)
        return 0

    from bench.service import _cuts

    load_start = os.getloadavg()[0]
    runs: dict[str, list[list[dict[str, float]]]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="decode-child-") as tmp:
        songs = _cuts(args.songs + 1, 6.0, Path(tmp))
        for r in range(args.rounds):
            servers = {
                mode: subprocess.Popen(  # noqa: S603 - this interpreter, this script, fixed arguments
                    [sys.executable, "-P", __file__, "--run", mode],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                    # Python 3.11's forkserver ignores the sys.path it is handed: it imports from
                    # PYTHONPATH (this checkout) or the installed package.
                    env={**os.environ, **ENV, "PYTHONPATH": str(REPO)},
                    cwd=REPO,
                )
                for mode in MODES
            }
            rows: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
            for i, song in enumerate(songs):
                turn = (r + i) % len(MODES)
                for mode in MODES[turn:] + MODES[:turn]:  # one song in each mode, in turns
                    server = servers[mode]
                    assert server.stdin is not None and server.stdout is not None
                    server.stdin.write(f"{song}\n")
                    server.stdin.flush()
                    row = json.loads(server.stdout.readline())
                    if i:  # the first song warms each process, as a long-lived worker's is
                        rows[mode].append(row)
            for mode, server in servers.items():
                assert server.stdin is not None
                server.stdin.close()
                server.wait(timeout=60)
                runs[mode].append(rows[mode])
                print(f"round {r + 1} {mode}: {_summary(rows[mode])}", flush=True)
    summary = {mode: _summary([row for run in rounds for row in run]) for mode, rounds in runs.items()}
    base = summary["in_process"]
    for mode in MODES[1:]:
        for what in ("wall", "cpu"):
            summary[mode][f"{what}_ms_more_than_in_process"] = round(
                summary[mode][f"{what}_ms_median"] - base[f"{what}_ms_median"], 1
            )
    report: dict[str, Any] = {
        "command": "python -P bench/decode_child.py " + " ".join(sys.argv[1:]),
        "machine": {"platform": platform.platform(), "cpu_count": os.cpu_count()},
        "load_avg_1m": [round(load_start, 2), round(os.getloadavg()[0], 2)],
        "song": "6 s WAV cuts of the shared songs (bench/service.py's load-run cuts)",
        "summary": summary,
        "per_round": {mode: [_summary(run) for run in rounds] for mode, rounds in runs.items()},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
