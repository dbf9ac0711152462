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
the moment a worker takes its message; the visibility timeout covers the rest,
a message a worker received and died with before it took the lease, a retry
waiting out its countdown in a worker that died, and a hand-off whose next
message could not be sent. Those come back after the timeout, the lost leases
within one lease TTL.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Literal

from celery import Celery

from choreo.service.context import ServiceContext
from choreo.service.jobs import end_job, get_job
from choreo.service.leases import claim_lost, clear_lost, lost_jobs, mark_requeued, new_epoch, read_run
from choreo.service.notify import notify_job_ended
from choreo.service.queue import send_stage
from choreo.service.records import JobState

__all__ = ["Reaped", "run_reaper", "sweep"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reaped:
    """What the reaper did with one lost stage."""

    job_id: str
    stage: str
    action: Literal["requeued", "failed", "cleared"]
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
        clear_lost(ctx, job_id, run.epoch if run else 0)  # a listing left behind
        return None
    job = get_job(ctx, job_id)
    if job is None or job.terminal:
        if clear_lost(ctx, job_id, run.epoch):
            return Reaped(job_id, run.stage, "cleared")
        return None
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
        clear_lost(ctx, job_id, run.epoch)
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
    mark_requeued(ctx, job_id, run.epoch, epoch)
    return Reaped(job_id, run.stage, "requeued", times)


def run_reaper(ctx: ServiceContext, celery: Celery, stop: threading.Event) -> None:
    """Sweep every ``CHOREO_REAP_INTERVAL_S`` until ``stop`` is set (a worker's thread)."""
    interval = ctx.settings.reap_interval_s
    mutex_ms = max(int(interval * 900), 1)
    while not stop.wait(interval):
        try:
            if ctx.redis.set(ctx.key("reaper"), "1", nx=True, px=mutex_ms):
                sweep(ctx, celery)
        except Exception as exc:  # noqa: BLE001 - Redis away for a moment; the next sweep tries again
            log.warning("the reaper's sweep failed: %s", exc)
