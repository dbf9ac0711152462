"""The three stages of a job as plain functions: prepare, generate, finish.

Each takes a job id and the process's context, reads what it needs from
storage and writes its output under deterministic keys (``jobs/<id>/work/``):
prepare the song's features (``features.npz``, :class:`choreo.audio.MusicFeatures`),
generate the raw dance with its provenance and song timing (``generated.npz``,
:class:`choreo.contracts.generated.GeneratedMotion`), each read by the next stage alone,
so a redelivered task redoes the same work and writes the same objects. A job
already in a terminal state (failed, cancelled, done) is left alone. Tasks in
:mod:`worker.tasks` wrap these with retries and failure handling; tests call
them directly.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from pathlib import Path

from choreo.audio import MusicFeatures
from choreo.choreography.blend import BlendRunner
from choreo.choreography.library import LIBRARY_FPS, shipped_library
from choreo.contracts.generated import GeneratedMotion
from choreo.contracts.plan import Plan
from choreo.metrics.speed import mean_joint_speed
from choreo.motion.kinematics import joint_positions
from choreo.pipeline import (
    choreograph,
    export_dance,
    finish_motion,
    generate_motion,
    prepare_song,
)
from choreo.service.context import ServiceContext
from choreo.service.jobs import advance_job, get_job, update_job
from choreo.service.records import JobRecord, JobState, JobSummary, job_prefix, now_s, song_key
from engines.batcher import SequenceBatcher

__all__ = [
    "SKIPPED",
    "artifact_name",
    "finish",
    "generate",
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


def _work_key(job_id: str, name: str) -> str:
    return f"{job_prefix(job_id)}work/{name}"


def _live_job(ctx: ServiceContext, job_id: str) -> JobRecord | None:
    job = get_job(ctx, job_id)
    return None if job is None or job.terminal else job


def prepare(ctx: ServiceContext, job_id: str) -> str:
    """Fetch the song, decode it, plan the dance and store the features and plan.

    Every job is planned here, on the CPU, on the shipped library (``work/plan.json``
    beside ``work/features.npz``). With the blend synthesizer the plan's guide is the
    raw dance, stored as ``work/generated.npz``, and the job goes on to ``finish``
    without a GPU stage; the model's GPU stage performs the stored plan.
    """
    job = _live_job(ctx, job_id)
    if job is None:
        return SKIPPED
    advance_job(ctx, job_id, JobState.DECODING, progress=0.05)
    options = job.options
    with tempfile.TemporaryDirectory(prefix="choreo-prepare-") as tmp:
        song = Path(tmp) / f"{artifact_name(job.track_name)}.{job.track_ext}"
        ctx.storage.download_file(song_key(job.track_sha256, job.track_ext), song)
        features = prepare_song(song, fps=LIBRARY_FPS if options.synth == "blend" else None)
        out = Path(tmp) / "features.npz"
        features.to_npz(out)
        ctx.storage.upload_file(out, _work_key(job_id, "features.npz"))
        library = shipped_library()
        choreography = choreograph(features, options, library)
        ctx.storage.put_json(_work_key(job_id, "plan.json"), choreography.plan.to_dict())
        if options.synth == "blend":
            generated = generate_motion(
                BlendRunner(library),
                features,
                options,
                song_sha256=job.track_sha256,
                choreography=choreography,
            )
            planned = Path(tmp) / "generated.npz"
            generated.to_npz(planned)
            ctx.storage.upload_file(planned, _work_key(job_id, "generated.npz"))
    advance_job(ctx, job_id, JobState.DECODING, progress=0.3)
    return "prepared"


def generate(ctx: ServiceContext, job_id: str, batcher: SequenceBatcher) -> str:
    """Perform the stored plan with the network: the raw dance, its provenance and the song's timing
    (``work/generated.npz``).

    A blend job's dance was made in :func:`prepare`; its chain has no generate
    stage, and a stray call leaves it alone.
    """
    job = _live_job(ctx, job_id)
    if job is None or job.options.synth == "blend":
        return SKIPPED
    advance_job(ctx, job_id, JobState.GENERATING, progress=0.35)
    with tempfile.TemporaryDirectory(prefix="choreo-generate-") as tmp_name:
        tmp = Path(tmp_name)
        features_path = tmp / "features.npz"
        ctx.storage.download_file(_work_key(job_id, "features.npz"), features_path)
        features = MusicFeatures.from_npz(features_path)
        plan = Plan.from_dict(ctx.storage.get_json(_work_key(job_id, "plan.json")) or {})
        choreography = choreograph(features, job.options, shipped_library(), plan=plan)
        generated = generate_motion(
            batcher, features, job.options, song_sha256=job.track_sha256, choreography=choreography
        )
        out = tmp / "generated.npz"
        generated.to_npz(out)
        ctx.storage.upload_file(out, _work_key(job_id, "generated.npz"))
    advance_job(ctx, job_id, JobState.GENERATING, progress=0.7)
    return "generated"


def finish(
    ctx: ServiceContext, job_id: str, *, holds: Callable[[], bool] | None = None
) -> tuple[str, JobRecord | None]:
    """Post-process, export every format, upload the files and mark the job done.

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
        generated_path = tmp / "generated.npz"
        ctx.storage.download_file(_work_key(job_id, "generated.npz"), generated_path)
        generated = GeneratedMotion.from_npz(generated_path)
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
    provenance, song = generated.provenance, generated.song
    summary = JobSummary(
        tempo_bpm=round(song.tempo_bpm, 3),
        duration_s=round(song.duration_s, 3),
        style=provenance.style,
        mean_joint_speed_m_per_s=round(mean_joint_speed(joint_positions(motion), fps=motion.fps), 4),
        frames=motion.n_frames,
        fps=motion.fps,
        model_version=provenance.model_version,
        model_trained=provenance.model_trained,
    )
    finished = False

    def mark_done(record: JobRecord) -> bool:
        nonlocal finished
        if record.terminal or (holds is not None and not holds()):
            return False
        record.state = JobState.DONE
        record.progress = 1.0
        record.finished_at = now_s()
        record.artifacts = artifacts
        record.summary = summary
        finished = True
        return True

    done = update_job(ctx, job_id, mark_done)
    return ("finished", done) if finished else (SKIPPED, None)
