"""Routines: finished dances and workouts published for fitness apps, found by what they are.

Tempo and duration come from the song; the intensity from the motion: its
motion energy (mean squared joint speed, measured by the worker when the job
finished, ``summary.motion_energy_m2_s2``) becomes a MET value, kilocalories a
minute and a level (light, moderate, vigorous) through the energy calibration
(:mod:`choreo.models.energy`, on the Compendium of Physical Activities). A
workout (a job with the option ``routine``) also carries its profile, impact
and cue sheet. The scores are kept with the motion energy they come from, so
:func:`rescore_routines` recomputes a whole catalogue when the calibration
changes, without rendering anything again. Fitness keys only read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from choreo.errors import ConflictError
from choreo.models.energy import DEFAULT_BODY_MASS_KG, energy_calibration, intensity_level, kcal_per_min
from choreo.service.context import ServiceContext
from choreo.service.jobs import next_seq
from choreo.service.records import JobRecord, JobState, RoutineRecord, new_id, routine_key

__all__ = [
    "RoutineFilter",
    "delete_routine",
    "get_routine",
    "index_routine",
    "list_routines",
    "publish_job",
    "rescore_routines",
    "routine_for_job",
    "routines_of_jobs",
    "scored",
]


def scored(routine: RoutineRecord) -> RoutineRecord:
    """``routine`` with its MET value, kilocalories and level from its motion energy and today's
    calibration (a workout's at its body mass, a dance's at the default 70 kg)."""
    calibration = energy_calibration()
    met = calibration.met(routine.motion_energy_m2_s2)
    mass = routine.sheet.body_mass_kg if routine.sheet is not None else DEFAULT_BODY_MASS_KG
    return routine.model_copy(
        update={
            "met": round(met, 2),
            "kcal_per_min": round(kcal_per_min(met, mass), 2),
            "intensity_level": intensity_level(met),
            "calibration": calibration.version,
        }
    )


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
    sheet = summary.routine
    routine = scored(
        RoutineRecord(
            id=new_id("rtn"),
            team=job.team,
            job_id=job.id,
            title=title,
            tags=sorted({t.strip().lower() for t in tags if t.strip()}),
            style=style or summary.style,
            tempo_bpm=round(summary.tempo_bpm, 3),
            duration_s=round(summary.duration_s, 3),
            intensity=round(summary.mean_joint_speed_m_per_s, 4),
            intensity_level="",
            kind="dance" if sheet is None else "workout",
            profile=None if sheet is None else sheet.profile,
            impact=None if sheet is None else sheet.impact,
            motion_energy_m2_s2=summary.motion_energy_m2_s2,
            sheet=sheet,
            artifacts=dict(job.artifacts),
            seq=next_seq(ctx),
        )
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
    kind: str | None = None
    impact: str | None = None
    profile: str | None = None
    tempo_min_bpm: float | None = None
    tempo_max_bpm: float | None = None
    duration_min_s: float | None = None
    duration_max_s: float | None = None

    def matches(self, r: RoutineRecord) -> bool:
        checks = (
            self.tag is None or self.tag.lower() in r.tags,
            self.style is None or self.style == r.style,
            self.intensity is None or self.intensity == r.intensity_level,
            self.kind is None or self.kind == r.kind,
            self.impact is None or self.impact == r.impact,
            self.profile is None or self.profile == r.profile,
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


def rescore_routines(ctx: ServiceContext) -> dict[str, int]:
    """Score every routine of every team again with today's calibration, in Redis and in storage.

    Routines published before the motion energy was kept (0) cannot be scored: they are counted
    as ``unscored`` and left as they are.
    """
    counts = {"rescored": 0, "unchanged": 0, "unscored": 0}
    for name in ctx.redis.scan_iter(match=ctx.key("routine", "*")):
        raw = ctx.redis.get(name)
        if not raw:
            continue
        routine = RoutineRecord.model_validate_json(raw)
        if routine.motion_energy_m2_s2 <= 0:
            counts["unscored"] += 1
            continue
        new = scored(routine)
        if new == routine:
            counts["unchanged"] += 1
            continue
        ctx.storage.put_json(routine_key(new.id), new.model_dump(mode="json"))
        ctx.redis.set(ctx.key("routine", new.id), new.model_dump_json())
        counts["rescored"] += 1
    return counts
