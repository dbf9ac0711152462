"""The three stages of a job as plain functions: prepare, perform, finish.

Each takes a job id and the process's context, reads what it needs from
storage and writes its output under deterministic keys (``jobs/<id>/work/``),
each read by the next stage alone and validated as it is read:

- :func:`prepare` (CPU worker): the song's analysis and its plan, one
  :class:`choreo.prepared.PreparedSong` (``prepared.npz``);
- :func:`perform` (the job's synthesizer: the blend on a CPU worker, the network
  on a GPU worker): the raw dance with its provenance, song timing and plan, one
  :class:`choreo.contracts.generated.GeneratedMotion` (``performed.npz``);
- :func:`finish` (CPU worker): the finished dance's files and the job marked done.

A redelivered task redoes the same work and writes the same objects. A job
already in a terminal state (failed, cancelled, done) is left alone. Tasks in
:mod:`worker.tasks` wrap these with retries and failure handling; tests call
them directly.
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from choreo.contracts.generated import GeneratedMotion
from choreo.pipeline import (
    choreograph,
    export_dance,
    finish_motion,
    follow_intensity,
    generate_motion,
    plan_song,
    prepare_song,
)
from choreo.prepared import PreparedSong
from choreo.runners import native_fps, synth_runner
from choreo.service.context import ServiceContext
from choreo.service.jobs import advance_job, get_job, update_job
from choreo.service.records import (
    PERFORMED,
    PREPARED,
    JobRecord,
    JobState,
    job_prefix,
    now_s,
    song_key,
    work_key,
)
from engines.runner import SongRunner
from worker.isolated import run_isolated
from worker.library_build import job_library

__all__ = [
    "SKIPPED",
    "artifact_name",
    "finish",
    "perform",
    "prepare",
]

SKIPPED = "skipped"
"""What a stage returns when the job had already ended."""

_CONTENT_TYPES = {
    "bvh": "text/plain",
    "json": "application/json",
    "png": "image/png",
    "glb": "model/gltf-binary",
    "fbx": "application/octet-stream",
    "mp4": "video/mp4",
}


def artifact_name(track_name: str) -> str:
    """A safe file stem from the uploaded song's name: ``My Song (live).mp3`` → ``My_Song_live``."""
    stem = Path(track_name).stem
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", stem).strip("._-")
    return safe[:80] or "dance"


def _live_job(ctx: ServiceContext, job_id: str) -> JobRecord | None:
    job = get_job(ctx, job_id)
    return None if job is None or job.terminal else job


def prepare(ctx: ServiceContext, job_id: str) -> str:
    """Fetch the song, decode and analyse it at its synthesizer's rate, plan the dance, store both.

    Every job is planned here, on a CPU worker, on the library it names (the team's own,
    :func:`worker.library_build.job_library`) or the shipped one; the song's features and
    the plan are stored together (``work/prepared.npz``, :class:`choreo.prepared.PreparedSong`)
    for :func:`perform`. The decode and analysis run in a child that is killed once the stage
    has run ``CHOREO_STAGE_TIMEOUT_S`` (:mod:`worker.isolated`): a song that hangs its decoder
    fails with ``timeout`` and frees the worker's slot, in a threads pool too.
    """
    deadline = time.monotonic() + ctx.settings.stage_timeout_s
    job = _live_job(ctx, job_id)
    if job is None:
        return SKIPPED
    advance_job(ctx, job_id, JobState.DECODING, progress=0.05)
    with tempfile.TemporaryDirectory(prefix="choreo-prepare-") as tmp_name:
        tmp = Path(tmp_name)
        song = tmp / f"{artifact_name(job.track_name)}.{job.track_ext}"
        ctx.storage.download_file(song_key(job.track_sha256, job.track_ext), song)
        features = run_isolated(
            partial(prepare_song, song, fps=native_fps(job.options.synth)),
            timeout_s=deadline - time.monotonic(),
            what="decoding the song",
        )
        library = job_library(ctx, job.options.library)
        prepared = PreparedSong(features, plan_song(features, job.options, library))
        out = tmp / PREPARED
        prepared.to_npz(out)
        ctx.storage.upload_file(out, work_key(job_id, PREPARED))
    return "prepared"


def perform(ctx: ServiceContext, job_id: str, runner: SongRunner | None = None) -> str:
    """Perform the stored plan: the raw dance, its provenance and the song's timing (``work/performed.npz``).

    The performer is the job's synthesizer (:func:`choreo.runners.synth_runner`): the
    blend on a CPU worker, the network through this GPU worker's sequence batcher;
    ``runner`` replaces it (a test's own batcher).
    """
    job = _live_job(ctx, job_id)
    if job is None:
        return SKIPPED
    advance_job(ctx, job_id, JobState.GENERATING, progress=0.35)
    library = job_library(ctx, job.options.library)
    runner = runner or synth_runner(job.options.synth, library, batched=True)
    with tempfile.TemporaryDirectory(prefix="choreo-perform-") as tmp_name:
        tmp = Path(tmp_name)
        ctx.storage.download_file(work_key(job_id, PREPARED), tmp / PREPARED)
        prepared = PreparedSong.from_npz(tmp / PREPARED)
        choreography = choreograph(prepared.features, job.options, library, plan=prepared.plan)
        generated = generate_motion(
            runner, prepared.features, job.options, song_sha256=job.track_sha256, choreography=choreography
        )
        if prepared.plan.routine is not None:  # as choreo render dances a workout it planned
            _, generated = follow_intensity(
                runner,
                prepared.features,
                job.options,
                library,
                song_sha256=job.track_sha256,
                generated=generated,
            )
        generated.to_npz(tmp / PERFORMED)
        ctx.storage.upload_file(tmp / PERFORMED, work_key(job_id, PERFORMED))
    return "performed"


def finish(
    ctx: ServiceContext, job_id: str, *, holds: Callable[[], bool] | None = None
) -> tuple[str, JobRecord | None]:
    """Post-process, export every format, upload the files and mark the job done (``work/performed.npz`` in).

    Returns the outcome and, when this call is the one that finished the job,
    the finished record (so the caller announces it exactly once). ``holds``
    says whether this call still holds the stage's lease: one that lost it (it
    froze or overran, and the stage was given out again) uploads nothing and
    does not mark the job, the new holder does.
    """
    job = _live_job(ctx, job_id)
    if job is None:
        return SKIPPED, None
    advance_job(ctx, job_id, JobState.EXPORTING, progress=0.75)
    options = job.options
    name = artifact_name(job.track_name)
    with tempfile.TemporaryDirectory(prefix="choreo-finish-") as tmp_name:
        tmp = Path(tmp_name)
        ctx.storage.download_file(work_key(job_id, PERFORMED), tmp / PERFORMED)
        generated = GeneratedMotion.from_npz(tmp / PERFORMED)
        motion = finish_motion(generated, options)
        song_path = None
        if "mp4" in options.formats:  # the video carries the song
            song_path = tmp / f"{name}.{job.track_ext}"
            ctx.storage.download_file(song_key(job.track_sha256, job.track_ext), song_path)
        exported = export_dance(
            motion, generated, options, tmp / "out", name, song_name=job.track_name, song_path=song_path
        )
        files = exported.files | {"json": exported.summary.write(tmp / "out" / f"{name}.json")}
        advance_job(ctx, job_id, JobState.EXPORTING, progress=0.9)
        if holds is not None and not holds():
            return SKIPPED, None
        artifacts: dict[str, str] = {}
        for kind, path in sorted(files.items()):
            key = f"{job_prefix(job_id)}{path.name}"
            ctx.storage.upload_file(
                path, key, content_type=_CONTENT_TYPES.get(kind, "application/octet-stream")
            )
            artifacts[kind] = key
    brief = exported.summary.brief()
    finished = False

    def mark_done(record: JobRecord) -> bool:
        nonlocal finished
        if record.terminal or (holds is not None and not holds()):
            return False
        record.state = JobState.DONE
        record.progress = 1.0
        record.finished_at = now_s()
        record.artifacts = artifacts
        record.summary = brief
        finished = True
        return True

    done = update_job(ctx, job_id, mark_done)
    return ("finished", done) if finished else (SKIPPED, None)
