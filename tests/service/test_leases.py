"""Leases and the reaper's decisions, on the real Redis and storage, with messages in a real broker.

The context here has key and broker prefixes of its own, so the stack's
workers and their reapers neither see these jobs nor take these messages: what
the reaper sent is read back from the broker's queues.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from celery import Celery

from choreo.service.context import ServiceContext
from choreo.service.jobs import end_job, get_job
from choreo.service.leases import read_run, take
from choreo.service.queue import (
    CPU_QUEUE,
    GPU_QUEUE,
    TASK_FINISH,
    TASK_PERFORM,
    TASK_PREPARE,
    enqueue_job,
    enqueue_unsent,
    make_celery,
)
from choreo.service.reaper import resend_unsent, run_reaper, sweep
from choreo.service.records import JobRecord, JobState
from tests.service.helpers import ServiceStack, made_job

pytestmark = pytest.mark.service

TTL_S = 0.4


@dataclass
class Bench:
    ctx: ServiceContext
    celery: Celery
    prefix: str

    def sent(self, queue: str) -> list[tuple[str, list]]:
        """(task name, args) of every message waiting in ``queue``, all priorities, oldest first."""
        client = self.ctx.redis
        messages = []
        for key in sorted(client.keys(f"{self.prefix}{queue}*")):
            for raw in reversed(client.lrange(key, 0, -1)):  # pushed on the left, taken from the right
                message = json.loads(raw)
                args = json.loads(base64.b64decode(message["body"]))[0]
                messages.append((message["headers"]["task"], args))
        return messages

    def job(self, synth: str = "model") -> JobRecord:
        return made_job(self.ctx, "leases", synth=synth)

    def drop_messages(self) -> None:
        """Lose every waiting message, as a worker killed between kombu's pop and its record does."""
        keys = self.ctx.redis.keys(f"{self.prefix}cpu*") + self.ctx.redis.keys(f"{self.prefix}gpu*")
        if keys:
            self.ctx.redis.delete(*keys)

    def lapse(self, job_id: str) -> None:
        """Wait until the job's lease expired by itself."""
        deadline = time.monotonic() + 5
        while self.ctx.redis.exists(self.ctx.key("lease", job_id)):
            assert time.monotonic() < deadline, "the lease did not lapse"
            time.sleep(0.05)


@pytest.fixture
def bench(stack: ServiceStack) -> Iterator[Bench]:
    prefix = f"leasetest{secrets.token_hex(3)}:"
    settings = stack.ctx.settings.model_copy(
        update={
            "redis_prefix": prefix,
            "lease_ttl_s": TTL_S,
            "stage_max_requeues": 2,
            "reap_interval_s": 0.1,
            "visibility_timeout_s": 1,
        }
    )
    ctx = ServiceContext(settings=settings, redis=stack.ctx.redis, storage=stack.ctx.storage)
    celery = make_celery(settings, name="leasetest")
    celery.conf.broker_transport_options = {
        **celery.conf.broker_transport_options,
        "global_keyprefix": prefix,
    }
    yield Bench(ctx=ctx, celery=celery, prefix=prefix)
    keys = ctx.redis.keys(f"{prefix}*")
    if keys:
        ctx.redis.delete(*keys)


def test_a_queued_stage_is_never_reaped_however_long_it_waits(bench: Bench) -> None:
    job = bench.job()
    epoch = enqueue_job(bench.ctx, bench.celery, job)
    time.sleep(2 * TTL_S)
    assert sweep(bench.ctx, bench.celery) == []
    run = read_run(bench.ctx, job.id)
    assert (run.stage, run.status, run.epoch) == (TASK_PREPARE, "queued", epoch)
    assert bench.sent(CPU_QUEUE) == [(TASK_PREPARE, [job.id, epoch])]


def test_a_job_never_sent_is_sent_once_however_many_submissions_find_it(bench: Bench) -> None:
    """What a submission does for each of its jobs: a recorded job without a run is sent, once,
    from any number of threads at once; one already sent, or ended, is left alone."""
    job, ended = bench.job(), bench.job()
    epochs: list[int | None] = []
    threads = [
        threading.Thread(target=lambda: epochs.append(enqueue_unsent(bench.ctx, bench.celery, job)))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (epoch,) = [e for e in epochs if e is not None]
    assert len(epochs) == 8 and bench.sent(CPU_QUEUE) == [(TASK_PREPARE, [job.id, epoch])]
    assert enqueue_unsent(bench.ctx, bench.celery, job) is None  # sent before: its run record says so
    end_job(bench.ctx, ended.id, JobState.CANCELLED, code="cancelled", message="cancelled by the test")
    assert enqueue_unsent(bench.ctx, bench.celery, ended) is None and read_run(bench.ctx, ended.id) is None
    assert bench.sent(CPU_QUEUE) == [(TASK_PREPARE, [job.id, epoch])]


def test_a_live_lease_is_left_alone_and_a_lapsed_one_is_sent_again_at_once(bench: Bench) -> None:
    job = bench.job()
    epoch = enqueue_job(bench.ctx, bench.celery, job)
    taken = take(bench.ctx, job.id, TASK_PREPARE, epoch)
    assert taken.verdict == "taken" and taken.lease is not None
    assert take(bench.ctx, job.id, TASK_PREPARE, epoch).verdict == "held"
    assert sweep(bench.ctx, bench.celery) == []

    bench.lapse(job.id)  # its worker died: nobody renews the lease
    (reaped,) = sweep(bench.ctx, bench.celery)
    assert (reaped.job_id, reaped.stage, reaped.action, reaped.times) == (job.id, TASK_PREPARE, "requeued", 1)
    run = read_run(bench.ctx, job.id)
    assert run.status == "queued" and run.epoch > epoch and run.requeues == 1
    assert bench.sent(CPU_QUEUE)[-1] == (TASK_PREPARE, [job.id, run.epoch])
    assert sweep(bench.ctx, bench.celery) == [], "a stage sent again is queued, not lost"

    # The dead worker's message, handed out again by the broker later, is stale; the new one runs.
    assert take(bench.ctx, job.id, TASK_PREPARE, epoch).verdict == "stale"
    assert take(bench.ctx, job.id, TASK_PREPARE, run.epoch).verdict == "taken"


def test_a_slow_old_holder_cannot_hand_on_after_its_stage_was_given_out_again(bench: Bench) -> None:
    job = bench.job()
    epoch = enqueue_job(bench.ctx, bench.celery, job)
    old = take(bench.ctx, job.id, TASK_PREPARE, epoch).lease
    bench.lapse(job.id)  # it froze
    sweep(bench.ctx, bench.celery)
    new = take(bench.ctx, job.id, TASK_PREPARE, read_run(bench.ctx, job.id).epoch).lease
    assert not old.holds() and not old.renew()
    assert not old.hand_off(TASK_PERFORM), "the old holder woke: it must not move the run on"
    assert new.holds() and new.hand_off(TASK_PERFORM)
    run = read_run(bench.ctx, job.id)
    assert (run.stage, run.status) == (TASK_PERFORM, "queued")
    # Its earlier stage redelivered now finds the run past it.
    found = take(bench.ctx, job.id, TASK_PREPARE, new.epoch)
    assert (found.verdict, found.stage, found.status) == ("other", TASK_PERFORM, "queued")


def test_a_stage_lost_too_often_fails_its_job_as_stalled(bench: Bench) -> None:
    job = bench.job()
    epoch = enqueue_job(bench.ctx, bench.celery, job)
    for times in (1, 2, 3):
        assert take(bench.ctx, job.id, TASK_PREPARE, epoch).verdict == "taken"
        bench.lapse(job.id)
        (reaped,) = sweep(bench.ctx, bench.celery)
        assert reaped.times == times
        epoch = read_run(bench.ctx, job.id).epoch if reaped.action == "requeued" else epoch
    assert reaped.action == "failed"
    failed = get_job(bench.ctx, job.id)
    assert (failed.state, failed.error_code) == (JobState.FAILED, "stalled")
    assert "prepare stage stopped making progress 3 times" in failed.error_message
    assert bench.ctx.storage.get_json(f"jobs/{job.id}/job.json")["error_code"] == "stalled"
    assert read_run(bench.ctx, job.id) is None
    assert len(bench.sent(CPU_QUEUE)) == 3, "the first message and two re-sends; none after the failure"


def test_a_lost_stage_of_an_ended_job_is_cleared_not_sent(bench: Bench) -> None:
    job = bench.job()
    epoch = enqueue_job(bench.ctx, bench.celery, job)
    take(bench.ctx, job.id, TASK_PREPARE, epoch)
    end_job(bench.ctx, job.id, JobState.CANCELLED, code="cancelled", message="cancelled")
    bench.lapse(job.id)
    (reaped,) = sweep(bench.ctx, bench.celery)
    assert reaped.action == "cleared"
    assert read_run(bench.ctx, job.id) is None
    assert bench.sent(CPU_QUEUE) == [(TASK_PREPARE, [job.id, epoch])]


def test_a_lost_perform_goes_back_to_its_synthesizer_s_queue(bench: Bench) -> None:
    job = bench.job()
    epoch = enqueue_job(bench.ctx, bench.celery, job, first_stage=TASK_PERFORM)
    take(bench.ctx, job.id, TASK_PERFORM, epoch)
    bench.lapse(job.id)
    sweep(bench.ctx, bench.celery)
    assert [name for name, _ in bench.sent(GPU_QUEUE)] == [TASK_PERFORM, TASK_PERFORM]

    blend = bench.job(synth="blend")
    epoch = enqueue_job(bench.ctx, bench.celery, blend, first_stage=TASK_PERFORM)
    take(bench.ctx, blend.id, TASK_PERFORM, epoch)
    bench.lapse(blend.id)
    sweep(bench.ctx, bench.celery)
    assert [name for name, _ in bench.sent(CPU_QUEUE)] == [TASK_PERFORM, TASK_PERFORM]

    from choreo.service.queue import stage_after

    for synth_job in (job, blend):  # every job has the three stages
        assert stage_after(synth_job, TASK_PREPARE) == TASK_PERFORM
        assert stage_after(synth_job, TASK_PERFORM) == TASK_FINISH
        assert stage_after(synth_job, TASK_FINISH) is None


def test_the_heartbeat_keeps_a_lease_past_its_ttl_and_stops_at_the_stage_limit(bench: Bench) -> None:
    job = bench.job()
    lease = take(bench.ctx, job.id, TASK_PREPARE, enqueue_job(bench.ctx, bench.celery, job)).lease
    with lease.heartbeat(limit_s=60):
        time.sleep(3 * TTL_S)
        assert lease.holds(), "renewed every third of the TTL"
    with lease.heartbeat(limit_s=TTL_S):  # a stage hung past its time limit
        time.sleep(4 * TTL_S)
        assert not lease.holds(), "past the stage's limit the lease lapses"


def test_the_reaper_thread_sweeps_until_stopped(bench: Bench) -> None:
    job = bench.job()
    epoch = enqueue_job(bench.ctx, bench.celery, job)
    take(bench.ctx, job.id, TASK_PREPARE, epoch)
    stop = threading.Event()
    thread = threading.Thread(target=run_reaper, args=(bench.ctx, bench.celery, stop), daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 5
        while read_run(bench.ctx, job.id).status != "queued":
            assert time.monotonic() < deadline, "the reaper did not send the lost stage again"
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(timeout=5)
    assert not thread.is_alive()


def test_a_stage_queued_past_the_visibility_timeout_with_no_message_anywhere_is_sent_again(
    bench: Bench,
) -> None:
    lost, waiting = bench.job(), bench.job()
    lost_epoch = enqueue_job(bench.ctx, bench.celery, lost)
    bench.drop_messages()
    enqueue_job(bench.ctx, bench.celery, waiting)
    assert resend_unsent(bench.ctx, bench.celery) == [], "queued less than the visibility timeout"
    time.sleep(1.2)
    (resent,) = resend_unsent(bench.ctx, bench.celery)
    assert (resent.job_id, resent.action) == (lost.id, "resent"), "the other's message waits in its queue"
    run = read_run(bench.ctx, lost.id)
    assert run.status == "queued" and run.epoch > lost_epoch
    assert (TASK_PREPARE, [lost.id, run.epoch]) in bench.sent(CPU_QUEUE)
    assert resend_unsent(bench.ctx, bench.celery) == [], "sent again, so held by the broker now"


def test_an_unsent_stage_of_an_ended_job_is_cleared(bench: Bench) -> None:
    job = bench.job()
    enqueue_job(bench.ctx, bench.celery, job)
    bench.drop_messages()
    end_job(bench.ctx, job.id, JobState.CANCELLED, code="cancelled", message="cancelled")
    time.sleep(1.2)
    (cleared,) = resend_unsent(bench.ctx, bench.celery)
    assert cleared.action == "cleared" and read_run(bench.ctx, job.id) is None
    assert bench.sent(CPU_QUEUE) == []
