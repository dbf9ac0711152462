"""The three stages of a job as plain functions: prepare, generate, finish.

Each takes a job id and the process's context, reads what it needs from
storage and writes its output under deterministic keys (``jobs/<id>/work/``),
so a redelivered task redoes the same work and writes the same objects. A job
already in a terminal state (failed, cancelled, done) is left alone. Tasks in
:mod:`worker.tasks` wrap these with retries and failure handling; tests call
them directly.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np

from choreo.audio import MusicFeatures
from choreo.motion import Motion
from choreo.motion.kinematics import joint_positions
from choreo.pipeline import (
    RenderOptions,
    export_dance,
    finish_motion,
    generate_motion,
    prepare_song,
)
from choreo.service.context import ServiceContext
from choreo.service.jobs import advance_job, get_job, update_job
from choreo.service.records import JobRecord, JobState, job_prefix, now_s, song_key
from choreo.service.storage import ObjectMissing
from engines.batcher import SequenceBatcher
from exporters.provenance import Provenance

__all__ = [
    "SKIPPED",
    "artifact_name",
    "finish",
    "generate",
    "motion_energy_m_per_s",
    "prepare",
    "render_options",
]

SKIPPED = "skipped"
"""What a stage returns when the job had already ended."""

_CONTENT_TYPES = {
    "bvh": "text/plain",
    "json": "application/json",
    "png": "image/png",
    "glb": "model/gltf-binary",
    "fbx": "application/octet-stream",
}


def render_options(job: JobRecord) -> RenderOptions:
    """The pipeline's options for a job."""
    o = job.options
    return RenderOptions(
        fps=o.fps, formats=tuple(o.formats), seed=o.seed, style=o.style, rig=o.rig, in_place=o.in_place
    )


def artifact_name(track_name: str) -> str:
    """A safe file stem from the uploaded song's name: ``My Song (live).mp3`` → ``My_Song_live``."""
    stem = Path(track_name).stem
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", stem).strip("._-")
    return safe[:80] or "dance"


def motion_energy_m_per_s(motion: Motion) -> float:
    """Mean speed of the 24 joints over the dance, in metres per second: the routine's intensity."""
    positions = joint_positions(motion)
    if positions.shape[0] < 2:
        return 0.0
    speeds = np.linalg.norm(np.diff(positions, axis=0), axis=-1) * motion.fps
    return float(speeds.mean())


def _work_key(job_id: str, name: str) -> str:
    return f"{job_prefix(job_id)}work/{name}"


def _live_job(ctx: ServiceContext, job_id: str) -> JobRecord | None:
    job = get_job(ctx, job_id)
    return None if job is None or job.terminal else job


def prepare(ctx: ServiceContext, job_id: str) -> str:
    """Fetch the song, decode it and store its features (``work/features.npz``)."""
    job = _live_job(ctx, job_id)
    if job is None:
        return SKIPPED
    advance_job(ctx, job_id, JobState.DECODING, progress=0.05)
    with tempfile.TemporaryDirectory(prefix="choreo-prepare-") as tmp:
        song = Path(tmp) / f"{artifact_name(job.track_name)}.{job.track_ext}"
        ctx.storage.download_file(song_key(job.track_sha256, job.track_ext), song)
        features = prepare_song(song, render_options(job))
        out = Path(tmp) / "features.npz"
        features.to_npz(out)
        ctx.storage.upload_file(out, _work_key(job_id, "features.npz"))
    advance_job(ctx, job_id, JobState.DECODING, progress=0.3)
    return "prepared"


def _load_features(ctx: ServiceContext, job_id: str, tmp: Path) -> MusicFeatures:
    path = tmp / "features.npz"
    ctx.storage.download_file(_work_key(job_id, "features.npz"), path)
    return MusicFeatures.from_npz(path)


def generate(ctx: ServiceContext, job_id: str, batcher: SequenceBatcher) -> str:
    """Generate the raw dance (``work/raw_motion.npy``) and the provenance it was made with."""
    job = _live_job(ctx, job_id)
    if job is None:
        return SKIPPED
    advance_job(ctx, job_id, JobState.GENERATING, progress=0.35)
    options = render_options(job)
    with tempfile.TemporaryDirectory(prefix="choreo-generate-") as tmp_name:
        tmp = Path(tmp_name)
        features = _load_features(ctx, job_id, tmp)
        generated = generate_motion(batcher, features, options, song_sha256=job.track_sha256)
        raw = generated.motion
        raw_path = tmp / "raw_motion.npy"
        np.save(raw_path, raw.to_array().astype(np.float32))
        ctx.storage.upload_file(raw_path, _work_key(job_id, "raw_motion.npy"))
        ctx.storage.put_json(
            _work_key(job_id, "provenance.json"),
            {
                "provenance": generated.provenance.to_dict(),
                "raw_fps": raw.fps,
                "model_trained": batcher.engine.spec.trained,
            },
        )
    advance_job(ctx, job_id, JobState.GENERATING, progress=0.7)
    return "generated"


def finish(ctx: ServiceContext, job_id: str) -> tuple[str, JobRecord | None]:
    """Post-process, export every format, upload the files and mark the job done.

    Returns the outcome and, when this call is the one that finished the job,
    the finished record (so the caller announces it exactly once).
    """
    job = _live_job(ctx, job_id)
    if job is None:
        return SKIPPED, None
    advance_job(ctx, job_id, JobState.EXPORTING, progress=0.75)
    options = render_options(job)
    name = artifact_name(job.track_name)
    with tempfile.TemporaryDirectory(prefix="choreo-finish-") as tmp_name:
        tmp = Path(tmp_name)
        features = _load_features(ctx, job_id, tmp)
        made = ctx.storage.get_json(_work_key(job_id, "provenance.json"))
        if made is None:
            raise ObjectMissing(f"job {job_id} has no provenance.json: generation did not finish")
        provenance = Provenance.from_dict(made["provenance"])
        raw_path = tmp / "raw_motion.npy"
        ctx.storage.download_file(_work_key(job_id, "raw_motion.npy"), raw_path)
        raw = Motion.from_array(np.load(raw_path).astype(np.float64), fps=made["raw_fps"])
        motion = finish_motion(raw, features, options)
        files = export_dance(
            motion,
            features,
            options,
            tmp / "out",
            name,
            provenance,
            song_name=job.track_name,
            model_trained=made["model_trained"],
        )
        advance_job(ctx, job_id, JobState.EXPORTING, progress=0.9)
        artifacts: dict[str, str] = {}
        for kind, path in sorted(files.items()):
            key = f"{job_prefix(job_id)}{path.name}"
            ctx.storage.upload_file(
                path, key, content_type=_CONTENT_TYPES.get(kind, "application/octet-stream")
            )
            artifacts[kind] = key
    summary = {
        "tempo_bpm": round(float(features.tempo_bpm), 3),
        "duration_s": round(float(features.duration_s), 3),
        "style": provenance.style,
        "energy_m_per_s": round(motion_energy_m_per_s(motion), 4),
        "frames": motion.n_frames,
        "fps": motion.fps,
        "model_version": provenance.model_version,
    }
    finished = False

    def mark_done(record: JobRecord) -> bool:
        nonlocal finished
        if record.terminal:
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
