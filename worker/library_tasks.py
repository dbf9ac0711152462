"""The Celery task that builds a team's phrase library, on the CPU queue.

Thin, like the stage tasks (:mod:`worker.tasks`): the body is
:func:`worker.library_build.build_team_library`. An outage (storage or Redis
unreachable) is retried with backoff up to ``task_max_retries`` times, then
the library fails as unavailable; a permanent error fails it with its code
and message; anything else is a bug, logged with its traceback, and the
library fails with ``internal_error``. A redelivered message finds the library
built (or failed) and does nothing. Unlike a job's stages there is no lease:
a worker that dies mid-build leaves the message unacknowledged, and the
broker hands it out again after its visibility timeout.
"""

from __future__ import annotations

from celery import Task
from celery.utils.log import get_logger

from choreo.errors import ChoreoError
from choreo.service.context import get_context
from choreo.service.libraries import TASK_BUILD_LIBRARY, fail_library
from choreo.service.redact import public_message
from worker.app import app
from worker.library_build import build_team_library
from worker.tasks import _backoff_s, is_transient

__all__ = ["build_library"]

log = get_logger(__name__)


@app.task(name=TASK_BUILD_LIBRARY, bind=True, max_retries=None)
def build_library(self: Task, library_id: str) -> str:
    """Build the library ``library_id`` from its uploaded files (CPU queue)."""
    ctx = get_context()
    try:
        return build_team_library(
            ctx, library_id, log=lambda msg: log.info("library %s: %s", library_id, msg)
        )
    except Exception as exc:
        if is_transient(exc) and self.request.retries < ctx.settings.task_max_retries:
            log.warning("library %s: build failed transiently (%s); retrying", library_id, exc)
            raise self.retry(
                exc=exc, countdown=_backoff_s(self.request.retries, ctx.settings.retry_backoff_cap_s)
            ) from None
        if is_transient(exc):
            return fail_library(ctx, library_id, "unavailable", "a service it needs stayed unavailable")
        if isinstance(exc, ChoreoError):
            return fail_library(ctx, library_id, exc.code, public_message(exc.message))
        log.exception("library %s: build crashed", library_id)
        return fail_library(ctx, library_id, "internal_error", f"internal error ({type(exc).__name__})")
