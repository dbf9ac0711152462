"""Rebuild the Redis index from storage, the record, after Redis lost its data.

Reads every key, track, team secret, job, batch, routine, team library and
pending upload record from the bucket and writes the index entries again, and
the job-duration histograms of the metrics from the ended jobs; running it
twice gives the same index.
"""

from __future__ import annotations

import time

from celery import Celery

from choreo.service.context import ServiceContext
from choreo.service.jobs import index_batch, index_job
from choreo.service.keys import index_key
from choreo.service.libraries import LibraryRecord, LibraryState, enqueue_build, index_library
from choreo.service.metrics import restore_job_durations
from choreo.service.queue import TASK_FINISH, TASK_PERFORM, TASK_PREPARE, enqueue_job
from choreo.service.records import (
    PERFORMED,
    PREPARED,
    ApiKeyRecord,
    BatchRecord,
    JobRecord,
    RoutineRecord,
    TeamSecretRecord,
    TrackRecord,
    job_prefix,
    team_secret_key,
    work_key,
)
from choreo.service.routines import index_routine
from choreo.service.teams import index_team_secret
from choreo.service.tracks import index_track
from choreo.service.uploads import PendingUpload, index_upload

__all__ = ["rebuild_index", "resume_stage"]


def resume_stage(ctx: ServiceContext, job: JobRecord) -> str:
    """The stage an unfinished job goes on from: the first whose output is not stored yet."""
    stored = set(ctx.storage.list_keys(f"{job_prefix(job.id)}work/"))
    if work_key(job.id, PERFORMED) in stored:
        return TASK_FINISH
    if work_key(job.id, PREPARED) in stored:
        return TASK_PERFORM
    return TASK_PREPARE


def rebuild_index(ctx: ServiceContext, celery: Celery | None = None) -> dict[str, int]:
    """Index everything the bucket records; returns how many of each kind were indexed.

    With ``celery``, every job that had not ended is enqueued again from the
    stage it had reached (the queue lived in the same Redis and went with it),
    and every library whose build had not ended is built again; a stage or a
    build that runs twice writes the same objects and ends once.
    """
    counts = {
        "keys": 0,
        "tracks": 0,
        "team_secrets": 0,
        "jobs": 0,
        "batches": 0,
        "routines": 0,
        "uploads": 0,
        "libraries": 0,
        "resumed": 0,
    }
    max_seq = 0
    for key in ctx.storage.list_keys("keys/"):
        if key.endswith(".json") and (raw := ctx.storage.get_json(key)):
            index_key(ctx, ApiKeyRecord.model_validate(raw))
            counts["keys"] += 1
    for key in ctx.storage.list_keys("teams/"):
        if "/tracks/" in key and key.endswith(".json") and (raw := ctx.storage.get_json(key)):
            index_track(ctx, TrackRecord.model_validate(raw))
            counts["tracks"] += 1
        elif key == team_secret_key(key.split("/")[1]) and (raw := ctx.storage.get_json(key)):
            index_team_secret(ctx, TeamSecretRecord.model_validate(raw))
            counts["team_secrets"] += 1
    jobs = []
    for key in ctx.storage.list_keys("jobs/"):
        if key.endswith("/job.json") and (raw := ctx.storage.get_json(key)):
            jobs.append(JobRecord.model_validate(raw))
    for job in sorted(jobs, key=lambda j: j.seq):
        index_job(ctx, job)
        max_seq = max(max_seq, job.seq)
    counts["jobs"] = len(jobs)
    restore_job_durations(ctx, jobs)
    for key in ctx.storage.list_keys("batches/"):
        if key.endswith(".json") and (raw := ctx.storage.get_json(key)):
            batch = BatchRecord.model_validate(raw)
            index_batch(ctx, batch)
            for job_id in batch.job_ids:
                ctx.redis.sadd(ctx.key("job_batches", job_id), batch.id)
            counts["batches"] += 1
    for key in ctx.storage.list_keys("routines/"):
        if key.endswith(".json") and (raw := ctx.storage.get_json(key)):
            routine = RoutineRecord.model_validate(raw)
            index_routine(ctx, routine)
            max_seq = max(max_seq, routine.seq)
            counts["routines"] += 1
    for key in ctx.storage.list_keys("uploads/"):
        if key.endswith(".json") and (raw := ctx.storage.get_json(key)):
            ticket = PendingUpload.model_validate(raw)
            if ticket.closed_at is None and ticket.expires_at > time.time():
                index_upload(ctx, ticket)
                counts["uploads"] += 1
    libraries = []
    for key in ctx.storage.list_keys("libraries/"):
        if key.endswith("/library.json") and (raw := ctx.storage.get_json(key)):
            libraries.append(LibraryRecord.model_validate(raw))
            index_library(ctx, libraries[-1])
    counts["libraries"] = len(libraries)
    current = int(ctx.redis.get(ctx.key("seq")) or 0)
    if max_seq > current:
        ctx.redis.set(ctx.key("seq"), max_seq)
    if celery is not None:
        for job in jobs:
            if not job.terminal:
                enqueue_job(ctx, celery, job, first_stage=resume_stage(ctx, job))
                counts["resumed"] += 1
        for library in libraries:
            if library.state in (LibraryState.QUEUED, LibraryState.BUILDING):
                enqueue_build(celery, library)
                counts["resumed"] += 1
    return counts
