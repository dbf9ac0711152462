"""The reaper: gives a lost stage out again at once, or fails a job that keeps losing it.

Every worker process runs :func:`run_reaper` in a thread; a mutex in Redis lets
one sweep per ``CHOREO_REAP_INTERVAL_S`` across all of them. A sweep looks at
the stages that were taken (:func:`choreo.service.leases.lost_jobs`): one whose
lease lapsed belongs to a worker that died, froze or ran the stage past its
time limit. The reaper sends that stage again under a new epoch, so it runs
at once on any live worker of its queue, and the old message (which the broker
hands out again after its visibility timeout) and the old holder (should it
wake) find themselves stale. A stage lost more than ``CHOREO_STAGE_MAX_REQUEUES``
times fails its job as ``stalled``. A queued stage is never reaped: it has no
lease because no worker has taken it yet, and waits its turn.

Why the broker's visibility timeout stays too: the lease covers a stage from
the moment a worker takes its message; a message a worker received and died
with before it took the lease, and a retry waiting out its countdown in a
worker that died, the worker heartbeats cover (:mod:`choreo.service.liveness`:
the reaper gives a dead worker's messages back within a TTL); the visibility
timeout is the backstop behind them (kombu keeps those messages as
unacknowledged and hands them out again after it). What neither covers, a message
that no queue and no unacknowledged set holds (kombu's Redis transport pops a
message before it records it as unacknowledged, so a worker killed or frozen in
between takes it along; a next stage that could not be sent after its
hand-off), :func:`resend_unsent` finds: a stage queued for longer than the
visibility timeout whose message the broker does not hold is sent again.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Literal

from celery import Celery

from choreo.service.context import ServiceContext
from choreo.service.jobs import end_job, get_job
from choreo.service.leases import (
    claim_lost,
    claim_unsent,
    clear_run,
    lost_jobs,
    mark_requeued,
    new_epoch,
    read_run,
    unlist,
    waiting_since,
)
from choreo.service.liveness import restore_dead
from choreo.service.notify import notify_job_ended
from choreo.service.queue import broker_messages, send_stage
from choreo.service.records import JobState

__all__ = ["Reaped", "resend_unsent", "run_reaper", "sweep"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reaped:
    """What the reaper did with one lost stage."""

    job_id: str
    stage: str
    action: Literal["requeued", "resent", "failed", "cleared"]
    times: int = 0
    """How often that stage of the job has been lost."""


def sweep(ctx: ServiceContext, celery: Celery) -> list[Reaped]:
    """Re-enqueue or fail every job whose taken stage lost its lease; returns what was done."""
    done = []
    for job_id in lost_jobs(ctx):
        try:
            reaped = _reap(ctx, celery, job_id)
        except Exception:
            log.exception("job %s: the reaper could not handle its lost stage; the next sweep tries", job_id)
            continue
        if reaped is not None:
            done.append(reaped)
    return done


def _reap(ctx: ServiceContext, celery: Celery, job_id: str) -> Reaped | None:
    run = read_run(ctx, job_id)
    if run is None or run.status != "taken":
        unlist(ctx, job_id)  # a listing left behind
        return None
    job = get_job(ctx, job_id)
    if job is None or job.terminal:
        return Reaped(job_id, run.stage, "cleared") if clear_run(ctx, job_id, run) else None
    times = claim_lost(ctx, job_id, run)
    if times is None:
        return None
    limit = ctx.settings.stage_max_requeues
    if times > limit:
        message = (
            f"its {run.stage.removeprefix('choreo.')} stage stopped making progress {times} times "
            f"(its worker died or froze, or it ran past {ctx.settings.stage_timeout_s} s)"
        )
        log.warning("job %s: failing it as stalled: %s", job_id, message)
        ended = end_job(ctx, job_id, JobState.FAILED, code="stalled", message=message)
        if ended is not None:
            notify_job_ended(ctx, celery, ended)
        clear_run(ctx, job_id, run)
        return Reaped(job_id, run.stage, "failed", times)
    epoch = new_epoch(ctx)
    log.warning(
        "job %s: %s lost its lease (holder %s); sent again (%d of %d)",
        job_id,
        run.stage,
        run.holder,
        times,
        limit,
    )
    # Sent before it is marked queued: if this process dies in between, the stage still looks lost
    # and the next sweep sends it again (a duplicate finds itself stale or the lease held).
    send_stage(celery, job, run.stage, epoch)
    mark_requeued(ctx, job_id, run, epoch)
    return Reaped(job_id, run.stage, "requeued", times)


def resend_unsent(ctx: ServiceContext, celery: Celery) -> list[Reaped]:
    """Send again every stage queued for longer than the visibility timeout whose message the
    broker holds nowhere (see the module docstring); returns what was done."""
    seconds, micros = ctx.redis.time()
    waiting = waiting_since(ctx, seconds + micros / 1e6 - ctx.settings.visibility_timeout_s)
    if not waiting:
        return []
    held = broker_messages(ctx, celery)
    done = []
    for job_id in waiting:
        run = read_run(ctx, job_id)
        if run is None or run.status != "queued" or (run.stage, job_id) in held:
            continue
        job = get_job(ctx, job_id)
        if job is None or job.terminal:
            if clear_run(ctx, job_id, run):
                done.append(Reaped(job_id, run.stage, "cleared"))
            continue
        if not claim_unsent(ctx, job_id, run):
            continue
        epoch = new_epoch(ctx)
        log.warning("job %s: %s was queued but no queue holds its message; sent again", job_id, run.stage)
        send_stage(celery, job, run.stage, epoch)
        mark_requeued(ctx, job_id, run, epoch)
        done.append(Reaped(job_id, run.stage, "resent"))
    return done


def run_reaper(ctx: ServiceContext, celery: Celery, stop: threading.Event) -> None:
    """Give dead workers' messages back (:func:`choreo.service.liveness.restore_dead`) and sweep every
    ``CHOREO_REAP_INTERVAL_S``, and look for unsent stages every quarter of the
    visibility timeout, until ``stop`` is set (a worker's thread); mutexes in Redis let one process
    of all do each."""
    interval = ctx.settings.reap_interval_s
    mutex_ms = max(int(interval * 900), 1)
    scan_ms = max(int(ctx.settings.visibility_timeout_s * 250), 1)
    while not stop.wait(interval):
        try:
            if ctx.redis.set(ctx.key("reaper"), "1", nx=True, px=mutex_ms):
                restore_dead(ctx, celery)
                sweep(ctx, celery)
            if ctx.redis.set(ctx.key("reaper", "unsent"), "1", nx=True, px=scan_ms):
                resend_unsent(ctx, celery)
        except Exception as exc:  # noqa: BLE001 - Redis away for a moment; the next sweep tries again
            log.warning("the reaper's sweep failed: %s", exc)
