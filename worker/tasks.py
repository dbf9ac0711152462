"""Celery tasks: thin wrappers that give each stage retries and a clean failure.

The cross-cutting rules live once, in :meth:`JobTask.run_stage`:

- a transient error (storage or Redis unreachable, a 5xx, boto3's transfer
  errors, a connection reset) is retried with exponential backoff, capped at
  ``retry_backoff_cap_s``, up to ``task_max_retries`` times: about 150 s with
  the defaults, longer than a 60 s outage. When even the retry cannot be
  published (Redis is down too) the message is rejected back to the queue, or,
  when that fails as well, left unacknowledged for the broker to hand out
  again after its visibility timeout: a job is never dropped;
- a permanent :class:`~choreo.errors.ChoreoError` (a corrupt song, a bad
  option) fails that job with the error's code and message, and the chain's
  later stages find the job failed and do nothing, so the queue moves on;
- anything else is a bug: the job fails with ``internal_error`` and the
  exception is logged with its traceback;
- a stage that finds its job already ended announces the end if nobody has
  (the worker that ended it died before the callback was queued), and a stage
  whose job was deleted while it ran deletes what it wrote.

What a client reads of a failure (``error_message``) never names a path, a
host or a storage key; the log line keeps them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from celery import Task
from celery.exceptions import Reject, SoftTimeLimitExceeded
from celery.utils.log import get_logger
from kombu.exceptions import OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ReadOnlyError
from redis.exceptions import TimeoutError as RedisTimeoutError

from choreo.errors import ChoreoError
from choreo.service.callbacks import CallbackError, CallbackRefused, deliver
from choreo.service.context import ServiceContext, get_context
from choreo.service.jobs import end_job, get_job, was_deleted
from choreo.service.notify import notify_job_ended
from choreo.service.queue import TASK_CALLBACK, TASK_FINISH, TASK_GENERATE, TASK_PREPARE
from choreo.service.records import JobState, job_prefix
from choreo.service.redact import public_message, safe_url
from choreo.service.teams import callback_secret
from engines.batcher import process_batcher
from worker import steps
from worker.app import app

__all__ = ["JobTask", "callback", "finish", "generate", "is_transient", "prepare"]

log = get_logger(__name__)

_PUBLISH_TRIES = 4
"""Tries to publish a retry (1, 2, 4 s apart) before the message goes back to the broker instead."""

_TRANSIENT = (
    RedisConnectionError,
    RedisTimeoutError,
    ReadOnlyError,
    OperationalError,
    ConnectionError,
    TimeoutError,
)


def is_transient(exc: BaseException) -> bool:
    """Whether trying again later could succeed: an outage, not the job's own fault."""
    if isinstance(exc, ChoreoError):
        return exc.transient
    return isinstance(exc, _TRANSIENT)


def _backoff_s(retries: int, cap_s: int) -> int:
    return min(2 ** (retries + 1), cap_s)


class JobTask(Task):
    """Base of the stage tasks; see the module docstring for the rules."""

    def run_stage(self, stage: Callable[[ServiceContext, str], Any], job_id: str) -> Any:
        ctx = get_context()
        try:
            outcome = stage(ctx, job_id)
            if outcome == steps.SKIPPED:
                self._announce_if_missed(ctx, job_id)
            elif was_deleted(ctx, job_id):
                # Deleted while this stage ran: what it wrote after the deletion goes too.
                ctx.storage.delete_prefix(job_prefix(job_id))
            return outcome
        except SoftTimeLimitExceeded:
            limit = ctx.settings.stage_timeout_s
            self._fail(ctx, job_id, "timeout", f"{self.name} took longer than {limit} s")
        except Exception as exc:
            if is_transient(exc):
                if self.request.retries < ctx.settings.task_max_retries:
                    self._retry_later(ctx, job_id, exc)
                log.warning("job %s: %s gave up after retries: %s", job_id, self.name, exc)
                self._fail(
                    ctx, job_id, getattr(exc, "code", "unavailable"), "a service it needs stayed unavailable"
                )
            elif isinstance(exc, ChoreoError):
                self._fail(ctx, job_id, exc.code, exc.message)
            else:
                log.exception("job %s: %s crashed", job_id, self.name)
                self._fail(ctx, job_id, "internal_error", f"internal error ({type(exc).__name__})")
        return steps.SKIPPED

    def _retry_later(self, ctx: ServiceContext, job_id: str, exc: Exception) -> None:
        """Publish a retry with backoff (raises Retry), or give the message back to the broker."""
        countdown = _backoff_s(self.request.retries, ctx.settings.retry_backoff_cap_s)
        log.warning("job %s: %s failed transiently (%s); retrying in %d s", job_id, self.name, exc, countdown)
        for attempt in range(_PUBLISH_TRIES):
            try:
                raise self.retry(exc=exc, countdown=countdown)
            except Reject as failed:
                log.warning("job %s: the retry of %s could not be published: %s", job_id, self.name, failed)
                if attempt + 1 < _PUBLISH_TRIES:
                    time.sleep(2**attempt)
        raise Reject(exc, requeue=True)

    def _fail(self, ctx: ServiceContext, job_id: str, code: str, message: str) -> None:
        log.info("job %s failed in %s: %s: %s", job_id, self.name, code, message)
        try:
            job = end_job(ctx, job_id, JobState.FAILED, code=code, message=public_message(message))
            if job is not None:
                notify_job_ended(ctx, self.app, job)
        except Exception as exc:
            if not is_transient(exc):
                raise
            log.warning(
                "job %s: could not record its failure (%s); the broker hands it out again", job_id, exc
            )
            raise Reject(exc, requeue=True) from exc

    def _announce_if_missed(self, ctx: ServiceContext, job_id: str) -> None:
        job = get_job(ctx, job_id)
        if job is not None and job.terminal and not job.announced:
            log.info("job %s: announcing its end, which nobody had", job_id)
            notify_job_ended(ctx, self.app, job)


@app.task(name=TASK_PREPARE, bind=True, base=JobTask, max_retries=None)
def prepare(self: JobTask, job_id: str) -> Any:
    """Decode the job's song and store its features (CPU queue)."""
    return self.run_stage(steps.prepare, job_id)


@app.task(name=TASK_GENERATE, bind=True, base=JobTask, max_retries=None)
def generate(self: JobTask, job_id: str) -> Any:
    """Generate the raw dance with this worker's engine (GPU queue)."""
    return self.run_stage(lambda ctx, jid: steps.generate(ctx, jid, process_batcher()), job_id)


@app.task(name=TASK_FINISH, bind=True, base=JobTask, max_retries=None)
def finish(self: JobTask, job_id: str) -> Any:
    """Post-process, export, upload and mark the job done (CPU queue)."""

    def stage(ctx: ServiceContext, jid: str) -> str:
        outcome, done = steps.finish(ctx, jid)
        if done is not None:
            notify_job_ended(ctx, self.app, done)
        return outcome

    return self.run_stage(stage, job_id)


@app.task(name=TASK_CALLBACK, bind=True, max_retries=None)
def callback(self: Task, url: str, payload: dict[str, Any], team: str) -> int | None:
    """POST a callback signed with the team's secret; retried with backoff, then given up with a log line."""
    ctx = get_context()
    settings = ctx.settings
    event, shown = payload.get("event"), safe_url(url)
    secret = callback_secret(ctx, team)
    if secret is None:
        log.error("callback %s to %s abandoned: team %s has no callback secret", event, shown, team)
        return None
    try:
        return deliver(
            url,
            payload,
            secret=secret,
            timeout_s=settings.callback_timeout_s,
            allow_loopback=settings.callback_allow_loopback,
        )
    except CallbackRefused as exc:
        log.error("callback %s abandoned: %s", event, exc)
        return None
    except CallbackError as exc:
        if self.request.retries + 1 < settings.callback_max_attempts:
            raise self.retry(
                exc=exc, countdown=_backoff_s(self.request.retries, settings.retry_backoff_cap_s)
            ) from None
        log.error("callback %s abandoned: %s", event, exc)
        return None
