"""Routines: publish a done job for fitness apps, find, read with downloads, unpublish."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from api.deps import ContentKey, Ctx, OwnedRoutine, ReaderKey
from api.errors import ApiError
from api.links import artifact_links
from api.schemas import RoutineCreate, RoutineList, RoutinePublic
from choreo.contracts.routine import IMPACTS, ROUTINE_PROFILES
from choreo.service.jobs import get_job
from choreo.service.records import INTENSITY_LEVELS, ROUTINE_KINDS
from choreo.service.routines import RoutineFilter, delete_routine, list_routines, publish_job

__all__ = ["router"]

router = APIRouter(prefix="/v1/routines", tags=["routines"])


@router.post("", status_code=status.HTTP_201_CREATED, response_model=RoutinePublic)
def publish(body: RoutineCreate, ctx: Ctx, key: ContentKey) -> RoutinePublic:
    """Publish a done job; tempo, duration and intensity are measured, not declared."""
    job = get_job(ctx, body.job_id, team=key.team)
    if job is None:
        raise ApiError.not_found("job", body.job_id)
    routine = publish_job(ctx, job, title=body.title, tags=body.tags, style=body.style)
    return RoutinePublic.from_record(routine)


@router.get("", response_model=RoutineList)
def find(
    ctx: Ctx,
    key: ReaderKey,
    tag: Annotated[str | None, Query(max_length=64)] = None,
    style: Annotated[str | None, Query(max_length=40)] = None,
    intensity: Annotated[str | None, Query(pattern="^(" + "|".join(INTENSITY_LEVELS) + ")$")] = None,
    kind: Annotated[str | None, Query(pattern="^(" + "|".join(ROUTINE_KINDS) + ")$")] = None,
    impact: Annotated[str | None, Query(pattern="^(" + "|".join(IMPACTS) + ")$")] = None,
    profile: Annotated[
        str | None, Query(pattern="^(" + "|".join((*ROUTINE_PROFILES, "custom")) + ")$")
    ] = None,
    tempo_min_bpm: Annotated[float | None, Query(ge=0)] = None,
    tempo_max_bpm: Annotated[float | None, Query(ge=0)] = None,
    duration_min_s: Annotated[float | None, Query(ge=0)] = None,
    duration_max_s: Annotated[float | None, Query(ge=0)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(pattern=r"^[0-9]{1,18}$")] = None,
) -> RoutineList:
    """The team's routines that match every given filter, newest first."""
    for low, high, name in (
        (tempo_min_bpm, tempo_max_bpm, "tempo"),
        (duration_min_s, duration_max_s, "duration"),
    ):
        if low is not None and high is not None and low > high:
            raise ApiError(422, "invalid_request", f"{name} range is empty: min {low} > max {high}")
    flt = RoutineFilter(
        tag=tag,
        style=style,
        intensity=intensity,
        kind=kind,
        impact=impact,
        profile=profile,
        tempo_min_bpm=tempo_min_bpm,
        tempo_max_bpm=tempo_max_bpm,
        duration_min_s=duration_min_s,
        duration_max_s=duration_max_s,
    )
    found, next_seq = list_routines(
        ctx, key.team, flt, limit=limit, before_seq=int(cursor) if cursor else None
    )
    return RoutineList(
        items=[RoutinePublic.from_record(r) for r in found],
        next_cursor=str(next_seq) if next_seq is not None else None,
    )


@router.get("/{routine_id}", response_model=RoutinePublic)
def get_one(routine: OwnedRoutine, ctx: Ctx) -> RoutinePublic:
    """One routine with presigned download URLs for its files."""
    public = RoutinePublic.from_record(routine)
    public.downloads = artifact_links(ctx, routine.artifacts)
    public.downloads_expire_at = time.time() + ctx.settings.presign_expiry_s
    return public


@router.delete("/{routine_id}", status_code=status.HTTP_204_NO_CONTENT)
def unpublish(routine: OwnedRoutine, ctx: Ctx, key: ContentKey) -> Response:
    """Unpublish; the job and its files stay."""
    delete_routine(ctx, routine)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
