"""The rebuild from storage, the answer to a lost Redis: seconds to re-index ``--jobs`` jobs.

Starts SeaweedFS S3 (through :class:`tests.harness.localstack.LocalStack`, with no CPU worker, so
nothing runs the resumed jobs) and a ``redis-server`` of its own on a free port, records
``--jobs`` jobs the way the API does (:func:`choreo.service.jobs.create_job`: storage, then the
index) for one team, all done but ``--in-flight`` of them, queued, then empties Redis
(``FLUSHDB``, as a lost Redis would be) and times :func:`choreo.service.rebuild.rebuild_index`
with the broker (what ``choreo admin rebuild-index`` runs): every record read back from the
bucket and indexed, the unfinished ones enqueued again from their stage. It checks that every job
is indexed again and writes the figures to ``--out`` (default ``bench/results/rebuild.json``)::

    .venv/bin/python -P bench/rebuild.py --jobs 10000
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from choreo.service.jobs import create_job  # noqa: E402
from choreo.service.queue import make_celery, queue_depths  # noqa: E402
from choreo.service.rebuild import rebuild_index  # noqa: E402
from choreo.service.records import JobOptions, JobRecord, JobState, new_id, now_s  # noqa: E402
from tests.harness.localstack import LocalStack  # noqa: E402
from tests.harness.redis_server import RedisServer  # noqa: E402


def _record(i: int, in_flight: bool) -> JobRecord:
    options = JobOptions(seed=i)
    sha = f"{i:064x}"
    done = not in_flight
    return JobRecord(
        id=new_id("job"),
        team="bench",
        track_sha256=sha,
        track_ext="ogg",
        track_name=f"song{i}.ogg",
        options=options,
        fingerprint=options.fingerprint(sha),
        state=JobState.DONE if done else JobState.QUEUED,
        progress=1.0 if done else 0.0,
        finished_at=now_s() if done else None,
        artifacts={"bvh": f"jobs/x{i}/song{i}.bvh", "json": f"jobs/x{i}/song{i}.json"} if done else {},
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--in-flight", type=int, default=100, help="of them not ended (enqueued again)")
    parser.add_argument("--writers", type=int, default=16, help="threads that record the jobs")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "rebuild.json")
    args = parser.parse_args()
    if shutil.which("redis-server") is None:
        raise SystemExit("redis-server is not installed")
    root = Path(tempfile.mkdtemp(prefix="choreo-rebuild-"))
    server = RedisServer(root / "redis", fsync=None)
    server.start()
    load_before = os.getloadavg()[0]
    try:
        url = server.url
        with LocalStack(root / "stack", url, cpu_workers=0) as stack:
            ctx = stack.ctx
            records = [_record(i, i < args.in_flight) for i in range(args.jobs)]
            started = time.monotonic()
            with ThreadPoolExecutor(args.writers) as pool:
                list(pool.map(lambda job: create_job(ctx, job), records))
            write_s = time.monotonic() - started
            memory_before = int(ctx.redis.info("memory")["used_memory"])
            ctx.redis.flushdb()
            celery = make_celery(ctx.settings)
            started = time.monotonic()
            counts = rebuild_index(ctx, celery)
            rebuild_s = time.monotonic() - started
            indexed = sum(bool(ctx.redis.exists(ctx.key("job", job.id))) for job in records)
            depths = queue_depths(celery)
            memory_after = int(ctx.redis.info("memory")["used_memory"])
    finally:
        server.kill()
    result = {
        "what": "choreo.service.rebuild.rebuild_index (what `choreo admin rebuild-index` runs) after "
        "FLUSHDB, "
        "with the broker: seconds to read every job record back from SeaweedFS S3 and index it, the "
        "unfinished ones enqueued again",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "jobs": args.jobs,
        "in_flight": args.in_flight,
        "counts": counts,
        "indexed_again": indexed,
        "resumed_in_queues": depths,
        "rebuild_s": round(rebuild_s, 2),
        "jobs_per_s": round(args.jobs / rebuild_s, 1),
        "record_s": round(write_s, 2),
        "redis_used_memory_bytes": {"before_flush": memory_before, "after_rebuild": memory_after},
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_before": round(load_before, 2),
            "load_average_after": round(os.getloadavg()[0], 2),
        },
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(result, indent=2))
    return 0 if indexed == args.jobs else 1


if __name__ == "__main__":
    raise SystemExit(main())
