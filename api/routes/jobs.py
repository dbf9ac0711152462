"""Jobs: submit one track or an album, render a song again, read, list by state, cancel, delete, download."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from api.deps import CeleryApp, ContentKey, Ctx, OwnedJob
from api.links import artifact_links, batch_public
from api.schemas import ArtifactsPublic, JobList, JobPublic, RerenderCreate, SubmitCreate, SubmitPublic
from choreo.errors import ConflictError
from choreo.service.jobs import delete_job, end_job, get_job, list_jobs
from choreo.service.notify import notify_job_ended
from choreo.service.records import JobState
from choreo.service.routines import delete_routine, get_routine, routine_for_job, routines_of_jobs
from choreo.service.submit import rerender_job, submit_jobs

__all__ = ["router"]

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])


@router.post("", status_code=status.HTTP_202_ACCEPTED, response_model=SubmitPublic)
def submit(body: SubmitCreate, ctx: Ctx, celery: CeleryApp, key: ContentKey) -> SubmitPublic:
    """Render each listed track (one job per track) as one batch.

    A track the team already had rendered with the same options is not rendered
    again (its job is returned with ``deduplicated``) unless ``force`` is set.
    """
    submitted = submit_jobs(
        ctx,
        celery,
        team=key.team,
        tracks=body.tracks,
        options=body.options,
        priority=body.priority,
        callback_url=str(body.callback_url) if body.callback_url else None,
        force=body.force,
        name=body.name,
    )
    return SubmitPublic(
        batch=batch_public(ctx, submitted.batch),
        jobs=[JobPublic.from_record(j, deduplicated=d) for j, d in submitted.jobs],
    )


@router.get("", response_model=JobList)
def get_jobs(
    ctx: Ctx,
    key: ContentKey,
    state: JobState | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(pattern=r"^[0-9]{1,18}$")] = None,
) -> JobList:
    """The team's jobs, newest first, optionally in one state; follow ``next_cursor`` for more."""
    jobs, next_seq = list_jobs(
        ctx, key.team, state=state, limit=limit, before_seq=int(cursor) if cursor else None
    )
    published = routines_of_jobs(ctx, [j.id for j in jobs])
    return JobList(
        items=[JobPublic.from_record(j, routine=published.get(j.id)) for j in jobs],
        next_cursor=str(next_seq) if next_seq is not None else None,
    )


@router.get("/{job_id}", response_model=JobPublic)
def get_one_job(job: OwnedJob, ctx: Ctx) -> JobPublic:
    return JobPublic.from_record(job, routine=routines_of_jobs(ctx, [job.id]).get(job.id))


@router.post("/{job_id}/rerender", status_code=status.HTTP_202_ACCEPTED, response_model=JobPublic)
def rerender(job: OwnedJob, body: RerenderCreate, ctx: Ctx, celery: CeleryApp) -> JobPublic:
    """Render the job's song again with other options: another take, listed under the album's song.

    The same options as an existing take give that take back, marked ``deduplicated``.
    """
    again, deduplicated = rerender_job(ctx, celery, source=job, options=body.options, priority=body.priority)
    return JobPublic.from_record(again, deduplicated=deduplicated)


@router.post("/{job_id}/cancel", response_model=JobPublic)
def cancel(job: OwnedJob, ctx: Ctx, celery: CeleryApp) -> JobPublic:
    """Cancel a queued or running job; its remaining stages do nothing."""
    ended = end_job(ctx, job.id, JobState.CANCELLED, code="cancelled", message="cancelled by the client")
    if ended is None:
        current = get_job(ctx, job.id)
        state = current.state.value if current else "deleted"
        raise ConflictError(f"job {job.id} is already {state}", code="job_finished")
    notify_job_ended(ctx, celery, ended)
    return JobPublic.from_record(ended)


@router.delete("/{job_id}", status_code=status.HTTP_204_NO_CONTENT)
def remove_job(job: OwnedJob, ctx: Ctx, celery: CeleryApp) -> Response:
    """Delete a job, its files and any routine published from it (a running job is cancelled first)."""
    ended = end_job(ctx, job.id, JobState.CANCELLED, code="cancelled", message="deleted by the client")
    if ended is not None:
        notify_job_ended(ctx, celery, ended)
    routine_id = routine_for_job(ctx, job.id)
    if routine_id and (routine := get_routine(ctx, routine_id, team=job.team)):
        delete_routine(ctx, routine)
    delete_job(ctx, job)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/{job_id}/artifacts", response_model=ArtifactsPublic)
def artifacts(job: OwnedJob, ctx: Ctx) -> ArtifactsPublic:
    """Presigned download URLs for every file of a done job; they expire at ``expires_at``."""
    if job.state != JobState.DONE:
        raise ConflictError(
            f"job {job.id} is {job.state.value}; artifacts exist once it is done", code="job_not_done"
        )
    return ArtifactsPublic(
        job_id=job.id,
        expires_at=time.time() + ctx.settings.presign_expiry_s,
        artifacts=artifact_links(ctx, job.artifacts),
    )
