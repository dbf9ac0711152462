"""Celery tasks: thin wrappers that give each stage retries and a clean failure.

The cross-cutting rules live once, in :meth:`JobTask.run_stage`:

- a transient error (storage or Redis unreachable, a 5xx) is retried with
  exponential backoff up to ``task_max_retries`` times;
- a permanent :class:`~choreo.errors.ChoreoError` (a corrupt song, a bad
  option) fails that job with the error's code and message, and the chain's
  later stages find the job failed and do nothing, so the queue moves on;
- anything else is a bug: the job fails with ``internal_error`` and the
  exception is logged with its traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celery import Task
from celery.exceptions import SoftTimeLimitExceeded
from celery.utils.log import get_logger
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from choreo.errors import ChoreoError
from choreo.service.callbacks import CallbackError, CallbackRefused, deliver
from choreo.service.context import ServiceContext, get_context
from choreo.service.jobs import end_job
from choreo.service.notify import notify_job_ended
from choreo.service.queue import TASK_CALLBACK, TASK_FINISH, TASK_GENERATE, TASK_PREPARE
from choreo.service.records import JobState
from choreo.service.redact import safe_url
from choreo.service.teams import callback_secret
from worker import steps
from worker.app import app, worker_engine

__all__ = ["JobTask", "callback", "finish", "generate", "prepare"]

log = get_logger(__name__)

_BACKOFF_CAP_S = 300


def _is_transient(exc: BaseException) -> bool:
    if isinstance(exc, ChoreoError):
        return exc.transient
    return isinstance(exc, (RedisConnectionError, RedisTimeoutError, ConnectionError, TimeoutError))


def _backoff_s(retries: int) -> int:
    return min(2 ** (retries + 1), _BACKOFF_CAP_S)


class JobTask(Task):
    """Base of the stage tasks; see the module docstring for the rules."""

    def run_stage(self, stage: Callable[[ServiceContext, str], Any], job_id: str) -> Any:
        ctx = get_context()
        try:
            return stage(ctx, job_id)
        except SoftTimeLimitExceeded:
            self._fail(ctx, job_id, "timeout", f"{self.name} took longer than {ctx.settings.job_timeout_s} s")
        except Exception as exc:
            if _is_transient(exc):
                if self.request.retries < ctx.settings.task_max_retries:
                    log.warning("job %s: %s failed transiently (%s); retrying", job_id, self.name, exc)
                    raise self.retry(exc=exc, countdown=_backoff_s(self.request.retries)) from exc
                self._fail(ctx, job_id, getattr(exc, "code", "unavailable"), f"gave up after retries: {exc}")
            elif isinstance(exc, ChoreoError):
                self._fail(ctx, job_id, exc.code, exc.message)
            else:
                log.exception("job %s: %s crashed", job_id, self.name)
                self._fail(ctx, job_id, "internal_error", f"{type(exc).__name__}: {exc}")
        return steps.SKIPPED

    def _fail(self, ctx: ServiceContext, job_id: str, code: str, message: str) -> None:
        log.info("job %s failed in %s: %s: %s", job_id, self.name, code, message)
        job = end_job(ctx, job_id, JobState.FAILED, code=code, message=message)
        if job is not None:
            notify_job_ended(ctx, self.app, job)


@app.task(name=TASK_PREPARE, bind=True, base=JobTask, max_retries=None)
def prepare(self: JobTask, job_id: str) -> Any:
    """Decode the job's song and store its features (CPU queue)."""
    return self.run_stage(steps.prepare, job_id)


@app.task(name=TASK_GENERATE, bind=True, base=JobTask, max_retries=None)
def generate(self: JobTask, job_id: str) -> Any:
    """Generate the raw dance with this worker's engine (GPU queue)."""
    return self.run_stage(lambda ctx, jid: steps.generate(ctx, jid, worker_engine()), job_id)


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
            raise self.retry(exc=exc, countdown=_backoff_s(self.request.retries)) from None
        log.error("callback %s abandoned: %s", event, exc)
        return None
