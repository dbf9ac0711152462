"""Job and batch records: written to storage first, indexed in Redis, moved forward only.

Redis keys (under the service prefix):

- ``job:<id>``: the record as JSON;
- ``jobs:<team>`` and ``jobs:<team>:<state>``: sorted sets of job ids scored by
  their sequence number, for listing with a cursor;
- ``dedup:<team>:<fingerprint>``: the job that renders that track with those
  options for that team;
- ``rerenders:<id>``: the jobs that render the song of the album's job ``<id>`` again;
- ``batch:<id>``: a batch record as JSON; ``batches:<team>``: a sorted set of the
  team's batch ids scored by their creation time.

Every change goes through :func:`update_job`, one writer at a time and an
optimistic transaction, so a worker's progress and a user's cancel never
overwrite each other, in Redis or in storage; a job that reached a terminal
state stays there.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypedDict, cast

import redis

from choreo.errors import ParameterError, StorageError
from choreo.service.context import ServiceContext
from choreo.service.records import (
    STATE_ORDER,
    TERMINAL_STATES,
    BatchRecord,
    JobRecord,
    JobState,
    batch_key,
    job_prefix,
    job_record_key,
    now_s,
)

__all__ = [
    "BatchStatus",
    "advance_job",
    "batch_status",
    "create_batch",
    "create_job",
    "delete_job",
    "was_deleted",
    "end_job",
    "get_batch",
    "get_job",
    "release_claim",
    "index_batch",
    "index_job",
    "list_batches",
    "list_jobs",
    "rerenders_of",
    "next_seq",
    "save_job",
    "update_job",
]


def next_seq(ctx: ServiceContext) -> int:
    """A number larger than every earlier one: the listing order and the cursor."""
    return int(ctx.redis.incr(ctx.key("seq")))


def _index_commands(ctx: ServiceContext, pipe: redis.client.Pipeline, job: JobRecord) -> None:
    pipe.set(ctx.key("job", job.id), job.model_dump_json())
    pipe.zadd(ctx.key("jobs", job.team), {job.id: job.seq})
    for state in JobState:
        if state != job.state:
            pipe.zrem(ctx.key("jobs", job.team, state.value), job.id)
    pipe.zadd(ctx.key("jobs", job.team, job.state.value), {job.id: job.seq})
    if job.rerender_of:
        pipe.sadd(ctx.key("rerenders", job.rerender_of), job.id)
    dedup = ctx.key("dedup", job.team, job.fingerprint)
    if job.state in (JobState.FAILED, JobState.CANCELLED):
        # A failed or cancelled render does not stop the same request from rendering again.
        pipe.eval(
            _RELEASE,
            1,
            dedup,
            job.id,
        )
    else:
        # The first live or finished job keeps the key: a forced re-render does not take it over.
        pipe.set(dedup, job.id, nx=True)


def index_job(ctx: ServiceContext, job: JobRecord) -> None:
    """Write a job to the Redis index only (creation and the rebuild)."""
    pipe = ctx.redis.pipeline()
    _index_commands(ctx, pipe, job)
    pipe.execute()


def save_job(ctx: ServiceContext, job: JobRecord) -> None:
    """Write a job's record to storage (``jobs/<id>/job.json``)."""
    ctx.storage.put_json(job_record_key(job.id), job.model_dump(mode="json"))


def create_job(ctx: ServiceContext, job: JobRecord) -> JobRecord:
    """Record a new job: storage first, then the index. Enqueue only after this returns."""
    if job.seq == 0:
        job.seq = next_seq(ctx)
    save_job(ctx, job)
    index_job(ctx, job)
    return job


def get_job(ctx: ServiceContext, job_id: str, *, team: str | None = None) -> JobRecord | None:
    """The job, or None; with ``team``, another team's job is None too."""
    raw = ctx.redis.get(ctx.key("job", job_id))
    if not raw:
        return None
    job = JobRecord.model_validate_json(raw)
    if team is not None and job.team != team:
        return None
    return job


_WRITE_LOCK_S = 5
"""How long one writer may hold a job; a writer that died lets the others go after this.

A write takes milliseconds; a writer that stalls past this loses only the turn, not
correctness (the optimistic transaction below). Kept short because a worker killed while it
writes holds up its job's next writer, the new holder of the stage, this long."""

_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


@contextmanager
def _write_lock(ctx: ServiceContext, job_id: str) -> Iterator[None]:
    """Let one writer at a time write a job's storage record and then its index entry.

    Raises
    ------
    StorageError
        Transient, when the lock stayed taken for two of its terms: it lapses by itself, so the
        writer met a busy job (or a stalled writer), which a later try gets past; the job itself
        is not at fault and must not fail for it.
    """
    lock, token = ctx.key("job_lock", job_id), secrets.token_hex(8)
    deadline = time.monotonic() + 2 * _WRITE_LOCK_S
    while not ctx.redis.set(lock, token, nx=True, ex=_WRITE_LOCK_S):
        if time.monotonic() > deadline:
            raise StorageError(f"job {job_id} stayed locked by another writer", transient=True)
        time.sleep(0.01)
    try:
        yield
    finally:
        ctx.redis.eval(_RELEASE, 1, lock, token)


def update_job(
    ctx: ServiceContext,
    job_id: str,
    change: Callable[[JobRecord], bool],
    *,
    persist: bool | Callable[[], bool] = True,
) -> JobRecord | None:
    """Apply ``change`` to the job atomically; ``change`` returns False to leave it as it is.

    Returns the job as it is afterwards (None if it no longer exists). With
    ``persist`` (or when it is a callable that says so after ``change``), the
    changed job is written to storage *before* the index: the record is never
    behind Redis. Writers of one job take turns (a lock in Redis), so no
    writer's storage write lands between another's storage and index writes;
    the optimistic transaction stays for a lock that expired under a stalled
    writer, and a writer that then loses the race writes the winner's version
    back, so storage always ends as Redis.
    """
    key = ctx.key("job", job_id)
    wrote_storage = False
    while True:
        with _write_lock(ctx, job_id), ctx.redis.pipeline() as pipe:
            try:
                pipe.watch(key)
                raw = pipe.get(key)
                if not raw:
                    return None
                job = JobRecord.model_validate_json(raw)
                if not change(job):
                    pipe.unwatch()
                    if wrote_storage:
                        save_job(ctx, job)
                    return job
                job.updated_at = now_s()
                if persist() if callable(persist) else persist:
                    save_job(ctx, job)
                    wrote_storage = True
                pipe.multi()
                _index_commands(ctx, pipe, job)
                pipe.execute()
            except redis.WatchError:
                continue
        return job


def advance_job(
    ctx: ServiceContext,
    job_id: str,
    state: JobState,
    *,
    progress: float | None = None,
) -> JobRecord | None:
    """Move a live job forward to a working ``state`` (never back, never out of a terminal state).

    Progress alone (same state) updates only the index; a change of state is
    also written to storage. Ending a job is :func:`end_job` (failed, cancelled)
    or the finish stage's record (done).

    Raises
    ------
    ParameterError
        For a terminal ``state``.
    """
    if state in TERMINAL_STATES:
        raise ParameterError(f"advance_job moves jobs between working states, not to {state.value!r}")
    state_changed = False

    def change(job: JobRecord) -> bool:
        nonlocal state_changed
        if job.terminal or STATE_ORDER[state] < STATE_ORDER[job.state]:
            return False
        state_changed = state != job.state
        if state_changed and job.started_at is None and state != JobState.QUEUED:
            job.started_at = now_s()
        job.state = state
        if progress is not None:
            job.progress = round(max(job.progress, min(progress, 1.0)), 4)
        return state_changed or progress is not None

    return update_job(ctx, job_id, change, persist=lambda: state_changed)


def end_job(
    ctx: ServiceContext, job_id: str, state: JobState, *, code: str, message: str
) -> JobRecord | None:
    """Move a live job to ``failed`` or ``cancelled`` with a reason.

    Returns the record only when this call ended the job, so the caller
    announces each end exactly once; None when it had already ended or is gone.
    """
    ended = False

    def change(job: JobRecord) -> bool:
        nonlocal ended
        if job.terminal:
            return False
        job.state, job.error_code, job.error_message = state, code, message
        job.finished_at = now_s()
        ended = True
        return True

    job = update_job(ctx, job_id, change)
    return job if ended else None


def list_jobs(
    ctx: ServiceContext, team: str, *, state: JobState | None, limit: int, before_seq: int | None
) -> tuple[list[JobRecord], int | None]:
    """A page of the team's jobs, newest first; returns the jobs and the next cursor (or None)."""
    index = ctx.key("jobs", team, state.value) if state else ctx.key("jobs", team)
    top = f"({before_seq}" if before_seq is not None else "+inf"
    ids = cast(list[str], ctx.redis.zrevrangebyscore(index, top, "-inf", start=0, num=limit + 1))
    raws = ctx.redis.mget([ctx.key("job", i) for i in ids[:limit]]) if ids else []
    jobs = [JobRecord.model_validate_json(r) for r in raws if r]
    cursor = jobs[-1].seq if len(ids) > limit and jobs else None
    return jobs, cursor


def delete_job(ctx: ServiceContext, job: JobRecord) -> int:
    """Remove a job's files (``jobs/<id>/``) and its index entries; returns the objects deleted."""
    ctx.redis.set(ctx.key("deleted", job.id), "1", ex=24 * 3600)
    removed = ctx.storage.delete_prefix(job_prefix(job.id))
    pipe = ctx.redis.pipeline()
    pipe.delete(ctx.key("job", job.id), ctx.key("job_batches", job.id))
    pipe.zrem(ctx.key("jobs", job.team), job.id)
    for state in JobState:
        pipe.zrem(ctx.key("jobs", job.team, state.value), job.id)
    if job.rerender_of:
        pipe.srem(ctx.key("rerenders", job.rerender_of), job.id)
    pipe.eval(
        _RELEASE,
        1,
        ctx.key("dedup", job.team, job.fingerprint),
        job.id,
    )
    pipe.execute()
    return removed


def release_claim(ctx: ServiceContext, team: str, fingerprint: str, job_id: str) -> None:
    """Drop the team's claim to render ``fingerprint`` if ``job_id`` holds it (a job never recorded)."""
    ctx.redis.eval(_RELEASE, 1, ctx.key("dedup", team, fingerprint), job_id)


def rerenders_of(ctx: ServiceContext, job_id: str) -> list[JobRecord]:
    """The jobs that render the song of ``job_id`` again (its other takes), oldest first."""
    ids = sorted(cast(set[str], ctx.redis.smembers(ctx.key("rerenders", job_id))))
    raws = ctx.redis.mget([ctx.key("job", i) for i in ids]) if ids else []
    return sorted((JobRecord.model_validate_json(r) for r in raws if r), key=lambda j: j.seq)


def was_deleted(ctx: ServiceContext, job_id: str) -> bool:
    """Whether a client deleted the job (in the last day), as opposed to the index losing it."""
    return bool(ctx.redis.exists(ctx.key("deleted", job_id)))


# -- batches ------------------------------------------------------------------------------------------------
def index_batch(ctx: ServiceContext, batch: BatchRecord) -> None:
    pipe = ctx.redis.pipeline()
    pipe.set(ctx.key("batch", batch.id), batch.model_dump_json())
    pipe.zadd(ctx.key("batches", batch.team), {batch.id: batch.created_at})
    pipe.execute()


def create_batch(ctx: ServiceContext, batch: BatchRecord) -> BatchRecord:
    ctx.storage.put_json(batch_key(batch.id), batch.model_dump(mode="json"))
    index_batch(ctx, batch)
    for job_id in batch.job_ids:
        ctx.redis.sadd(ctx.key("job_batches", job_id), batch.id)
    return batch


def get_batch(ctx: ServiceContext, batch_id: str, *, team: str | None = None) -> BatchRecord | None:
    raw = ctx.redis.get(ctx.key("batch", batch_id))
    if not raw:
        return None
    batch = BatchRecord.model_validate_json(raw)
    if team is not None and batch.team != team:
        return None
    return batch


def list_batches(
    ctx: ServiceContext, team: str, *, limit: int, before: float | None
) -> tuple[list[BatchRecord], float | None]:
    """A page of the team's batches, newest first, made before ``before`` (a cursor); and the next cursor."""
    top = f"({before!r}" if before is not None else "+inf"
    ids = cast(
        list[str], ctx.redis.zrevrangebyscore(ctx.key("batches", team), top, "-inf", start=0, num=limit + 1)
    )
    raws = ctx.redis.mget([ctx.key("batch", i) for i in ids[:limit]]) if ids else []
    batches = [BatchRecord.model_validate_json(r) for r in raws if r]
    cursor = batches[-1].created_at if len(ids) > limit and batches else None
    return batches, cursor


class BatchStatus(TypedDict):
    """A batch's mean progress, its jobs per state, and whether every job has ended."""

    progress: float
    counts: dict[str, int]
    finished: bool
    state: str


def batch_status(ctx: ServiceContext, batch: BatchRecord) -> BatchStatus:
    """A batch's progress (mean of its jobs'), state counts and whether every job has ended."""
    raws = ctx.redis.mget([ctx.key("job", i) for i in batch.job_ids]) if batch.job_ids else []
    jobs = [JobRecord.model_validate_json(r) for r in raws if r]
    counts = {s.value: 0 for s in JobState}
    for job in jobs:
        counts[job.state.value] += 1
    n_missing = len(batch.job_ids) - len(jobs)
    progress = (sum(j.progress for j in jobs) + n_missing) / max(len(batch.job_ids), 1)
    finished = all(j.terminal for j in jobs)
    return {
        "progress": round(progress, 4),
        "counts": counts,
        "finished": finished,
        "state": "finished" if finished else "running",
    }
