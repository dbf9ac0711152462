"""The chaos soak: the whole stack under random faults for a set time, checked only at the end.

Starts its own stack: a ``redis-server`` of its own (append-only, ``everysec``, as compose runs it;
never the shared Redis on 6379), SeaweedFS S3, the API and two CPU workers and a GPU worker
(:class:`tests.harness.localstack.LocalStack`; the network synthesizer runs on the GPU worker, ONNX
Runtime on the CPU where there is no GPU). For ``--minutes`` it submits albums (``--album`` songs, a
random mix of the blend and the network, random seeds) from ``--teams`` teams, each with a signed
callback, one every ``--submit-every-s``, while it injects faults at random moments: a worker
SIGKILLed (restarted 1-5 s later), a worker frozen with SIGSTOP for 2-20 s, Redis SIGKILLed and
restarted 1-5 s later, the S3 server stopped for 5-30 s, the API SIGKILLed and restarted. The
moments, kinds, targets and lengths come from ``--seed`` (printed; the same seed, the same plan).
Every operation and fault is recorded with its time.

Only at the end it checks, and writes a JSON report to ``--out`` (``bench/results/soak.json``):

- every acknowledged job is done, or failed with a code and a message that names the cause;
- none is still running ``--settle-s`` (120 s) after the last fault ended and the last submission
  was made (the later of the two: a job sent in the last second has its own time to run), nor
  once no job has ended for that long (a slow machine's backlog drains; a lost job never ends);
- each done job has exactly one set of artifacts and each ended job exactly one callback (signed);
- every file of every done job parses (BVH through the reader, the JSON summary);
- once every job is deleted, no object is left under ``jobs/``;
- the queues, the unacknowledged set and the lease records are empty, and no key made per job
  (:data:`PER_JOB_KEYS`) is left without an expiry; Redis' memory and keys by kind, before the
  first submission and after the clean-up, are in the report.

It also reports the faults injected, the jobs, submit-to-done latency and each fault's recovery
(from its repair to the next job done) as p50/p99, and throughput. Exit status 0 when every check
holds::

    .venv/bin/python -P bench/soak.py --minutes 20 --seed 7
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import soundfile as sf

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from choreo.motion.bvh_reader import read_bvh  # noqa: E402
from choreo.service.callbacks import verify  # noqa: E402
from choreo.service.keys import create_key  # noqa: E402
from choreo.service.queue import make_celery, queue_depths  # noqa: E402
from choreo.service.teams import rotate_callback_secret  # noqa: E402
from tests.harness.localstack import LocalStack  # noqa: E402
from tests.harness.redis_server import RedisServer  # noqa: E402

MUSIC = REPO.parent / "shared" / "data" / "music"
WORKERS = ("cpu-worker-0", "cpu-worker-1", "gpu-worker")
FAULTS = {"kill_worker": 3, "freeze_worker": 2, "redis_restart": 1, "s3_stop": 1, "api_restart": 1}
"""Fault kinds and their weights in the random plan."""
PER_JOB_KEYS = {"job", "run", "lease", "job_batches", "dedup", "rerenders", "announcing", "celery-task-meta"}
"""Kinds of Redis keys made per job: once every job is deleted, none may stay without an expiry."""


@dataclass
class Log:
    """Everything that happened, with seconds since the start."""

    t0: float = field(default_factory=time.monotonic)
    ops: list[dict[str, Any]] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    callbacks: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def now(self) -> float:
        return round(time.monotonic() - self.t0, 3)

    def op(self, **row: Any) -> None:
        with self.lock:
            self.ops.append({"t": self.now(), **row})


def _receiver(log: Log, secrets_by_team: dict[str, str]) -> ThreadingHTTPServer:
    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            team = self.path.rsplit("/", 1)[-1]
            stamp, signature = int(self.headers["X-Choreo-Timestamp"]), self.headers["X-Choreo-Signature"]
            event = json.loads(body)
            with log.lock:
                log.callbacks.append(
                    {
                        "t": log.now(),
                        "team": team,
                        "valid": verify(secrets_by_team[team], stamp, body, signature),
                    }
                    | {k: event.get(k) for k in ("event", "job_id", "state", "error_code")}
                )
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _cuts(folder: Path, cut_s: float, n: int) -> list[Path]:
    sources = sorted((MUSIC / "gpl").glob("*.ogg")) + sorted((MUSIC / "cc").glob("*.ogg"))
    if not sources:
        raise SystemExit(f"no songs under {MUSIC}")
    cuts = []
    for i in range(n):
        source = sources[i % len(sources)]
        rate = sf.info(source).samplerate
        start = int((10 + (i // len(sources)) * cut_s) * rate)
        data, _ = sf.read(source, start=start, frames=int(cut_s * rate), dtype="float32")
        cuts.append(folder / f"cut{i}.wav")
        sf.write(cuts[-1], data, rate)
    return cuts


class Soak:
    """The stack, the teams and the two threads (submitter, fault injector)."""

    def __init__(self, args: argparse.Namespace, root: Path) -> None:
        self.args, self.root = args, root
        self.rng = random.Random(args.seed)
        self.log = Log()
        self.redis = RedisServer(root / "redis")
        self.tokens: dict[str, str] = {}
        self.secrets: dict[str, str] = {}
        self.tracks: dict[str, list[str]] = {}
        self.acked: dict[str, dict[str, Any]] = {}
        self.stop = threading.Event()
        self.stack: LocalStack | None = None

    # -- the stack and its faults -----------------------------------------------------------------------
    def start(self) -> LocalStack:
        self.redis.start()
        self.stack = LocalStack(
            self.root / "stack",
            self.redis.url,
            cpu_workers=2,
            cpu_concurrency=2,
            gpu_concurrency=2,
            env={
                "CHOREO_STAGE_TIMEOUT_S": "30",
                "CHOREO_VISIBILITY_TIMEOUT_S": "60",
                "CHOREO_LEASE_TTL_S": "6",
                "CHOREO_REAP_INTERVAL_S": "1",
                "CHOREO_RETRY_BACKOFF_CAP_S": "4",
                "CHOREO_TASK_MAX_RETRIES": "40",  # 4 s apart: outlasts a 30 s S3 stop
                "CHOREO_CALLBACK_MAX_ATTEMPTS": "30",
                "CHOREO_CALLBACK_ALLOW_LOOPBACK": "true",
                "CHOREO_RATE_LIMIT_PER_MINUTE": "100000",
                "CHOREO_ENGINE_THREADS": "1",
                "OMP_NUM_THREADS": "1",
            },
        )
        self.stack.start()
        return self.stack

    def _api_ready(self, timeout_s: float = 60) -> None:
        assert self.stack is not None
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.stack.api_url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)

    def inject(self, kind: str) -> dict[str, Any]:
        """One fault, injected and repaired; returns its record."""
        assert self.stack is not None
        stack, rng = self.stack, self.rng
        row: dict[str, Any] = {"kind": kind, "t": self.log.now()}
        if kind == "kill_worker":
            row["target"], row["down_s"] = rng.choice(WORKERS), round(rng.uniform(1, 5), 1)
            stack.kill(row["target"], signal.SIGKILL)
            time.sleep(row["down_s"])
            stack.restart(row["target"])
        elif kind == "freeze_worker":
            row["target"], row["down_s"] = rng.choice(WORKERS), round(rng.uniform(2, 20), 1)
            stack.pause(row["target"])
            time.sleep(row["down_s"])
            stack.resume(row["target"])
        elif kind == "redis_restart":
            row["down_s"] = round(rng.uniform(1, 5), 1)
            self.redis.kill()
            time.sleep(row["down_s"])
            self.redis.start()
        elif kind == "s3_stop":
            row["down_s"] = round(rng.uniform(5, 30), 1)
            stack.kill("seaweed", signal.SIGINT)
            time.sleep(row["down_s"])
            stack.restart("seaweed")
        else:
            row["target"] = "api"
            stack.kill("api", signal.SIGKILL)
            stack.restart("api")
            self._api_ready()
        row["repaired_t"] = self.log.now()
        with self.log.lock:
            self.log.faults.append(row)
        print(f"[{row['repaired_t']:7.1f} s] fault {json.dumps(row)}", flush=True)
        return row

    def faults(self, until: float) -> None:
        kinds, weights = list(FAULTS), list(FAULTS.values())
        while True:
            gap = self.rng.uniform(self.args.fault_gap_s / 2, self.args.fault_gap_s * 1.5)
            if self.stop.wait(gap) or time.monotonic() + gap > until:
                return
            self.inject(self.rng.choices(kinds, weights)[0])

    # -- the clients -----------------------------------------------------------------------------------
    def client(self, team: str) -> httpx.Client:
        assert self.stack is not None
        return httpx.Client(
            base_url=self.stack.api_url, headers={"Authorization": f"Bearer {self.tokens[team]}"}, timeout=15
        )

    def setup_teams(self, songs: list[Path], hook: str) -> None:
        assert self.stack is not None
        for i in range(self.args.teams):
            team = f"soak{i}"
            self.tokens[team] = create_key(self.stack.ctx, team=team, name="soak", scopes=["content"])[1]
            self.secrets[team] = rotate_callback_secret(self.stack.ctx, team).secret
            self.tracks[team] = []
            with self.client(team) as client:
                for song in songs[i :: self.args.teams]:
                    with song.open("rb") as fh:
                        answer = client.post("/v1/tracks", files={"file": (song.name, fh, "audio/wav")})
                    answer.raise_for_status()
                    self.tracks[team].append(answer.json()["sha256"])
        self.hook = hook

    def submit_one(self) -> None:
        team = self.rng.choice(sorted(self.tokens))
        tracks = self.rng.sample(self.tracks[team], min(self.args.album, len(self.tracks[team])))
        synth = self.rng.choice(["blend", "model"])
        body = {
            "tracks": tracks,
            "callback_url": f"{self.hook}/{team}",
            "options": {"synth": synth, "seed": self.rng.randrange(2**31), "formats": ["bvh"]},
        }
        sent = time.monotonic()
        try:
            with self.client(team) as client:
                answer = client.post("/v1/jobs", json=body)
        except httpx.HTTPError as exc:
            self.log.op(op="submit", team=team, status=type(exc).__name__)
            return
        self.log.op(op="submit", team=team, status=answer.status_code, synth=synth)
        if answer.status_code == 202:
            for job in answer.json()["jobs"]:
                self.acked[job["id"]] = {"team": team, "sent": sent - self.log.t0, "synth": synth}

    def submitter(self, until: float) -> None:
        while time.monotonic() < until and not self.stop.is_set():
            self.submit_one()
            self.stop.wait(self.args.submit_every_s)


# -- the checks at the end --------------------------------------------------------------------------------
def _jobs_now(soak: Soak) -> dict[str, dict[str, Any]]:
    assert soak.stack is not None
    ctx = soak.stack.ctx
    keys = [ctx.key("job", j) for j in soak.acked]
    found = {}
    for job_id, raw in zip(soak.acked, ctx.redis.mget(keys) if keys else [], strict=True):
        found[job_id] = json.loads(raw) if raw else {"state": "missing"}
    return found


def _settle(soak: Soak, deadline: float, settle_s: float) -> dict[str, dict[str, Any]]:
    """The jobs once every one has ended, or once none has ended for ``settle_s`` past ``deadline``.

    A slow machine drains a backlog slowly but steadily; a stack that lost jobs stops ending them.
    So each job that ends moves the deadline to ``settle_s`` after it.
    """
    ended = 0
    while True:
        jobs = _jobs_now(soak)
        now_ended = sum(j["state"] in ("done", "failed", "cancelled") for j in jobs.values())
        if now_ended == len(jobs):
            return jobs
        if now_ended > ended:
            ended, deadline = now_ended, max(deadline, time.monotonic() + settle_s)
        if time.monotonic() > deadline:
            return jobs
        time.sleep(1)


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 2)


def _check_files(soak: Soak, jobs: dict[str, dict[str, Any]], cut_s: float) -> dict[str, list[str]]:
    """Each done job: one set of artifacts, every file parses."""
    assert soak.stack is not None
    storage = soak.stack.ctx.storage
    bad: dict[str, list[str]] = {"artifact_sets": [], "unparsed": []}
    folder = soak.root / "files"
    folder.mkdir(exist_ok=True)
    for job_id, job in jobs.items():
        if job["state"] != "done":
            continue
        kept = {k for k in storage.list_keys(f"jobs/{job_id}/") if "/work/" not in k}
        if kept != {*job["artifacts"].values(), f"jobs/{job_id}/job.json"}:
            bad["artifact_sets"].append(job_id)
        for kind, key in job["artifacts"].items():
            path = folder / Path(key).name
            try:
                storage.download_file(key, path)
                if kind == "bvh":
                    assert read_bvh(path).frames.shape[0] == round(cut_s * 30)
                elif kind == "json":
                    json.loads(path.read_text())
            except Exception as exc:  # noqa: BLE001 - recorded as a failed check
                bad["unparsed"].append(f"{key}: {exc!r}")
            path.unlink(missing_ok=True)
    return bad


def _resting(soak: Soak) -> dict[str, Any]:
    assert soak.stack is not None
    ctx = soak.stack.ctx
    r = ctx.redis
    counts: dict[str, int] = {}
    persistent: dict[str, int] = {}
    for key in r.scan_iter(count=1000):
        kind = key.removeprefix(ctx.settings.redis_prefix).split(":")[0]
        kind = "celery-task-meta" if kind.startswith("celery-task-meta") else kind
        counts[kind] = counts.get(kind, 0) + 1
        if r.ttl(key) == -1:
            persistent[kind] = persistent.get(kind, 0) + 1
    return {
        "used_memory_bytes": int(r.info("memory")["used_memory"]),
        "keys": int(r.dbsize()),
        "keys_by_kind": dict(sorted(counts.items())),
        "keys_without_ttl_by_kind": dict(sorted(persistent.items())),
        "queues": queue_depths(make_celery(ctx.settings)),
        "unacked": int(r.hlen("unacked")),
        "leased": int(r.zcard(ctx.key("leased"))),
        "queued": int(r.zcard(ctx.key("queued"))),
        "runs": sum(1 for _ in r.scan_iter(match=ctx.key("run", "*"), count=1000)),
        "leases": sum(1 for _ in r.scan_iter(match=ctx.key("lease", "*"), count=1000)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=None, help="else a random one, printed")
    parser.add_argument("--teams", type=int, default=3)
    parser.add_argument("--album", type=int, default=3, help="songs per submission")
    parser.add_argument("--songs", type=int, default=12, help="distinct song cuts, shared out to the teams")
    parser.add_argument("--cut-s", type=float, default=6.0)
    parser.add_argument("--submit-every-s", type=float, default=15.0)
    parser.add_argument("--fault-gap-s", type=float, default=30.0, help="mean seconds between faults")
    parser.add_argument("--settle-s", type=float, default=120.0)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "soak.json")
    args = parser.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(2**31)
    print(f"soak: seed {args.seed}, {args.minutes:g} minutes", flush=True)
    if shutil.which("redis-server") is None:
        raise SystemExit("redis-server is not installed")
    root = Path(tempfile.mkdtemp(prefix="choreo-soak-"))
    print(f"soak: logs in {root}/stack/logs", flush=True)
    soak = Soak(args, root)
    load_before = os.getloadavg()[0]
    try:
        stack = soak.start()
        receiver = _receiver(soak.log, soak.secrets)
        soak.setup_teams(
            _cuts(root, args.cut_s, args.songs), f"http://127.0.0.1:{receiver.server_address[1]}/hook"
        )
        baseline = _resting(soak)
        soak.log.t0 = time.monotonic()
        until = soak.log.t0 + args.minutes * 60
        submitter = threading.Thread(target=soak.submitter, args=(until,), daemon=True)
        submitter.start()
        soak.faults(until)
        submitter.join()
        last_fault = max([f["repaired_t"] for f in soak.log.faults], default=soak.log.now())
        settle_from = max(last_fault, soak.log.now())
        jobs = _settle(soak, soak.log.t0 + settle_from + args.settle_s, args.settle_s)
        ended_t = soak.log.now()
        alive = {name: proc.poll() is None for name, proc in stack.processes.items()}
        time.sleep(5)  # room for a late, second callback
        files = _check_files(soak, jobs, args.cut_s)
        for job_id, info in soak.acked.items():
            with soak.client(info["team"]) as client:
                client.delete(f"/v1/jobs/{job_id}")
        orphans = sorted(stack.ctx.storage.list_keys("jobs/"))
        time.sleep(3)
        after = _resting(soak)
        receiver.shutdown()
    finally:
        if soak.stack is not None:
            soak.stack.stop()
        soak.redis.kill()
    report = _report(soak, args, jobs, files, orphans, baseline, after, last_fault, ended_t, load_before)
    report["processes_alive_after_settle"] = alive
    report["settle_from_t"] = settle_from
    report["logs_kept"] = None if all(report["checks"].values()) else str(root / "stack" / "logs")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(
        json.dumps({k: report[k] for k in ("seed", "checks", "jobs", "recovery_s", "throughput")}, indent=2)
    )
    if all(report["checks"].values()):
        shutil.rmtree(root, ignore_errors=True)
        return 0
    print(f"soak: a check failed; the stack's logs are kept in {report['logs_kept']}", flush=True)
    return 1


def _report(
    soak: Soak,
    args: argparse.Namespace,
    jobs: dict[str, dict[str, Any]],
    files: dict[str, list[str]],
    orphans: list[str],
    baseline: dict[str, Any],
    after: dict[str, Any],
    last_fault: float,
    ended_t: float,
    load_before: float,
) -> dict[str, Any]:
    log = soak.log
    states: dict[str, int] = {}
    codes: dict[str, int] = {}
    for job in jobs.values():
        states[job["state"]] = states.get(job["state"], 0) + 1
        if job["state"] == "failed":
            codes[job.get("error_code") or "none"] = codes.get(job.get("error_code") or "none", 0) + 1
    finished = [c for c in log.callbacks if c["event"] == "job.finished"]
    calls = {j: sum(1 for c in finished if c["job_id"] == j) for j in jobs}
    done_at = sorted(c["t"] for c in finished if c["state"] == "done")
    latency = [
        c["t"] - soak.acked[c["job_id"]]["sent"]
        for c in finished
        if c["state"] == "done" and c["job_id"] in soak.acked
    ]
    recovery = []
    for fault in log.faults:
        later = [t for t in done_at if t >= fault["repaired_t"]]
        if later:
            fault["next_done_after_s"] = round(later[0] - fault["repaired_t"], 2)
            recovery.append(fault["next_done_after_s"])
    submits = [o for o in log.ops if o["op"] == "submit"]
    span_h = max((done_at[-1] if done_at else 0.0), 1.0) / 3600
    failed_named = all(
        j.get("error_code") and j.get("error_message") for j in jobs.values() if j["state"] == "failed"
    )
    checks = {
        "every_job_ended": all(j["state"] in ("done", "failed", "cancelled") for j in jobs.values()),
        "failures_name_their_cause": failed_named,
        "none_running_after_settle": not any(
            j["state"] not in ("done", "failed", "cancelled") for j in jobs.values()
        ),
        "one_artifact_set_each": not files["artifact_sets"],
        "one_callback_each": all(n == 1 for n in calls.values()),
        "callbacks_signed": all(c["valid"] for c in log.callbacks),
        "every_file_parses": not files["unparsed"],
        "no_orphan_objects": not orphans,
        "queues_and_leases_at_rest": after["queues"] == {"cpu": 0, "gpu": 0}
        and after["unacked"] == after["leased"] == after["queued"] == after["runs"] == after["leases"] == 0,
        "no_per_job_key_kept_for_good": not set(after["keys_without_ttl_by_kind"]) & PER_JOB_KEYS,
    }
    return {
        "what": "chaos soak of the whole stack (bench/soak.py): random worker SIGKILL/SIGSTOP, Redis "
        "SIGKILL+restart, S3 stops, API restarts while teams submit albums; checked at the end",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "seed": args.seed,
        "minutes": args.minutes,
        "checks": checks,
        "faults": {
            "injected": len(log.faults),
            "by_kind": {k: sum(1 for f in log.faults if f["kind"] == k) for k in FAULTS},
            "last_repaired_t": last_fault,
        },
        "jobs": {
            "acknowledged": len(jobs),
            "by_state": states,
            "failed_by_code": codes,
            "submissions": len(submits),
            "submissions_refused": sum(1 for o in submits if o["status"] != 202),
            "all_ended_t": ended_t,
        },
        "latency_s": {"p50": _percentile(latency, 0.5), "p99": _percentile(latency, 0.99)},
        "recovery_s": {
            "what": "from a fault's repair to the next job done",
            "p50": _percentile(recovery, 0.5),
            "p99": _percentile(recovery, 0.99),
            "max": max(recovery, default=None),
        },
        "throughput": {"songs_done": len(done_at), "songs_per_hour": round(len(done_at) / span_h, 1)},
        "problems": {
            "artifact_sets": files["artifact_sets"],
            "unparsed": files["unparsed"][:20],
            "orphans": orphans[:20],
            "callbacks_not_one": {j: n for j, n in calls.items() if n != 1},
            "not_ended": {
                j: v["state"] for j, v in jobs.items() if v["state"] not in ("done", "failed", "cancelled")
            },
        },
        "redis": {"before": baseline, "after_cleanup": after},
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_before": round(load_before, 2),
            "load_average_after": round(os.getloadavg()[0], 2),
        },
        "log": {"faults": log.faults, "ops": log.ops, "callbacks": log.callbacks},
    }


if __name__ == "__main__":
    raise SystemExit(main())
