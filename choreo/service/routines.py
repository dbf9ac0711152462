"""Routines: finished dances published for fitness apps, found by tag, tempo, length and intensity.

Tempo and duration come from the song, intensity from the motion: the mean
speed of the body's joints in metres per second, measured by the worker when
the job finished (``summary.mean_joint_speed_m_per_s``, :mod:`choreo.metrics.speed`).
The default level bounds,
1.07 and 1.32 m/s, are the terciles of that speed over the 52 recorded CMU
dance clips (retargeted to SMPL): ``low`` is calmer than two thirds of the
human dances. They are settings, so a catalogue can be recalibrated without
touching the records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from choreo.errors import ConflictError
from choreo.service.context import ServiceContext
from choreo.service.jobs import next_seq
from choreo.service.records import JobRecord, JobState, RoutineRecord, new_id, routine_key

__all__ = [
    "RoutineFilter",
    "delete_routine",
    "get_routine",
    "index_routine",
    "intensity_level",
    "list_routines",
    "publish_job",
    "routine_for_job",
    "routines_of_jobs",
]


def intensity_level(ctx: ServiceContext, intensity_m_per_s: float) -> str:
    """``low``, ``medium`` or ``high`` for a mean joint speed."""
    if intensity_m_per_s < ctx.settings.intensity_low_below_m_per_s:
        return "low"
    if intensity_m_per_s < ctx.settings.intensity_high_from_m_per_s:
        return "medium"
    return "high"


def index_routine(ctx: ServiceContext, routine: RoutineRecord) -> None:
    pipe = ctx.redis.pipeline()
    pipe.set(ctx.key("routine", routine.id), routine.model_dump_json())
    pipe.zadd(ctx.key("routines", routine.team), {routine.id: routine.seq})
    pipe.set(ctx.key("routine_of", routine.job_id), routine.id)
    pipe.execute()


def routine_for_job(ctx: ServiceContext, job_id: str) -> str | None:
    return cast(str | None, ctx.redis.get(ctx.key("routine_of", job_id)))


def routines_of_jobs(ctx: ServiceContext, job_ids: list[str]) -> dict[str, RoutineRecord]:
    """The routine each of ``job_ids`` is published as, by job id (unpublished jobs are left out)."""
    if not job_ids:
        return {}
    routine_ids = cast(list[str | None], ctx.redis.mget([ctx.key("routine_of", j) for j in job_ids]))
    published = [(job, rid) for job, rid in zip(job_ids, routine_ids, strict=True) if rid]
    raws = ctx.redis.mget([ctx.key("routine", rid) for _, rid in published]) if published else []
    pairs = zip(published, raws, strict=True)
    return {job: RoutineRecord.model_validate_json(raw) for (job, _), raw in pairs if raw}


def publish_job(
    ctx: ServiceContext, job: JobRecord, *, title: str, tags: list[str], style: str | None
) -> RoutineRecord:
    """Publish a finished job as a routine.

    Raises
    ------
    ConflictError
        When the job has not finished (code ``job_not_done``) or is already
        published (code ``already_published``).
    """
    if job.state != JobState.DONE:
        raise ConflictError(
            f"job {job.id} is {job.state.value}; only a done job can be published", code="job_not_done"
        )
    existing = routine_for_job(ctx, job.id)
    if existing:
        raise ConflictError(f"job {job.id} is already published as {existing}", code="already_published")
    summary = job.summary
    if summary is None:
        raise ConflictError(f"job {job.id} is done but has no summary", code="job_not_done")
    intensity = summary.mean_joint_speed_m_per_s
    routine = RoutineRecord(
        id=new_id("rtn"),
        team=job.team,
        job_id=job.id,
        title=title,
        tags=sorted({t.strip().lower() for t in tags if t.strip()}),
        style=style or summary.style,
        tempo_bpm=round(summary.tempo_bpm, 3),
        duration_s=round(summary.duration_s, 3),
        intensity=round(intensity, 4),
        intensity_level=intensity_level(ctx, intensity),
        artifacts=dict(job.artifacts),
        seq=next_seq(ctx),
    )
    ctx.storage.put_json(routine_key(routine.id), routine.model_dump(mode="json"))
    index_routine(ctx, routine)
    return routine


def get_routine(ctx: ServiceContext, routine_id: str, *, team: str) -> RoutineRecord | None:
    raw = ctx.redis.get(ctx.key("routine", routine_id))
    if not raw:
        return None
    routine = RoutineRecord.model_validate_json(raw)
    return routine if routine.team == team else None


@dataclass(frozen=True)
class RoutineFilter:
    """What a fitness app looks for; None means any."""

    tag: str | None = None
    style: str | None = None
    intensity: str | None = None
    tempo_min_bpm: float | None = None
    tempo_max_bpm: float | None = None
    duration_min_s: float | None = None
    duration_max_s: float | None = None

    def matches(self, r: RoutineRecord) -> bool:
        checks = (
            self.tag is None or self.tag.lower() in r.tags,
            self.style is None or self.style == r.style,
            self.intensity is None or self.intensity == r.intensity_level,
            self.tempo_min_bpm is None or r.tempo_bpm >= self.tempo_min_bpm,
            self.tempo_max_bpm is None or r.tempo_bpm <= self.tempo_max_bpm,
            self.duration_min_s is None or r.duration_s >= self.duration_min_s,
            self.duration_max_s is None or r.duration_s <= self.duration_max_s,
        )
        return all(checks)


def list_routines(
    ctx: ServiceContext, team: str, flt: RoutineFilter, *, limit: int, before_seq: int | None
) -> tuple[list[RoutineRecord], int | None]:
    """A page of the team's routines that pass the filter, newest first, and the next cursor.

    The team's catalogue is scanned in pages of the index, so a sparse filter
    still fills its page without loading every routine at once.
    """
    index = ctx.key("routines", team)
    found: list[RoutineRecord] = []
    top = f"({before_seq}" if before_seq is not None else "+inf"
    scan_page = max(limit * 4, 100)
    while True:
        ids = cast(list[str], ctx.redis.zrevrangebyscore(index, top, "-inf", start=0, num=scan_page))
        if not ids:
            return found, None
        raws = ctx.redis.mget([ctx.key("routine", i) for i in ids])
        for raw in raws:
            if not raw:
                continue
            routine = RoutineRecord.model_validate_json(raw)
            if flt.matches(routine):
                found.append(routine)
                if len(found) == limit:
                    return found, routine.seq
            top = f"({routine.seq}"
        if len(ids) < scan_page:
            return found, None


def delete_routine(ctx: ServiceContext, routine: RoutineRecord) -> None:
    """Unpublish: the routine goes, the job and its files stay."""
    ctx.storage.delete(routine_key(routine.id))
    pipe = ctx.redis.pipeline()
    pipe.delete(ctx.key("routine", routine.id))
    pipe.zrem(ctx.key("routines", routine.team), routine.id)
    pipe.delete(ctx.key("routine_of", routine.job_id))
    pipe.execute()
