"""Celery tasks: thin wrappers that give each stage retries and a clean failure.

The cross-cutting rules live once, in :meth:`JobTask.run_stage`:

- a transient error (storage or Redis unreachable, a timeout, a 5xx, throttling,
  boto3's transfer errors over an outage, a connection reset) is retried with exponential backoff, capped at
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
  whose job was deleted while it ran deletes what it wrote;
- a stage runs only under its lease (:mod:`choreo.service.leases`), renewed by
  a heartbeat while it runs: a message whose stage another worker holds, or
  that a newer epoch superseded (the reaper gave the stage out again), or
  whose job has gone past that stage, does nothing. A stage that ends hands
  the run on and sends the next stage itself (:func:`~choreo.service.queue.stage_after`);
  a redelivered message that finds its successor recorded queued and never
  taken sends it again (the worker died between the two), since the broker's
  copy may never have been sent. Called eagerly (``Task.apply``), a stage
  sends nothing on: its caller runs the next.

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
from choreo.service.leases import Lease, Taken, take
from choreo.service.notify import notify_job_ended
from choreo.service.queue import (
    TASK_CALLBACK,
    TASK_FINISH,
    TASK_PERFORM,
    TASK_PREPARE,
    send_stage,
    stage_after,
)
from choreo.service.records import JobState, job_prefix
from choreo.service.redact import public_message, safe_url
from choreo.service.teams import callback_secret
from worker import steps
from worker.app import app

__all__ = ["JobTask", "callback", "finish", "is_transient", "perform", "prepare"]

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


def _quietly(step: Callable[[], bool], job_id: str) -> None:
    """Give a lease back if Redis lets us; else it lapses and the reaper decides (an outage)."""
    try:
        step()
    except Exception as exc:  # noqa: BLE001 - the lease lapses instead
        log.warning("job %s: could not give its lease back (%s); it lapses", job_id, exc)


Stage = Callable[[ServiceContext, str, Lease], Any]
"""A stage's work: ``(context, job id, its lease) -> outcome`` (:data:`worker.steps.SKIPPED` for none)."""


class JobTask(Task):
    """Base of the stage tasks; see the module docstring for the rules."""

    def run_stage(self, stage: Stage, job_id: str, epoch: int | None = None) -> Any:
        """Run ``stage`` for the job under its lease, as a message of run ``epoch`` (None: any)."""
        ctx = get_context()
        lease: Lease | None = None
        try:
            taken = take(ctx, job_id, self.name, epoch)
            if taken.lease is None:
                self._not_taken(ctx, job_id, epoch, taken)
                return steps.SKIPPED
            lease = taken.lease
            with lease.heartbeat(limit_s=ctx.settings.stage_timeout_s):
                outcome = stage(ctx, job_id, lease)
            if outcome == steps.SKIPPED:
                self._announce_if_missed(ctx, job_id)
                lease.release()
            elif was_deleted(ctx, job_id):
                # Deleted while this stage ran: what it wrote after the deletion goes too.
                ctx.storage.delete_prefix(job_prefix(job_id))
                lease.release()
            else:
                self._hand_off(ctx, job_id, lease)
            return outcome
        except SoftTimeLimitExceeded:
            limit = ctx.settings.stage_timeout_s
            self._fail(ctx, job_id, "timeout", f"{self.name} took longer than {limit} s", lease)
        except Exception as exc:
            if is_transient(exc):
                if self.request.retries < ctx.settings.task_max_retries:
                    self._retry_later(ctx, job_id, exc, lease)
                log.warning("job %s: %s gave up after retries: %s", job_id, self.name, exc)
                self._fail(
                    ctx,
                    job_id,
                    getattr(exc, "code", "unavailable"),
                    "a service it needs stayed unavailable",
                    lease,
                )
            elif isinstance(exc, ChoreoError):
                self._fail(ctx, job_id, exc.code, exc.message, lease)
            else:
                log.exception("job %s: %s crashed", job_id, self.name)
                self._fail(ctx, job_id, "internal_error", f"internal error ({type(exc).__name__})", lease)
        return steps.SKIPPED

    def _hand_off(self, ctx: ServiceContext, job_id: str, lease: Lease) -> None:
        """Hand the run on to the next stage and send it; nothing when the lease was lost meanwhile."""
        job = get_job(ctx, job_id)
        after = None if job is None or job.terminal or self.request.is_eager else stage_after(job, self.name)
        if not lease.hand_off(after):
            log.warning("job %s: %s ended after it lost its lease; the new holder goes on", job_id, self.name)
            return
        if job is not None and after is not None:
            send_stage(self.app, job, after, lease.epoch)

    def _not_taken(self, ctx: ServiceContext, job_id: str, epoch: int | None, taken: Taken) -> None:
        """A message that may not run its stage: say why, and send the successor if it was lost."""
        self._announce_if_missed(ctx, job_id)
        job = get_job(ctx, job_id)
        if (
            job is not None
            and not job.terminal
            and not self.request.is_eager
            and taken.verdict == "other"
            and taken.status == "queued"
            and taken.stage == stage_after(job, self.name)
            and epoch in (None, taken.epoch)
        ):
            log.info(
                "job %s: %s was done; sending %s again, which may not have been sent",
                job_id,
                self.name,
                taken.stage,
            )
            send_stage(self.app, job, taken.stage, taken.epoch)
            return
        log.info(
            "job %s: %s skipped (%s; run at %s, %s, epoch %d; this message's epoch %s)",
            job_id,
            self.name,
            taken.verdict,
            taken.stage,
            taken.status,
            taken.epoch,
            epoch,
        )

    def _retry_later(self, ctx: ServiceContext, job_id: str, exc: Exception, lease: Lease | None) -> None:
        """Publish a retry with backoff (raises Retry), or give the message back to the broker.

        The stage is given back as queued first, so the reaper leaves the waiting retry alone.
        """
        countdown = _backoff_s(self.request.retries, ctx.settings.retry_backoff_cap_s)
        log.warning("job %s: %s failed transiently (%s); retrying in %d s", job_id, self.name, exc, countdown)
        if lease is not None:
            _quietly(lease.requeue, job_id)
        for attempt in range(_PUBLISH_TRIES):
            try:
                raise self.retry(exc=exc, countdown=countdown)
            except Reject as failed:
                log.warning("job %s: the retry of %s could not be published: %s", job_id, self.name, failed)
                if attempt + 1 < _PUBLISH_TRIES:
                    time.sleep(2**attempt)
        raise Reject(exc, requeue=True)

    def _fail(self, ctx: ServiceContext, job_id: str, code: str, message: str, lease: Lease | None) -> None:
        log.info("job %s failed in %s: %s: %s", job_id, self.name, code, message)
        try:
            job = end_job(ctx, job_id, JobState.FAILED, code=code, message=public_message(message))
            if job is not None:
                notify_job_ended(ctx, self.app, job)
            if lease is not None:
                _quietly(lease.release, job_id)
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
def prepare(self: JobTask, job_id: str, epoch: int | None = None) -> Any:
    """Decode and analyse the job's song and plan its dance (CPU queue)."""
    return self.run_stage(lambda ctx, jid, _: steps.prepare(ctx, jid), job_id, epoch)


@app.task(name=TASK_PERFORM, bind=True, base=JobTask, max_retries=None)
def perform(self: JobTask, job_id: str, epoch: int | None = None) -> Any:
    """Perform the job's plan with its synthesizer: the blend (CPU queue) or the network (GPU queue)."""
    return self.run_stage(lambda ctx, jid, _: steps.perform(ctx, jid), job_id, epoch)


@app.task(name=TASK_FINISH, bind=True, base=JobTask, max_retries=None)
def finish(self: JobTask, job_id: str, epoch: int | None = None) -> Any:
    """Post-process, export, upload and mark the job done (CPU queue)."""

    def stage(ctx: ServiceContext, jid: str, lease: Lease) -> str:
        outcome, done = steps.finish(ctx, jid, holds=lease.holds)
        if done is not None:
            notify_job_ended(ctx, self.app, done)
        return outcome

    return self.run_stage(stage, job_id, epoch)


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
