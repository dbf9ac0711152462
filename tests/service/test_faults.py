"""Fault injection: a stack of its own (its own redis-server too) with short timeouts, loopback only.

Each test breaks one thing while short songs render: a worker SIGKILLed mid-stage
(CPU, GPU) and restarted, or while another worker of its queue runs, a worker
frozen (SIGSTOP) mid-stage, Redis killed and restarted, the S3 server stopped
for 30 s, Redis emptied and rebuilt, a storage write failing once at each stage
boundary, a worker SIGKILLed while it holds a message it has not leased (its
heartbeat brings it back), and Redis (append-only, ``everysec``, as compose runs
it) SIGKILLed while submissions go on (no acknowledged one may be lost). Each
asserts that every job ended done (none stuck), storage and Redis agree, the
BVH parses, one set of artifacts, and each job got exactly one callback.

A worker is stopped mid-stage for certain, however short the stage (a 6 s
song's generation takes under a second): :meth:`LocalStack.freeze_holder`
waits for a job's lease of that stage, freezes the holder and checks that it
still holds it (a frozen worker cannot end its stage).
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
import redis
import soundfile as sf

from choreo.motion.bvh_reader import read_bvh
from choreo.service.callbacks import verify
from choreo.service.context import ServiceContext
from choreo.service.jobs import create_job
from choreo.service.keys import create_key
from choreo.service.leases import read_run
from choreo.service.queue import TASK_FINISH, TASK_PERFORM, TASK_PREPARE
from choreo.service.records import JobOptions, JobRecord, new_id
from choreo.service.teams import rotate_callback_secret
from choreo.service.tracks import get_track
from tests.harness.localstack import LocalStack, free_ports
from tests.service.helpers import MUSIC, SONGS, log_warnings, rebuild_index

pytestmark = [pytest.mark.service, pytest.mark.faults]

ENDED_STATES = ("done", "failed", "cancelled")
"""States a job does not leave."""

CUT_S = 6.0
VISIBILITY_TIMEOUT_S = 60
"""The broker's backstop here; a stage that lost its worker comes back within a lease TTL (6 s)."""
SOURCES = [
    SONGS["hungarian"],
    SONGS["vibe_ace"],
    SONGS["freezingpoint"],
    *sorted((MUSIC / "gpl").glob("hedgewars*.ogg")),
]


class _Receiver(BaseHTTPRequestHandler):
    events: list[dict] = []
    secret = ""

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        stamp, signature = int(self.headers["X-Choreo-Timestamp"]), self.headers["X-Choreo-Signature"]
        assert verify(type(self).secret, stamp, body, signature)
        type(self).events.append(json.loads(body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@dataclass
class FaultStack:
    local: LocalStack
    redis_cmd: list[str]
    token: str
    callback_url: str
    songs: list[Path]
    used: int = 0
    rendered: list[str] = field(default_factory=list)
    redis_proc: subprocess.Popen | None = None

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.local.api_url, headers={"Authorization": f"Bearer {self.token}"}, timeout=30
        )

    def kill_redis(self) -> None:
        """SIGKILL the test's redis-server and check that nothing answers on its port any more."""
        assert self.redis_proc is not None
        self.redis_proc.send_signal(signal.SIGKILL)
        self.redis_proc.wait(timeout=10)
        with pytest.raises(redis.ConnectionError):
            redis.Redis.from_url(self.local.env["CHOREO_REDIS_URL"], socket_connect_timeout=2).ping()

    def start_redis(self) -> None:
        """Start the test's redis-server (its append-only file brings the data back) and wait for it."""
        self.redis_proc = subprocess.Popen(self.redis_cmd, stdout=subprocess.DEVNULL, start_new_session=True)
        client = redis.Redis.from_url(self.local.env["CHOREO_REDIS_URL"])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if client.ping():
                    # This process answers, not one left over on the port (which would fail ours to bind).
                    assert self.redis_proc.poll() is None, "another redis-server holds the test's port"
                    return
            except redis.RedisError:
                time.sleep(0.2)
        raise AssertionError("the test's redis-server did not come back")

    def upload(self, n: int) -> list[str]:
        """Upload ``n`` songs not rendered before; returns their SHA-256s."""
        picked = self.songs[self.used : self.used + n]
        self.used += n
        assert len(picked) == n, "out of test songs"
        shas = []
        with self.client() as client:
            for path in picked:
                with path.open("rb") as fh:
                    answer = client.post("/v1/tracks", files={"file": (path.name, fh, "audio/wav")})
                assert answer.status_code == 201, answer.text
                shas.append(answer.json()["sha256"])
        return shas

    def submit(self, n: int) -> list[str]:
        """Upload ``n`` new songs and submit them as one album with a callback; returns the job ids.

        The jobs use the network synthesizer, so that their ``perform`` runs on the GPU worker and
        a fault can land in either queue's workers.
        """
        shas = self.upload(n)
        body = {"tracks": shas, "callback_url": self.callback_url, "options": {"synth": "model"}}
        with self.client() as client:
            answer = client.post("/v1/jobs", json=body)
            assert answer.status_code == 202, answer.text
        return [j["id"] for j in answer.json()["jobs"]]

    def wait_for_state(self, job_ids: list[str], states: set[str], timeout_s: float = 120) -> None:
        """Wait until any of the jobs is in one of ``states`` (a stage is under way)."""
        keys = [self.local.ctx.key("job", job_id) for job_id in job_ids]
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            # One read for all jobs, often: a short song's generation lasts well under a second.
            if any(raw and json.loads(raw)["state"] in states for raw in self.local.ctx.redis.mget(keys)):
                return
            time.sleep(0.01)
        raise AssertionError(f"no job reached {states} within {timeout_s} s")

    def wait_done(self, job_id: str, timeout_s: float) -> float:
        """Wait until the job is done (Redis); returns how long that took."""
        key, start = self.local.ctx.key("job", job_id), time.monotonic()
        while time.monotonic() - start < timeout_s:
            raw = self.local.ctx.redis.get(key)
            if raw and json.loads(raw)["state"] in ("done", "failed", "cancelled"):
                assert json.loads(raw)["state"] == "done", raw
                return time.monotonic() - start
            time.sleep(0.05)
        raise AssertionError(f"job {job_id} was not done within {timeout_s} s")

    def assert_all_done_once(
        self, job_ids: list[str], timeout_s: float = 240, *, callbacks: bool = True
    ) -> None:
        """Every job done (none stuck), storage equal to Redis, the BVH parses, one callback each."""
        ctx = self.local.ctx
        deadline = time.monotonic() + timeout_s
        jobs: dict[str, dict] = {}
        while time.monotonic() < deadline:
            # Only the jobs not ended yet are asked for again, and a 429 is waited out: polling
            # every job of a long album twice a second went over the key's rate limit, and every
            # answer after that was the limit's error, to the end of this test and the next ones.
            pending = [j for j in job_ids if jobs.get(j, {}).get("state") not in ENDED_STATES]
            if not pending:
                break
            try:
                with self.client() as client:
                    for job_id in pending:
                        answer = client.get(f"/v1/jobs/{job_id}")
                        if answer.status_code == 429:
                            time.sleep(float(answer.headers.get("Retry-After", 2)))
                            break
                        jobs[job_id] = answer.json()
            except (httpx.HTTPError, json.JSONDecodeError):
                pass
            time.sleep(0.5)
        states = {j: (v.get("state"), v.get("error_code"), v.get("error_message")) for j, v in jobs.items()}
        not_done = {j: states.get(j) for j in job_ids if states.get(j, (None,))[0] != "done"}
        assert not not_done, (not_done, log_warnings(self.local.log_dir, 20))
        for job_id in job_ids:
            # The end is announced (and so marked) by a write after the one that marked it done.
            announced_by = time.monotonic() + 15
            while not (stored := ctx.storage.get_json(f"jobs/{job_id}/job.json"))["announced"]:
                if time.monotonic() > announced_by:
                    break
                time.sleep(0.2)
            assert stored["state"] == "done" and stored["announced"], (job_id, stored["state"])
            kept = {k for k in ctx.storage.list_keys(f"jobs/{job_id}/") if "/work/" not in k}
            assert kept == {*stored["artifacts"].values(), f"jobs/{job_id}/job.json"}, (job_id, kept)
            bvh = next(k for k in ctx.storage.list_keys(f"jobs/{job_id}/") if k.endswith(".bvh"))
            path = self.local.root / f"{job_id}.bvh"
            ctx.storage.download_file(bvh, path)
            assert read_bvh(path).frames.shape[0] == round(CUT_S * 30), job_id
        if not callbacks:
            return
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not set(job_ids) <= self._called():
            time.sleep(0.5)
        time.sleep(3)  # room for a second, wrong callback to arrive
        calls = [e["job_id"] for e in _Receiver.events if e["event"] == "job.finished"]
        assert all(calls.count(j) == 1 for j in job_ids), {j: calls.count(j) for j in job_ids}

    def _called(self) -> set[str]:
        return {e["job_id"] for e in _Receiver.events if e["event"] == "job.finished"}


@pytest.fixture(scope="module")
def faults(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultStack]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    root = tmp_path_factory.mktemp("faults")
    songs = []
    for i, source in enumerate(SOURCES):
        if not source.is_file():
            continue
        for part in range(4):  # four distinct cuts of each song, from 10 s in
            rate = sf.info(source).samplerate
            start = int((10 + part * CUT_S) * rate)
            data, _ = sf.read(source, start=start, frames=int(CUT_S * rate), dtype="float32")
            songs.append(root / f"cut{i}_{part}_{source.stem[:20]}.wav")
            sf.write(songs[-1], data, rate)
    if len(songs) < 45:
        pytest.skip(f"shared music not found under {MUSIC}")
    (redis_port,) = free_ports(1)
    redis_dir = root / "redis"
    redis_dir.mkdir()
    redis_cmd = [
        "redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--dir", str(redis_dir),
        "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",  # as compose runs it
    ]  # fmt: skip
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    local = LocalStack(
        root / "stack",
        f"redis://127.0.0.1:{redis_port}/0",
        cpu_workers=1,
        cpu_concurrency=2,
        gpu_concurrency=2,
        env={
            "CHOREO_STAGE_TIMEOUT_S": "15",
            "CHOREO_VISIBILITY_TIMEOUT_S": str(VISIBILITY_TIMEOUT_S),
            "CHOREO_LEASE_TTL_S": "6",
            "CHOREO_REAP_INTERVAL_S": "1",
            "CHOREO_RETRY_BACKOFF_CAP_S": "4",
            "CHOREO_TASK_MAX_RETRIES": "40",  # 4 s apart: outlasts the 30 s stop and the restart
            "CHOREO_CALLBACK_MAX_ATTEMPTS": "20",
            "CHOREO_CALLBACK_ALLOW_LOOPBACK": "true",
            "CHOREO_ENGINE_THREADS": "1",
            "OMP_NUM_THREADS": "1",
        },
    )
    stack = FaultStack(
        local=local,
        redis_cmd=redis_cmd,
        token="",
        callback_url=f"http://127.0.0.1:{server.server_address[1]}/hook",
        songs=songs,
    )
    try:
        stack.start_redis()
        with local:
            stack.token = create_key(local.ctx, team="faults", name="faults", scopes=["content"])[1]
            _Receiver.secret = rotate_callback_secret(local.ctx, "faults").secret
            yield stack
    finally:
        server.shutdown()
        if stack.redis_proc is not None and stack.redis_proc.poll() is None:
            stack.kill_redis()


@pytest.mark.parametrize(("worker", "stage"), [("cpu-worker-0", TASK_PREPARE), ("gpu-worker", TASK_PERFORM)])
def test_a_sigkilled_worker_s_jobs_finish_once_after_its_restart(
    faults: FaultStack, worker: str, stage: str
) -> None:
    """The only worker of its queue dies mid-stage; its stages run once it is back (the other
    queue's worker's reaper sent them again meanwhile)."""
    jobs = faults.submit(4)
    frozen, _ = faults.local.freeze_holder(jobs, stage)
    assert frozen == worker
    faults.local.kill(worker, signal.SIGKILL)
    time.sleep(2)
    faults.local.restart(worker)
    faults.assert_all_done_once(jobs, timeout_s=120)


@pytest.mark.parametrize(("queue", "stage"), [("cpu", TASK_PREPARE), ("gpu", TASK_PERFORM)])
def test_a_sigkilled_worker_s_stage_runs_at_once_on_another_worker(
    faults: FaultStack, queue: str, stage: str
) -> None:
    """The other worker of the queue runs the stage again once the lease lapses, long before the
    broker's visibility timeout; the dead worker is not restarted."""
    faults.local.ensure_workers(queue, 2)
    jobs = faults.submit(4)
    worker, job_id = faults.local.freeze_holder(jobs, stage)
    faults.local.kill(worker, signal.SIGKILL)
    assert faults.wait_done(job_id, timeout_s=VISIBILITY_TIMEOUT_S) < VISIBILITY_TIMEOUT_S
    faults.assert_all_done_once(jobs, timeout_s=120)


def test_a_frozen_worker_s_stage_goes_to_another_and_the_old_holder_does_nothing_when_it_wakes(
    faults: FaultStack,
) -> None:
    """A worker frozen mid-``finish`` (SIGSTOP: alive, connected, no heartbeat) loses its lease; the
    other CPU worker finishes the job while it stays frozen. Woken, the old holder uploads nothing,
    marks nothing and sends no second callback."""
    faults.local.ensure_workers("cpu", 2)
    jobs = faults.submit(3)
    worker, job_id = faults.local.freeze_holder(jobs, TASK_FINISH)
    try:
        assert faults.wait_done(job_id, timeout_s=VISIBILITY_TIMEOUT_S) < VISIBILITY_TIMEOUT_S
    finally:
        faults.local.resume(worker)
    faults.assert_all_done_once(jobs, timeout_s=120)


def test_redis_killed_and_restarted(faults: FaultStack) -> None:
    jobs = faults.submit(3)
    faults.wait_for_state(jobs, {"decoding", "generating"})
    faults.kill_redis()
    time.sleep(5)
    faults.start_redis()
    faults.assert_all_done_once(jobs)


def test_the_s3_server_stopped_for_30_s(faults: FaultStack) -> None:
    jobs = faults.submit(3)
    faults.wait_for_state(jobs, {"decoding", "generating"})
    faults.local.kill("seaweed", signal.SIGINT)
    time.sleep(30)
    faults.local.restart("seaweed")
    faults.assert_all_done_once(jobs)


def test_redis_emptied_and_rebuilt_with_jobs_in_flight(faults: FaultStack) -> None:
    jobs = faults.submit(3)
    faults.wait_for_state(jobs, {"decoding", "generating"})
    faults.local.ctx.redis.flushdb()
    run = rebuild_index(faults.local.env)
    assert run.returncode == 0, run.stderr
    assert "resumed" in run.stdout
    faults.assert_all_done_once(jobs)


def _record_job(ctx: ServiceContext, sha: str) -> JobRecord:
    """A job of team ``faults`` for the uploaded song ``sha``, recorded and not yet sent to a queue."""
    track = get_track(ctx, "faults", sha)
    options = JobOptions()
    record = JobRecord(
        id=new_id("job"),
        team="faults",
        track_sha256=sha,
        track_ext=track.ext,
        track_name=track.filename,
        options=options,
        fingerprint=options.fingerprint(sha),
    )
    return create_job(ctx, record)


def _failing_once(write: Callable[..., None], nth: int, counter: list[int]) -> Callable[..., None]:
    def flaky(*args: object, **kwargs: object) -> None:
        counter[0] += 1
        if counter[0] == nth:
            from choreo.errors import StorageError

            raise StorageError("injected: storage failed this write once", transient=True)
        write(*args, **kwargs)

    return flaky


@pytest.mark.parametrize("nth", range(1, 9))
def test_a_storage_write_failing_once_at_each_stage_boundary(
    faults: FaultStack, monkeypatch: pytest.MonkeyPatch, nth: int
) -> None:
    """The stages run here, eagerly, on the stack's storage; the job's nth write fails once.

    The job is recorded but not enqueued, so only these calls render it, and it
    has no callback (an eager task here must not publish anywhere).
    """
    from worker import tasks

    ctx = ServiceContext.from_settings(faults.local.ctx.settings)
    (sha,) = faults.upload(1)
    job = _record_job(ctx, sha)
    counter = [0]
    monkeypatch.setattr(ctx.storage, "put_json", _failing_once(ctx.storage.put_json, nth, counter))
    monkeypatch.setattr(ctx.storage, "upload_file", _failing_once(ctx.storage.upload_file, nth, counter))
    monkeypatch.setattr(tasks, "get_context", lambda: ctx)
    for task in (tasks.prepare, tasks.perform, tasks.finish):
        task.apply(args=(job.id,))
    assert counter[0] > nth, f"the job made only {counter[0]} writes"
    faults.assert_all_done_once([job.id], callbacks=False)


def test_a_message_a_sigkilled_worker_held_unleased_comes_back_within_seconds(faults: FaultStack) -> None:
    """A stage message with a 25 s countdown (what a retry is) sits in a worker, received and not
    leased; the worker is SIGKILLed. Its heartbeat lapses and the reaper puts the message back at
    the head of its queue, where the other CPU worker takes it: within a lease TTL and a sweep, not
    the broker's 60 s visibility timeout. The job then ends done, once."""
    from choreo.service.leases import queue_run
    from choreo.service.queue import make_celery

    faults.local.ensure_workers("cpu", 2)
    ctx = faults.local.ctx
    (sha,) = faults.upload(1)
    job = _record_job(ctx, sha)
    epoch = queue_run(ctx, job.id, TASK_PREPARE)
    make_celery(ctx.settings).send_task(TASK_PREPARE, args=(job.id, epoch), queue="cpu", countdown=25)
    deadline = time.monotonic() + 20
    while (held := faults.local.message_holder(job.id)) is None:
        assert time.monotonic() < deadline, "no worker recorded the message"
        time.sleep(0.05)
    name, _ = held
    assert name.startswith("cpu-worker") and read_run(ctx, job.id).status == "queued"  # not leased
    killed = time.monotonic()
    faults.local.kill(name, signal.SIGKILL)
    while (held := faults.local.message_holder(job.id)) is None or held[0] == name:
        assert time.monotonic() - killed < VISIBILITY_TIMEOUT_S, "the message did not come back"
        time.sleep(0.05)
    recovered_s = time.monotonic() - killed
    print(f"a dead worker's unleased message was taken by another worker {recovered_s:.1f} s after SIGKILL")
    assert recovered_s < 6 + 2 + 3, recovered_s  # a lease TTL, a reaper sweep, some slack
    faults.assert_all_done_once([job.id], callbacks=False)
    faults.local.restart(name)


def test_a_sigkilled_append_only_redis_loses_no_acknowledged_submission(faults: FaultStack) -> None:
    """Submissions go on from a thread while Redis (append-only, ``everysec``, as compose runs it)
    is SIGKILLed and restarted: every job the API answered 202 for is in Redis after the restart
    and ends done; what was refused meanwhile was refused with an error, not lost silently."""
    (sha,) = faults.upload(1)
    acked: list[str] = []
    refused: list[int] = []
    stop = threading.Event()

    def submit() -> None:
        seed = 0
        with faults.client() as client:
            while not stop.is_set():
                seed += 1
                body = {"tracks": [sha], "options": {"synth": "blend", "seed": seed, "formats": ["bvh"]}}
                try:
                    answer = client.post("/v1/jobs", json=body)
                except httpx.HTTPError:
                    refused.append(0)
                    continue
                if answer.status_code == 202:
                    acked.extend(j["id"] for j in answer.json()["jobs"])
                else:
                    refused.append(answer.status_code)
                time.sleep(0.25)

    submitter = threading.Thread(target=submit, daemon=True)
    submitter.start()
    deadline = time.monotonic() + 60
    while len(acked) < 6:
        assert time.monotonic() < deadline, "the API acknowledged no submissions"
        time.sleep(0.01)
    faults.kill_redis()  # right after an acknowledgment, while more are being made
    before = len(acked)
    time.sleep(2)
    faults.start_redis()
    time.sleep(2)
    stop.set()
    submitter.join(timeout=60)
    assert all(code == 0 or code >= 500 for code in refused), refused
    ctx = faults.local.ctx
    missing = [j for j in acked if ctx.redis.get(ctx.key("job", j)) is None]
    assert not missing, f"{len(missing)} of {len(acked)} acknowledged jobs lost: {missing}"
    assert len(acked) > before  # submissions were acknowledged after the restart too
    faults.assert_all_done_once(acked, timeout_s=300, callbacks=False)


def test_a_submission_storage_refused_leaves_no_claim_behind(
    faults: FaultStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A submission whose job record cannot be written (storage away) fails, and its claim on the
    render goes with it: the soak found one such claim left in Redis for good per refused submit.
    The same request made again is recorded and rendered."""
    from choreo.errors import StorageError
    from choreo.service.queue import make_celery
    from choreo.service.records import JobOptions
    from choreo.service.submit import submit_jobs

    ctx = ServiceContext.from_settings(faults.local.ctx.settings)
    (sha,) = faults.upload(1)
    options = JobOptions(synth="blend", formats=["bvh"], seed=424242)
    request = dict(team="faults", tracks=[sha], options=options, priority=5, callback_url=None, force=False)
    celery = make_celery(ctx.settings)
    monkeypatch.setattr(ctx.storage, "put_json", _failing_once(ctx.storage.put_json, 1, [0]))
    with pytest.raises(StorageError):
        submit_jobs(ctx, celery, **request)
    assert not list(ctx.redis.scan_iter(match=ctx.key("dedup", "faults", "*"))) or all(
        ctx.redis.get(key) and ctx.redis.exists(ctx.key("job", ctx.redis.get(key)))
        for key in ctx.redis.scan_iter(match=ctx.key("dedup", "faults", "*"))
    )
    submitted = submit_jobs(ctx, celery, **request)
    ((job, earlier),) = submitted.jobs
    assert not earlier
    faults.assert_all_done_once([job.id], callbacks=False)


def test_an_album_refused_after_its_first_job_was_recorded_renders_whole_when_made_again(
    faults: FaultStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The S3 server goes away mid-album: the submission has recorded its first song's job and is
    refused (storage unavailable, the API's 503) at the second. Made again once S3 is back, it finds
    that job through its dedup claim, and sends it with the others: before, the job stayed queued,
    never sent, and the album waited on it for good. Every song renders once."""
    from choreo.errors import StorageError
    from choreo.service.queue import make_celery
    from choreo.service.submit import submit_jobs

    ctx = ServiceContext.from_settings(faults.local.ctx.settings)
    shas = faults.upload(3)
    options = JobOptions(synth="blend", formats=["bvh"], seed=616161)
    request = dict(team="faults", tracks=shas, options=options, priority=5, callback_url=None, force=False)
    celery = make_celery(ctx.settings)
    put_json = ctx.storage.put_json
    recorded: list[str] = []

    def then_s3_goes_away(key: str, *args: object, **kwargs: object) -> None:
        put_json(key, *args, **kwargs)  # the real write to the real server
        if key.endswith("/job.json") and not recorded:
            recorded.append(key.split("/")[1])
            faults.local.kill("seaweed", signal.SIGINT)  # the fault's moment: after the first record

    monkeypatch.setattr(ctx.storage, "put_json", then_s3_goes_away)
    try:
        with pytest.raises(StorageError):
            submit_jobs(ctx, celery, **request)
    finally:
        faults.local.restart("seaweed")
    (first,) = recorded
    assert ctx.redis.exists(ctx.key("job", first)) and read_run(ctx, first) is None  # recorded, unsent
    submitted = submit_jobs(ctx, celery, **request)
    assert [(job.id, earlier) for job, earlier in submitted.jobs][0] == (first, True)
    assert all(read_run(ctx, job.id) is not None for job, _ in submitted.jobs), "a job was left unsent"
    faults.assert_all_done_once([job.id for job, _ in submitted.jobs], callbacks=False)
