"""What happens once when a job ends, whoever ended it (a worker, or a client's cancel).

Counts the job's duration for the metrics and enqueues the signed callbacks:
the job's own, and its batch's once every job of that batch has ended. A batch
callback is claimed with SET NX, so it is sent once even when two workers end
the batch's last jobs at the same moment. A job's announcement is claimed the
same way and then marked in its record (``announced``), so a stage that later
finds the job ended without it (its announcer died) makes it, once.
"""

from __future__ import annotations

from typing import cast

from celery import Celery

from choreo.service.context import ServiceContext
from choreo.service.jobs import batch_status, get_batch, update_job
from choreo.service.metrics import record_job_duration
from choreo.service.queue import enqueue_callback
from choreo.service.records import JobRecord

__all__ = ["notify_job_ended"]


_CLAIM_S = 120
"""How long an announcement in progress is held before another process may make it."""


def notify_job_ended(ctx: ServiceContext, celery: Celery, job: JobRecord) -> None:
    """Record and announce the end of ``job``, once (call right after the transition)."""
    claim = ctx.key("announcing", job.id)
    if job.announced or not ctx.redis.set(claim, "1", nx=True, ex=_CLAIM_S):
        return
    try:
        _announce(ctx, celery, job)
    except Exception:
        ctx.redis.delete(claim)
        raise

    def mark(record: JobRecord) -> bool:
        if record.announced:
            return False
        record.announced = True
        return True

    update_job(ctx, job.id, mark)


def _announce(ctx: ServiceContext, celery: Celery, job: JobRecord) -> None:
    record_job_duration(ctx, job)
    if job.callback_url:
        payload: dict[str, object] = {
            "event": "job.finished",
            "job_id": job.id,
            "batch_id": job.batch_id,
            "state": job.state.value,
            "track_sha256": job.track_sha256,
            "error_code": job.error_code,
            "error_message": job.error_message,
        }
        enqueue_callback(celery, job.callback_url, payload, job.team)
    for batch_id in sorted(cast(set[str], ctx.redis.smembers(ctx.key("job_batches", job.id)))):
        batch = get_batch(ctx, batch_id)
        if batch is None or not batch.callback_url:
            continue
        status = batch_status(ctx, batch)
        if not status["finished"]:
            continue
        if not ctx.redis.set(ctx.key("batch_callback_sent", batch.id), "1", nx=True):
            continue
        batch_payload: dict[str, object] = {
            "event": "batch.finished",
            "batch_id": batch.id,
            "job_ids": batch.job_ids,
            "counts": status["counts"],
        }
        enqueue_callback(celery, batch.callback_url, batch_payload, batch.team)
