"""The worker stages called as plain functions against the real Redis and SeaweedFS.

A redelivered stage must do no harm: running a stage twice gives the same
stored result, a finished job is not finished twice, and a cancelled job is
left alone.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from choreo.choreography.blend import BlendRunner
from choreo.choreography.library import LIBRARY_FPS, shipped_library
from choreo.contracts.generated import GeneratedMotion
from choreo.contracts.summary import DanceSummary
from choreo.errors import ParameterError
from choreo.pipeline import choreograph, generate_motion
from choreo.prepared import PreparedSong
from choreo.runners import load_engine, synth_runner
from choreo.service.jobs import create_job, end_job, get_job
from choreo.service.records import (
    PERFORMED,
    PREPARED,
    JobOptions,
    JobRecord,
    JobState,
    new_id,
    song_key,
    work_key,
)
from engines.batcher import SequenceBatcher
from tests.service.helpers import SONGS, ServiceStack
from worker import steps

pytestmark = pytest.mark.service


def _job(stack: ServiceStack, **options: object) -> JobRecord:
    song = SONGS["hungarian"]
    sha = hashlib.sha256(song.read_bytes()).hexdigest()
    stack.ctx.storage.upload_file(song, song_key(sha, "ogg"))
    opts = JobOptions(**options)
    job = JobRecord(
        id=new_id("job"),
        team="stages",
        track_sha256=sha,
        track_ext="ogg",
        track_name=song.name,
        options=opts,
        fingerprint=opts.fingerprint(sha),
    )
    return create_job(stack.ctx, job)


def _prepared(stack: ServiceStack, job_id: str) -> PreparedSong:
    return PreparedSong.from_npz(io.BytesIO(stack.ctx.storage.get_bytes(work_key(job_id, PREPARED))))


def _performed(stack: ServiceStack, job_id: str) -> GeneratedMotion:
    return GeneratedMotion.from_npz(io.BytesIO(stack.ctx.storage.get_bytes(work_key(job_id, PERFORMED))))


@pytest.fixture(scope="module")
def batcher() -> Iterator[SequenceBatcher]:
    with SequenceBatcher(load_engine(), max_batch=4) as b:
        yield b


def test_stages_as_plain_functions_are_idempotent(stack: ServiceStack, batcher: SequenceBatcher) -> None:
    ctx = stack.ctx
    job = _job(stack, fps=24, seed=3, formats=["bvh"], synth="model")

    assert steps.prepare(ctx, job.id) == "prepared"
    assert get_job(ctx, job.id).state == JobState.DECODING
    first = _prepared(stack, job.id)
    assert first.features.fps == batcher.spec.native_fps and first.plan.seed == 3
    assert steps.prepare(ctx, job.id) == "prepared"
    again = _prepared(stack, job.id)
    np.testing.assert_array_equal(again.features.features, first.features.features)
    assert again.plan == first.plan

    assert steps.perform(ctx, job.id, batcher) == "performed"
    raw = ctx.storage.get_bytes(work_key(job.id, PERFORMED))
    assert steps.perform(ctx, job.id, batcher) == "performed"
    assert ctx.storage.get_bytes(work_key(job.id, PERFORMED)) == raw, "the same seed must give the same dance"

    outcome, done = steps.finish(ctx, job.id)
    assert outcome == "finished" and done is not None
    assert done.state == JobState.DONE and done.progress == 1.0
    assert done.summary.fps == 24
    assert done.summary.frames == int(np.ceil(first.features.duration_s * 24 - 1e-9))
    assert done.summary.mean_joint_speed_m_per_s > 0
    assert sorted(ctx.storage.list_keys(f"jobs/{job.id}/work/")) == [
        work_key(job.id, PERFORMED),
        work_key(job.id, PREPARED),
    ]
    assert set(done.artifacts) == {"bvh", "json", "png"}
    summary = DanceSummary.model_validate(ctx.storage.get_json(done.artifacts["json"]))
    assert summary.brief() == done.summary and summary.plan == first.plan
    assert steps.finish(ctx, job.id) == (steps.SKIPPED, None)
    assert get_job(ctx, job.id).artifacts == done.artifacts
    stored = ctx.storage.get_json(f"jobs/{job.id}/job.json")
    assert stored["state"] == "done" and stored["artifacts"] == done.artifacts


def test_songs_performed_together_through_the_batcher_match_the_embedded_path(
    stack: ServiceStack, batcher: SequenceBatcher
) -> None:
    jobs = [
        _job(stack, seed=seed, style=style, synth="model")
        for seed, style in ((21, "salsa"), (22, "modern"), (23, "auto"))
    ]
    for job in jobs:
        assert steps.prepare(stack.ctx, job.id) == "prepared"
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        assert list(pool.map(lambda j: steps.perform(stack.ctx, j.id, batcher), jobs)) == ["performed"] * 3
    library = shipped_library()
    runner = synth_runner("model", library)
    for job in jobs:
        prepared = _prepared(stack, job.id)
        choreography = choreograph(prepared.features, job.options, library)
        alone = generate_motion(
            runner, prepared.features, job.options, song_sha256=job.track_sha256, choreography=choreography
        )
        batched = _performed(stack, job.id)
        # ONNX Runtime: the same chunks give the same engine calls, so the same bytes.
        np.testing.assert_array_equal(batched.motion.to_array(), alone.motion.to_array())
        assert batched.provenance == alone.provenance and batched.provenance.synthesizer == "model"
        assert batched.plan == alone.plan == prepared.plan
        assert batched.provenance.style != "auto" and batched.provenance.model_trained == runner.spec.trained


def test_a_blend_job_performs_on_the_cpu_like_the_embedded_path(stack: ServiceStack) -> None:
    ctx = stack.ctx
    job = _job(stack, seed=5, energy="high")
    assert steps.prepare(ctx, job.id) == "prepared"
    prepared = _prepared(stack, job.id)
    assert prepared.features.fps == LIBRARY_FPS
    assert steps.perform(ctx, job.id) == "performed"  # its own runner: the blend, no engine
    stored = _performed(stack, job.id)
    library = shipped_library()
    options = job.options
    alone = generate_motion(
        BlendRunner(library),
        prepared.features,
        options,
        song_sha256=job.track_sha256,
        choreography=choreograph(prepared.features, options, library),
    )
    np.testing.assert_array_equal(stored.motion.to_array(), alone.motion.to_array())
    assert stored.plan == alone.plan and stored.plan.energy == "high"
    assert stored.provenance.synthesizer == "blend" and stored.provenance.library_sha256 == library.sha256
    np.testing.assert_array_equal(stored.contacts.frames, alone.contacts.frames)  # contacts travel with it
    outcome, done = steps.finish(ctx, job.id)
    assert outcome == "finished" and done.summary.model_version.startswith("blend-")
    summary = DanceSummary.model_validate(ctx.storage.get_json(done.artifacts["json"]))
    assert summary.plan is not None and summary.plan.segments and summary.library_sha256 == library.sha256
    finished = stored.contacts.resampled(options.fps, summary.frames)
    assert summary.contacts is not None and summary.contacts.intervals_s == finished.intervals_s()
    assert summary.contacts.intervals_s["left_heel"]  # a dance stands on its feet


def test_a_stage_refuses_a_stored_output_that_does_not_validate(stack: ServiceStack) -> None:
    ctx = stack.ctx
    job = _job(stack, seed=6)
    ctx.storage.put_bytes(work_key(job.id, PREPARED), b"not an npz")
    with pytest.raises(ParameterError, match="not a prepared song"):
        steps.perform(ctx, job.id)


def test_a_cancelled_job_is_left_alone_by_every_stage(stack: ServiceStack, batcher: SequenceBatcher) -> None:
    job = _job(stack, seed=11)
    assert end_job(stack.ctx, job.id, JobState.CANCELLED, code="cancelled", message="test") is not None
    assert steps.prepare(stack.ctx, job.id) == steps.SKIPPED
    assert steps.perform(stack.ctx, job.id, batcher) == steps.SKIPPED
    assert steps.finish(stack.ctx, job.id) == (steps.SKIPPED, None)
    assert list(stack.ctx.storage.list_keys(f"jobs/{job.id}/work/")) == []
    assert get_job(stack.ctx, job.id).state == JobState.CANCELLED
