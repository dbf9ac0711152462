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

from choreo.audio import MusicFeatures
from choreo.choreography.blend import BlendRunner
from choreo.choreography.library import shipped_library
from choreo.contracts.generated import GeneratedMotion
from choreo.pipeline import choreograph, generate_motion
from choreo.runners import load_engine, synth_runner
from choreo.service.jobs import create_job, end_job, get_job
from choreo.service.records import JobOptions, JobRecord, JobState, new_id, song_key
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


def _features(stack: ServiceStack, job_id: str) -> MusicFeatures:
    return MusicFeatures.from_npz(io.BytesIO(stack.ctx.storage.get_bytes(f"jobs/{job_id}/work/features.npz")))


@pytest.fixture(scope="module")
def batcher() -> Iterator[SequenceBatcher]:
    with SequenceBatcher(load_engine(), max_batch=4) as b:
        yield b


def test_stages_as_plain_functions_are_idempotent(stack: ServiceStack, batcher: SequenceBatcher) -> None:
    ctx = stack.ctx
    job = _job(stack, fps=24, seed=3, formats=["bvh"], synth="model")

    assert steps.prepare(ctx, job.id) == "prepared"
    assert get_job(ctx, job.id).state == JobState.DECODING
    first = _features(stack, job.id)
    assert steps.prepare(ctx, job.id) == "prepared"
    np.testing.assert_array_equal(_features(stack, job.id).features, first.features)

    assert steps.generate(ctx, job.id, batcher) == "generated"
    raw_key = f"jobs/{job.id}/work/generated.npz"
    raw = stack.ctx.storage.get_bytes(raw_key)
    assert steps.generate(ctx, job.id, batcher) == "generated"
    assert stack.ctx.storage.get_bytes(raw_key) == raw, "the same seed must give the same dance"

    outcome, done = steps.finish(ctx, job.id)
    assert outcome == "finished" and done is not None
    assert done.state == JobState.DONE and done.progress == 1.0
    assert done.summary.fps == 24
    assert done.summary.frames == int(np.ceil(first.duration_s * 24 - 1e-9))
    assert done.summary.mean_joint_speed_m_per_s > 0
    assert sorted(ctx.storage.list_keys(f"jobs/{job.id}/work/")) == [
        f"jobs/{job.id}/work/features.npz",
        f"jobs/{job.id}/work/generated.npz",
        f"jobs/{job.id}/work/plan.json",
    ]
    assert set(done.artifacts) == {"bvh", "json", "png"}
    assert steps.finish(ctx, job.id) == (steps.SKIPPED, None)
    assert get_job(ctx, job.id).artifacts == done.artifacts
    stored = ctx.storage.get_json(f"jobs/{job.id}/job.json")
    assert stored["state"] == "done" and stored["artifacts"] == done.artifacts


def test_songs_generated_together_through_the_batcher_match_the_embedded_path(
    stack: ServiceStack, batcher: SequenceBatcher
) -> None:
    jobs = [
        _job(stack, seed=seed, style=style, synth="model")
        for seed, style in ((21, "salsa"), (22, "modern"), (23, "auto"))
    ]
    for job in jobs:
        assert steps.prepare(stack.ctx, job.id) == "prepared"
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        assert list(pool.map(lambda j: steps.generate(stack.ctx, j.id, batcher), jobs)) == ["generated"] * 3
    library = shipped_library()
    runner = synth_runner("model", library)
    for job in jobs:
        features = _features(stack, job.id)
        choreography = choreograph(features, job.options, library)
        alone = generate_motion(
            runner, features, job.options, song_sha256=job.track_sha256, choreography=choreography
        )
        stored = stack.ctx.storage.get_bytes(f"jobs/{job.id}/work/generated.npz")
        batched = GeneratedMotion.from_npz(io.BytesIO(stored))
        # ONNX Runtime: the same chunks give the same engine calls, so the same bytes.
        np.testing.assert_array_equal(batched.motion.to_array(), alone.motion.to_array())
        assert batched.provenance == alone.provenance and batched.provenance.synthesizer == "model"
        assert batched.plan == alone.plan == stack.ctx.storage.get_json(f"jobs/{job.id}/work/plan.json")
        assert batched.provenance.style != "auto" and batched.provenance.model_trained == runner.spec.trained


def test_a_blend_job_is_planned_in_prepare_like_the_embedded_path(
    stack: ServiceStack, batcher: SequenceBatcher
) -> None:
    ctx = stack.ctx
    job = _job(stack, seed=5, energy="high")
    assert steps.prepare(ctx, job.id) == "prepared"
    stored = GeneratedMotion.from_npz(io.BytesIO(ctx.storage.get_bytes(f"jobs/{job.id}/work/generated.npz")))
    assert steps.generate(ctx, job.id, batcher) == steps.SKIPPED
    library = shipped_library()
    features = _features(stack, job.id)
    options = job.options
    alone = generate_motion(
        BlendRunner(library),
        features,
        options,
        song_sha256=job.track_sha256,
        choreography=choreograph(features, options, library),
    )
    np.testing.assert_array_equal(stored.motion.to_array(), alone.motion.to_array())
    assert stored.plan == alone.plan and stored.plan["energy"] == "high"
    assert stored.provenance.synthesizer == "blend" and stored.provenance.library_sha256 == library.sha256
    outcome, done = steps.finish(ctx, job.id)
    assert outcome == "finished" and done.summary.model_version.startswith("blend-")
    summary = ctx.storage.get_json(done.artifacts["json"])
    assert summary["plan"]["segments"] and summary["library_sha256"] == library.sha256


def test_a_cancelled_job_is_left_alone_by_every_stage(stack: ServiceStack, batcher: SequenceBatcher) -> None:
    job = _job(stack, seed=11)
    assert end_job(stack.ctx, job.id, JobState.CANCELLED, code="cancelled", message="test") is not None
    assert steps.prepare(stack.ctx, job.id) == steps.SKIPPED
    assert steps.generate(stack.ctx, job.id, batcher) == steps.SKIPPED
    assert steps.finish(stack.ctx, job.id) == (steps.SKIPPED, None)
    assert list(stack.ctx.storage.list_keys(f"jobs/{job.id}/work/")) == []
    assert get_job(stack.ctx, job.id).state == JobState.CANCELLED
