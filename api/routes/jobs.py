"""Jobs: submit one track or an album, read, list by state, cancel, delete, download."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from api.deps import CeleryApp, ContentKey, Ctx, OwnedJob
from api.errors import ApiError
from api.schemas import (
    ArtifactLink,
    ArtifactsPublic,
    BatchPublic,
    JobList,
    JobPublic,
    SubmitCreate,
    SubmitPublic,
)
from choreo.service.jobs import (
    batch_status,
    create_batch,
    create_job,
    delete_job,
    end_job,
    find_duplicate,
    get_job,
    list_jobs,
)
from choreo.service.notify import notify_job_ended
from choreo.service.queue import enqueue_job
from choreo.service.records import BatchRecord, JobRecord, JobState, new_id
from choreo.service.routines import delete_routine, get_routine, routine_for_job
from choreo.service.tracks import SHA256_PATTERN, get_track

__all__ = ["batch_public", "router"]

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])


def batch_public(ctx: Ctx, batch: BatchRecord) -> BatchPublic:
    status_ = batch_status(ctx, batch)
    return BatchPublic(
        id=batch.id,
        job_ids=batch.job_ids,
        state=str(status_["state"]),
        progress=float(status_["progress"]),
        counts=dict(status_["counts"]),
        created_at=batch.created_at,
    )


@router.post("", status_code=status.HTTP_202_ACCEPTED, response_model=SubmitPublic)
def submit(body: SubmitCreate, ctx: Ctx, celery: CeleryApp, key: ContentKey) -> SubmitPublic:
    """Render each listed track (one job per track) as one batch.

    A track the team already had rendered with the same options is not rendered
    again (its job is returned with ``deduplicated``) unless ``force`` is set.
    """
    if len(body.tracks) > ctx.settings.max_tracks_per_submit:
        raise ApiError(
            422,
            "too_many_tracks",
            f"{len(body.tracks)} tracks; at most {ctx.settings.max_tracks_per_submit} a request",
        )
    tracks = []
    for sha in dict.fromkeys(body.tracks):
        if not SHA256_PATTERN.match(sha):
            raise ApiError(422, "invalid_request", f"tracks: {sha!r} is not a lowercase hex SHA-256")
        track = get_track(ctx, key.team, sha)
        if track is None:
            raise ApiError.not_found("track", sha)
        tracks.append(track)

    batch_id = new_id("bat")
    callback = str(body.callback_url) if body.callback_url else None
    jobs: list[tuple[JobRecord, bool]] = []
    for track in tracks:
        fingerprint = body.options.fingerprint(track.sha256)
        existing = None if body.force else find_duplicate(ctx, key.team, fingerprint)
        if existing is not None:
            jobs.append((existing, True))
            continue
        job = JobRecord(
            id=new_id("job"),
            team=key.team,
            batch_id=batch_id,
            track_sha256=track.sha256,
            track_ext=track.ext,
            track_name=track.filename,
            options=body.options,
            priority=body.priority,
            callback_url=callback,
            fingerprint=fingerprint,
        )
        jobs.append((create_job(ctx, job), False))
    batch = create_batch(
        ctx, BatchRecord(id=batch_id, team=key.team, job_ids=[j.id for j, _ in jobs], callback_url=callback)
    )
    for job, deduplicated in jobs:
        if not deduplicated:
            enqueue_job(celery, job)
    return SubmitPublic(
        batch=batch_public(ctx, batch), jobs=[JobPublic.from_record(j, deduplicated=d) for j, d in jobs]
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
    return JobList(
        items=[JobPublic.from_record(j) for j in jobs],
        next_cursor=str(next_seq) if next_seq is not None else None,
    )


@router.get("/{job_id}", response_model=JobPublic)
def get_one_job(job: OwnedJob) -> JobPublic:
    return JobPublic.from_record(job)


@router.post("/{job_id}/cancel", response_model=JobPublic)
def cancel(job: OwnedJob, ctx: Ctx, celery: CeleryApp) -> JobPublic:
    """Cancel a queued or running job; its remaining stages do nothing."""
    ended = end_job(ctx, job.id, JobState.CANCELLED, code="cancelled", message="cancelled by the client")
    if ended is None:
        current = get_job(ctx, job.id)
        state = current.state.value if current else "deleted"
        raise ApiError(409, "job_finished", f"job {job.id} is already {state}")
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
        raise ApiError(
            409, "job_not_done", f"job {job.id} is {job.state.value}; artifacts exist once it is done"
        )
    return ArtifactsPublic(
        job_id=job.id,
        expires_at=time.time() + ctx.settings.presign_expiry_s,
        artifacts=artifact_links(ctx, job),
    )


def artifact_links(
    ctx: Ctx, job: JobRecord | None = None, keys: dict[str, str] | None = None
) -> list[ArtifactLink]:
    """Presigned links for a job's artifacts (or for the given storage keys by kind)."""
    by_kind = keys if keys is not None else (job.artifacts if job else {})
    links = []
    for kind, storage_key in sorted(by_kind.items()):
        filename = storage_key.rsplit("/", 1)[-1]
        url = ctx.storage.presign_get(storage_key, expiry_s=ctx.settings.presign_expiry_s, filename=filename)
        links.append(ArtifactLink(kind=kind, filename=filename, url=url))
    return links
