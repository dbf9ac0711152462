"""What happens once when a job ends, whoever ended it (a worker, or a client's cancel).

Counts the job's duration for the metrics and enqueues the signed callbacks:
the job's own, and its batch's once every job of that batch has ended. A batch
callback is claimed with SET NX, so it is sent once even when two workers end
the batch's last jobs at the same moment.
"""

from __future__ import annotations

from celery import Celery

from choreo.service.context import ServiceContext
from choreo.service.jobs import batch_status, get_batch
from choreo.service.metrics import record_job_duration
from choreo.service.queue import enqueue_callback
from choreo.service.records import JobRecord, now_s

__all__ = ["notify_job_ended"]


def notify_job_ended(ctx: ServiceContext, celery: Celery, job: JobRecord) -> None:
    """Record and announce the end of ``job`` (call once, right after the transition)."""
    record_job_duration(ctx, job.state.value, max((job.finished_at or now_s()) - job.created_at, 0.0))
    if job.callback_url:
        payload = {
            "event": "job.finished",
            "job_id": job.id,
            "batch_id": job.batch_id,
            "state": job.state.value,
            "track_sha256": job.track_sha256,
            "error_code": job.error_code,
            "error_message": job.error_message,
        }
        enqueue_callback(celery, job.callback_url, payload, job.team)
    for batch_id in sorted(ctx.redis.smembers(ctx.key("job_batches", job.id))):
        batch = get_batch(ctx, batch_id)
        if batch is None or not batch.callback_url:
            continue
        status = batch_status(ctx, batch)
        if not status["finished"]:
            continue
        if not ctx.redis.set(ctx.key("batch_callback_sent", batch.id), "1", nx=True):
            continue
        payload = {
            "event": "batch.finished",
            "batch_id": batch.id,
            "job_ids": batch.job_ids,
            "counts": status["counts"],
        }
        enqueue_callback(celery, batch.callback_url, payload, batch.team)
