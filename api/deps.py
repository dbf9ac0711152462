"""Dependencies: the context, the caller's key and scopes, and ownership, each written once.

A route declares what it needs with ``Annotated`` types: ``ContentKey`` (a live
key with the ``content`` scope), ``OwnedJob`` (a job of the caller's team, or
404), and so on. Another team's object is answered exactly like a missing one.
"""

from __future__ import annotations

from typing import Annotated

from celery import Celery
from fastapi import Depends, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from api.errors import ApiError
from choreo.service.context import ServiceContext
from choreo.service.jobs import get_batch, get_job
from choreo.service.libraries import LibraryRecord, get_library
from choreo.service.records import ApiKeyRecord, BatchRecord, JobRecord, RoutineRecord, TrackRecord
from choreo.service.routines import get_routine
from choreo.service.tracks import SHA256_PATTERN, get_track

__all__ = [
    "AdminKey",
    "CeleryApp",
    "ContentKey",
    "Ctx",
    "OwnedBatch",
    "OwnedJob",
    "OwnedLibrary",
    "OwnedRoutine",
    "OwnedTrack",
    "ReaderKey",
]

_bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer chk_...`")


def get_ctx(request: Request) -> ServiceContext:
    return request.app.state.ctx


def get_celery(request: Request) -> Celery:
    return request.app.state.celery


Ctx = Annotated[ServiceContext, Depends(get_ctx)]
CeleryApp = Annotated[Celery, Depends(get_celery)]


def current_key(
    request: Request, _: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> ApiKeyRecord:
    """The live key :class:`api.guard.RequestGuard` found before the body was read.

    The bearer credentials are declared only so the OpenAPI docs show the scheme.
    """
    key = getattr(request.state, "api_key", None)
    if key is None:
        raise ApiError(
            401,
            "unauthenticated",
            "send an API key as 'Authorization: Bearer <key>'",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return key


def _scoped(*accepted: str):  # noqa: ANN202 - a dependency factory
    def check(key: Annotated[ApiKeyRecord, Depends(current_key)]) -> ApiKeyRecord:
        if not set(accepted) & set(key.scopes):
            raise ApiError(
                403,
                "forbidden",
                f"this key has scopes {', '.join(key.scopes)}; this needs one of {', '.join(accepted)}",
            )
        return key

    return check


ContentKey = Annotated[ApiKeyRecord, Depends(_scoped("content"))]
ReaderKey = Annotated[ApiKeyRecord, Depends(_scoped("content", "fitness"))]
AdminKey = Annotated[ApiKeyRecord, Depends(_scoped("admin"))]


def owned_job(ctx: Ctx, key: ContentKey, job_id: Annotated[str, Path(max_length=80)]) -> JobRecord:
    job = get_job(ctx, job_id, team=key.team)
    if job is None:
        raise ApiError.not_found("job", job_id)
    return job


def owned_batch(ctx: Ctx, key: ContentKey, batch_id: Annotated[str, Path(max_length=80)]) -> BatchRecord:
    batch = get_batch(ctx, batch_id, team=key.team)
    if batch is None:
        raise ApiError.not_found("batch", batch_id)
    return batch


def owned_track(ctx: Ctx, key: ContentKey, sha256: Annotated[str, Path(max_length=64)]) -> TrackRecord:
    if not SHA256_PATTERN.match(sha256):
        raise ApiError(422, "invalid_request", f"track id {sha256!r} is not a lowercase hex SHA-256")
    track = get_track(ctx, key.team, sha256)
    if track is None:
        raise ApiError.not_found("track", sha256)
    return track


def owned_routine(ctx: Ctx, key: ReaderKey, routine_id: Annotated[str, Path(max_length=80)]) -> RoutineRecord:
    routine = get_routine(ctx, routine_id, team=key.team)
    if routine is None:
        raise ApiError.not_found("routine", routine_id)
    return routine


def owned_library(
    ctx: Ctx, key: ContentKey, library_id: Annotated[str, Path(max_length=80)]
) -> LibraryRecord:
    library = get_library(ctx, library_id, team=key.team)
    if library is None:
        raise ApiError.not_found("library", library_id)
    return library


OwnedJob = Annotated[JobRecord, Depends(owned_job)]
OwnedLibrary = Annotated[LibraryRecord, Depends(owned_library)]
OwnedBatch = Annotated[BatchRecord, Depends(owned_batch)]
OwnedTrack = Annotated[TrackRecord, Depends(owned_track)]
OwnedRoutine = Annotated[RoutineRecord, Depends(owned_routine)]
