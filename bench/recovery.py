"""Crash recovery: seconds from a worker's SIGKILL mid-stage to its job done on another worker.

Starts the real service (:class:`tests.harness.localstack.LocalStack`: SeaweedFS
S3, uvicorn, Celery workers) with a ``redis-server`` of its own on a free port,
two CPU workers and two GPU workers, and the service's default lease settings
(``CHOREO_LEASE_TTL_S`` 10 s, ``CHOREO_REAP_INTERVAL_S`` 2 s) and timeouts (stage
75 s, visibility 90 s) unless given. For each run it submits one song (a
``--cut-s`` cut of a real song, the network synthesizer, so the job has a GPU
stage), freezes the worker that holds the chosen stage while it holds it,
SIGKILLs it, and measures from the kill until the reaper has sent the stage
again (the run record no longer names the dead holder) and until the job is
done, by the other worker of that queue; then it restarts the killed worker.
``unleased`` kills instead the CPU worker that holds a stage message with a 30 s
countdown (what a retry is), received and not leased, and measures until another
worker holds it (:mod:`choreo.service.liveness`) and until the job is done.
Medians per stage in ``--out`` (default ``bench/results/recovery.json``)::

    .venv/bin/python -P bench/recovery.py --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import soundfile as sf

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from choreo.client import ChoreoClient  # noqa: E402
from choreo.errors import ChoreoError  # noqa: E402
from choreo.service.jobs import create_job  # noqa: E402
from choreo.service.keys import create_key  # noqa: E402
from choreo.service.leases import queue_run, read_run  # noqa: E402
from choreo.service.queue import TASK_PERFORM, TASK_PREPARE, make_celery  # noqa: E402
from choreo.service.records import JobOptions, JobRecord, new_id  # noqa: E402
from choreo.service.tracks import get_track  # noqa: E402
from tests.harness.localstack import LocalStack  # noqa: E402
from tests.harness.redis_server import RedisServer  # noqa: E402

MUSIC = REPO.parent / "shared" / "data" / "music" / "gpl"


def _cuts(n: int, cut_s: float, folder: Path) -> list[Path]:
    """``n`` distinct ``cut_s``-second cuts (from 10 s in) of the shared GPL songs, one a song."""
    sources = sorted(MUSIC.glob("*.ogg"))
    if len(sources) < n:
        raise SystemExit(f"{n} songs needed under {MUSIC}, {len(sources)} found")
    cuts = []
    for i, source in enumerate(sources[:n]):
        rate = sf.info(source).samplerate
        data, _ = sf.read(source, start=10 * rate, frames=int(cut_s * rate), dtype="float32")
        cuts.append(folder / f"cut{i}.wav")
        sf.write(cuts[-1], data, rate)
    return cuts


def _one_kill(stack: LocalStack, client: ChoreoClient, song: Path, stage: str) -> dict[str, Any] | None:
    """One kill and its timings, or None when the stage ended before its worker could be frozen."""
    sha = client.upload_track(song)["sha256"]
    (job,) = client.submit([sha], synth="model")["jobs"]
    try:
        worker, job_id = stack.freeze_holder([job["id"]], stage, timeout_s=60)
    except ChoreoError as exc:
        print(f"missed: {exc}", flush=True)
        return None
    holder = read_run(stack.ctx, job_id).holder
    stack.kill(worker, signal.SIGKILL)
    killed = time.monotonic()
    requeued = None
    key = stack.ctx.key("job", job_id)
    while time.monotonic() - killed < 300:
        run = read_run(stack.ctx, job_id)
        if requeued is None and (run is None or run.holder != holder or run.stage != stage):
            requeued = time.monotonic() - killed
        state = json.loads(stack.ctx.redis.get(key) or "{}").get("state")
        if state in ("done", "failed", "cancelled"):
            break
        time.sleep(0.02)
    done = time.monotonic() - killed
    stack.restart(worker)
    return {
        "stage": stage,
        "killed": worker,
        "state": state,
        "kill_to_requeued_s": round(requeued or done, 2),
        "kill_to_done_s": round(done, 2),
    }


def _one_unleased(stack: LocalStack, client: ChoreoClient, song: Path) -> dict[str, Any] | None:
    """A stage message waiting out a 30 s countdown (what a retry is) in a CPU worker, received and not
    leased; that worker SIGKILLed: seconds until another worker holds the message (its heartbeat lapsed
    and the reaper gave it back) and until the job is done. None when no worker was seen holding it."""
    ctx = stack.ctx
    sha = client.upload_track(song)["sha256"]
    track = get_track(ctx, "bench", sha)
    assert track is not None
    options = JobOptions()
    job = create_job(
        ctx,
        JobRecord(
            id=new_id("job"), team="bench", track_sha256=sha, track_ext=track.ext, track_name=track.filename,
            options=options, fingerprint=options.fingerprint(sha),
        ),
    )  # fmt: skip
    epoch = queue_run(ctx, job.id, TASK_PREPARE)
    make_celery(ctx.settings).send_task(TASK_PREPARE, args=(job.id, epoch), queue="cpu", countdown=30)
    deadline = time.monotonic() + 20
    while (held := stack.message_holder(job.id)) is None:
        if time.monotonic() > deadline:
            print("missed: no worker was seen holding the message", flush=True)
            return None
        time.sleep(0.02)
    worker = held[0]
    stack.kill(worker, signal.SIGKILL)
    killed = time.monotonic()
    elsewhere = None
    key = ctx.key("job", job.id)
    while time.monotonic() - killed < 300:
        if elsewhere is None and stack.message_holder(job.id) is not None:
            elsewhere = time.monotonic() - killed
        state = json.loads(ctx.redis.get(key) or "{}").get("state")
        if state in ("done", "failed", "cancelled"):
            break
        time.sleep(0.02)
    done = time.monotonic() - killed
    stack.restart(worker)
    return {
        "stage": "unleased",
        "killed": worker,
        "state": state,
        "kill_to_held_elsewhere_s": round(elsewhere or done, 2),
        "kill_to_done_s": round(done, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="kills per stage")
    parser.add_argument("--cut-s", type=float, default=20.0, help="length of each song")
    parser.add_argument(
        "--stages",
        default=f"{TASK_PREPARE},{TASK_PERFORM},unleased",
        help="what to kill the holder of: stages, and unleased (a message received, not leased)",
    )
    parser.add_argument("--lease-ttl-s", type=float, default=None, help="else the service's default")
    parser.add_argument("--reap-interval-s", type=float, default=None, help="else the service's default")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "recovery.json")
    args = parser.parse_args()
    if shutil.which("redis-server") is None:
        raise SystemExit("redis-server is not installed")
    env = {"CHOREO_ENGINE_THREADS": "1", "OMP_NUM_THREADS": "1"}
    if args.lease_ttl_s is not None:
        env["CHOREO_LEASE_TTL_S"] = str(args.lease_ttl_s)
    if args.reap_interval_s is not None:
        env["CHOREO_REAP_INTERVAL_S"] = str(args.reap_interval_s)
    load_before = os.getloadavg()[0]
    runs: list[dict[str, Any]] = []
    missed = 0
    root = tempfile.mkdtemp(prefix="choreo-recovery-")
    print(f"stack logs in {root}/stack/logs", flush=True)
    server = RedisServer(Path(root) / "redis", fsync=None)
    server.start()
    try:
        url = server.url
        songs = iter(_cuts(min(6 * args.runs, 40), args.cut_s, Path(root)))
        with LocalStack(Path(root) / "stack", url, cpu_workers=2, env=env) as stack:
            stack.ensure_workers("gpu", 2)
            settings = stack.ctx.settings
            _, token = create_key(stack.ctx, team="bench", name="bench", scopes=["content"])
            with ChoreoClient(stack.api_url, token, timeout_s=300) as client:
                for stage in args.stages.split(","):
                    done = 0
                    while done < args.runs:
                        song = next(songs)
                        row = (
                            _one_unleased(stack, client, song)
                            if stage == "unleased"
                            else _one_kill(stack, client, song, stage)
                        )
                        if row is None:
                            missed += 1
                            continue
                        runs.append(row)
                        done += 1
                        print(json.dumps(row), flush=True)
    finally:
        server.kill()
    medians = {
        stage: {
            "runs": len(rows),
            "all_done": all(r["state"] == "done" for r in rows),
            **{
                name: statistics.median(r[name] for r in rows)
                for name in ("kill_to_requeued_s", "kill_to_held_elsewhere_s", "kill_to_done_s")
                if name in rows[0]
            },
        }
        for stage in args.stages.split(",")
        if (rows := [r for r in runs if r["stage"] == stage])
    }
    result = {
        "what": "SIGKILL of the worker holding a job's stage, another worker of its queue running: seconds "
        "until the reaper had sent the stage again (the run record no longer names the dead holder) and "
        "until the job was done; 'unleased': of the CPU worker holding a stage message with a 30 s "
        "countdown, received and not leased: seconds until another worker held it (the dead worker's "
        "heartbeat lapsed) and until the job was done (the countdown included)",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "settings": {
            "lease_ttl_s": settings.lease_ttl_s,
            "reap_interval_s": settings.reap_interval_s,
            "stage_timeout_s": settings.stage_timeout_s,
            "visibility_timeout_s": settings.visibility_timeout_s,
            "cut_s": args.cut_s,
            "workers": "2 CPU (threads, 2 each), 2 GPU (threads, 2 each; ONNX Runtime on the CPU)",
        },
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_before": round(load_before, 2),
            "load_average_after": round(os.getloadavg()[0], 2),
        },
        "missed": missed,
        "median": medians,
        "runs": runs,
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    shutil.rmtree(root)
    print(json.dumps(medians, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
