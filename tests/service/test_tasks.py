"""The tasks' one place for failure handling, run eagerly against the real Redis and storage.

``JobTask.run_stage`` retries transient errors, fails the job with a
permanent error's code, and turns a bug into ``internal_error``; these tests
drive it with stages that fail on purpose.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from choreo.errors import AudioError, StorageError
from choreo.service.context import get_context
from choreo.service.jobs import get_job
from choreo.service.records import JobRecord, JobState
from choreo.service.settings import get_service_settings
from tests.service.helpers import ServiceStack, made_job
from worker.app import app
from worker.tasks import JobTask

pytestmark = pytest.mark.service

calls: list[str] = []
failures: dict[str, tuple[Exception, int]] = {}
"""Per job: the error a stage raises, and on how many calls it raises it."""


def _stage(ctx: object, job_id: str, lease: object) -> str:
    calls.append(job_id)
    error, times = failures.get(job_id, (None, 0))
    if error is not None and calls.count(job_id) <= times:
        raise error
    return "ran"


@app.task(bind=True, base=JobTask, name="tests.flaky_stage", max_retries=None)
def flaky_stage(self: JobTask, job_id: str) -> str:
    return self.run_stage(_stage, job_id)


@pytest.fixture
def service_env(stack: ServiceStack, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Point this process's settings at the running stack, as a worker's environment does."""
    for name, value in stack.env.items():
        if name.startswith("CHOREO_"):
            monkeypatch.setenv(name, value)
    get_service_settings.cache_clear()
    get_context.cache_clear()
    calls.clear()
    failures.clear()
    yield
    get_service_settings.cache_clear()
    get_context.cache_clear()


def _job(stack: ServiceStack) -> JobRecord:
    return made_job(stack.ctx, "tasks")


def test_a_transient_error_is_retried_until_the_stage_succeeds(
    stack: ServiceStack, service_env: None
) -> None:
    job = _job(stack)
    failures[job.id] = (StorageError("storage timed out", transient=True), 2)
    assert flaky_stage.apply(args=(job.id,)).get() == "ran"
    assert len(calls) == 3
    assert get_job(stack.ctx, job.id).state == JobState.QUEUED


def test_a_transient_error_that_persists_fails_the_job_after_the_retries(
    stack: ServiceStack, service_env: None
) -> None:
    job = _job(stack)
    failures[job.id] = (StorageError("storage timed out", transient=True), 1000)
    flaky_stage.apply(args=(job.id,))
    failed = get_job(stack.ctx, job.id)
    assert failed.state == JobState.FAILED
    assert failed.error_code == "storage_error"
    assert failed.error_message == "a service it needs stayed unavailable"
    assert len(calls) == get_service_settings().task_max_retries + 1


def test_a_permanent_error_fails_the_job_at_once_with_its_code(
    stack: ServiceStack, service_env: None
) -> None:
    job = _job(stack)
    failures[job.id] = (AudioError("x.ogg: damaged audio file", code="corrupt_audio"), 1000)
    assert flaky_stage.apply(args=(job.id,)).get() == "skipped"
    assert len(calls) == 1
    failed = get_job(stack.ctx, job.id)
    assert (failed.state, failed.error_code, failed.error_message) == (
        JobState.FAILED,
        "corrupt_audio",
        "x.ogg: damaged audio file",
    )
    assert stack.ctx.storage.get_json(f"jobs/{job.id}/job.json")["state"] == "failed"


def test_a_storage_refusal_fails_the_job_at_once(stack: ServiceStack, service_env: None) -> None:
    """A refusal (a 403: wrong keys, no permission) fails the same way every time: no retries."""
    job = _job(stack)
    failures[job.id] = (StorageError("storage refused to write the record: AccessDenied"), 1000)
    assert flaky_stage.apply(args=(job.id,)).get() == "skipped"
    assert len(calls) == 1
    failed = get_job(stack.ctx, job.id)
    assert (failed.state, failed.error_code) == (JobState.FAILED, "storage_error")


def test_a_bug_fails_the_job_as_internal_error(stack: ServiceStack, service_env: None) -> None:
    job = _job(stack)
    failures[job.id] = (ZeroDivisionError("division by zero"), 1000)
    flaky_stage.apply(args=(job.id,))
    failed = get_job(stack.ctx, job.id)
    assert failed.error_code == "internal_error"
    assert "ZeroDivisionError" in failed.error_message
