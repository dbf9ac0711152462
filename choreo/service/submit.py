"""Submitting songs to render: one job per track, one batch (an album), deduplicated per team;
and rendering one of the album's songs again with other options (another take of it).

Deduplication is a claim, not a check: the fingerprint key of a team's track
and options is taken with one Redis script that also looks at the job holding
it, so any number of identical requests at once create one job. A claim whose
job was failed or cancelled is free again, and so is one whose live job has
not changed for ``dedup_stale_after_s`` (it is stuck: it must not trap the
request for ever); one whose job never appeared (its creator died between
the claim and the record) is taken over after :data:`CLAIM_WAIT_S`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from celery import Celery

from choreo.contracts.choices import AUTO
from choreo.errors import ConflictError, NotFoundError, ParameterError
from choreo.service.callbacks import CallbackError, CallbackRefused, check_target
from choreo.service.context import ServiceContext
from choreo.service.jobs import create_batch, create_job, get_job, release_claim
from choreo.service.libraries import ready_library
from choreo.service.queue import enqueue_unsent
from choreo.service.records import BatchRecord, JobOptions, JobRecord, TrackRecord, new_id
from choreo.service.teams import callback_secret
from choreo.service.tracks import SHA256_PATTERN, get_track

__all__ = ["CLAIM_WAIT_S", "Submitted", "claim_render", "rerender_job", "submit_jobs"]

CLAIM_WAIT_S = 5.0
"""How long a claim without a job record is waited for before it is taken over."""

_CLAIM = """
local current = redis.call('get', KEYS[1])
if current and current ~= ARGV[1] then
  local raw = redis.call('get', ARGV[2] .. current)
  if not raw then return current end
  local job = cjson.decode(raw)
  local ended = job['state'] == 'failed' or job['state'] == 'cancelled'
  local done = job['state'] == 'done'
  local stale = (tonumber(job['updated_at']) or tonumber(job['created_at']) or 0) < tonumber(ARGV[3])
  if done or not (ended or stale) then return current end
end
redis.call('set', KEYS[1], ARGV[1])
return ARGV[1]
"""

_TAKE_OVER = """
if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('set', KEYS[1], ARGV[2]) return 1 end
return 0
"""


@dataclass
class Submitted:
    """A submission's batch and its jobs, each with whether it was an earlier job (deduplicated)."""

    batch: BatchRecord
    jobs: list[tuple[JobRecord, bool]]


def claim_render(ctx: ServiceContext, team: str, fingerprint: str, job_id: str) -> JobRecord | None:
    """Claim ``fingerprint`` for ``job_id``: None when it is ours, else the job already rendering it."""
    dedup = ctx.key("dedup", team, fingerprint)
    deadline = time.monotonic() + CLAIM_WAIT_S
    while True:
        stale_before = time.time() - ctx.settings.dedup_stale_after_s
        owner = ctx.redis.eval(_CLAIM, 1, dedup, job_id, ctx.key("job", ""), stale_before)
        if owner == job_id:
            return None
        job = get_job(ctx, owner, team=team)
        if job is not None:
            return job
        if time.monotonic() > deadline:
            # Its creator claimed and never wrote the record: it died in between.
            if ctx.redis.eval(_TAKE_OVER, 1, dedup, owner, job_id):
                return None
            deadline = time.monotonic() + CLAIM_WAIT_S
        time.sleep(0.05)


def _tracks(ctx: ServiceContext, team: str, shas: list[str]) -> list[TrackRecord]:
    if len(shas) > ctx.settings.max_tracks_per_submit:
        raise ParameterError(
            f"{len(shas)} tracks; at most {ctx.settings.max_tracks_per_submit} a request",
            code="too_many_tracks",
        )
    tracks = []
    for sha in dict.fromkeys(shas):
        if not SHA256_PATTERN.match(sha):
            raise ParameterError(f"tracks: {sha!r} is not a lowercase hex SHA-256", code="invalid_request")
        track = get_track(ctx, team, sha)
        if track is None:
            raise NotFoundError(f"no track {sha!r} for this key's team")
        tracks.append(track)
    return tracks


def _claim_or_create(
    ctx: ServiceContext,
    *,
    track: TrackRecord,
    options: JobOptions,
    library_sha256: str | None,
    priority: int,
    callback_url: str | None,
    force: bool,
    batch_id: str | None,
    rerender_of: str | None = None,
) -> tuple[JobRecord, bool]:
    """The job that renders ``track`` with ``options``: an earlier one (True) or a new record (False).

    A new job is recorded, not sent: the caller sends it once its batch is written
    (:func:`choreo.service.queue.enqueue_unsent`, which also sends an earlier job that a refused
    submission recorded and never sent).
    """
    job_id = new_id("job")
    fingerprint = options.fingerprint(track.sha256, library_sha256=library_sha256)
    existing = None if force else claim_render(ctx, track.team, fingerprint, job_id)
    if existing is not None:
        return existing, True
    job = JobRecord(
        id=job_id,
        team=track.team,
        batch_id=batch_id,
        track_sha256=track.sha256,
        track_ext=track.ext,
        track_name=track.filename,
        options=options,
        priority=priority,
        callback_url=callback_url,
        fingerprint=fingerprint,
        rerender_of=rerender_of,
    )
    try:
        return create_job(ctx, job), False
    except Exception:
        if not force:  # the claim goes with the job that was not recorded (storage away: a 503)
            release_claim(ctx, track.team, fingerprint, job_id)
        raise


def _check_callback(ctx: ServiceContext, team: str, url: str) -> None:
    if callback_secret(ctx, team) is None:
        raise ConflictError(
            f"team {team} has no callback secret yet; an admin makes one with POST /v1/team/callback-secret",
            code="no_callback_secret",
        )
    try:
        check_target(url, allow_loopback=ctx.settings.callback_allow_loopback)
    except CallbackError as exc:
        raise CallbackRefused(str(exc)) from None


def _library_sha256(ctx: ServiceContext, team: str, options: JobOptions) -> str | None:
    """The hash of the team library the options name (None for the shipped one), its style checked."""
    if options.library is None:
        return None
    library = ready_library(ctx, team, options.library)
    if options.style != AUTO and options.style not in library.styles:
        raise ParameterError(
            f"library {library.id} has no style {options.style!r}; choose {AUTO} or one of "
            f"{', '.join(library.styles)}",
            code="unknown_style",
        )
    return library.sha256


def submit_jobs(
    ctx: ServiceContext,
    celery: Celery,
    *,
    team: str,
    tracks: list[str],
    options: JobOptions,
    priority: int,
    callback_url: str | None,
    force: bool,
    name: str = "",
) -> Submitted:
    """Record and enqueue a job for each of the team's ``tracks`` (SHA-256s), as one batch.

    ``name`` is the album's (the upload's folder, or what the team typed).

    A track the team already has rendering or rendered with the same options
    is not rendered again (its job comes back marked deduplicated) unless
    ``force`` is set. Such a job that was recorded and never sent (a submission
    refused with a 503 after recording the album's first jobs: storage or Redis
    went away) is sent now, so the submission made again renders every song.

    Raises
    ------
    ParameterError
        Too many tracks, a malformed SHA-256, a callback host that is not public.
    NotFoundError
        A track or a library the team does not have.
    ConflictError
        A callback URL while the team has no callback secret; a library that is not built.
    """
    library_sha256 = _library_sha256(ctx, team, options)
    records = _tracks(ctx, team, tracks)
    if callback_url:
        _check_callback(ctx, team, callback_url)
    batch_id = new_id("bat")
    jobs = [
        _claim_or_create(
            ctx,
            track=track,
            options=options,
            library_sha256=library_sha256,
            priority=priority,
            callback_url=callback_url,
            force=force,
            batch_id=batch_id,
        )
        for track in records
    ]
    batch = BatchRecord(
        id=batch_id, team=team, name=name.strip(), job_ids=[j.id for j, _ in jobs], callback_url=callback_url
    )
    batch = create_batch(ctx, batch)
    for job, _ in jobs:
        enqueue_unsent(ctx, celery, job)
    return Submitted(batch=batch, jobs=jobs)


def rerender_job(
    ctx: ServiceContext, celery: Celery, *, source: JobRecord, options: JobOptions, priority: int
) -> tuple[JobRecord, bool]:
    """Render the song of ``source`` again with ``options``: another take of that album song.

    The new job belongs to no batch; it records the song's first take (``rerender_of``), so it is
    listed, downloaded and published with that song's album. The same options as an existing
    take give that take back (True), as a submission does.

    Raises
    ------
    NotFoundError
        When the team no longer has the song.
    """
    track = get_track(ctx, source.team, source.track_sha256)
    if track is None:
        raise NotFoundError(f"the song of job {source.id} ({source.track_name}) is no longer stored")
    job, deduplicated = _claim_or_create(
        ctx,
        track=track,
        options=options,
        library_sha256=_library_sha256(ctx, source.team, options),
        priority=priority,
        callback_url=None,
        force=False,
        batch_id=None,
        rerender_of=source.rerender_of or source.id,
    )
    enqueue_unsent(ctx, celery, job)
    return job, deduplicated
