"""The sequence batcher against the ONNX Runtime engine on the tiny model."""

from __future__ import annotations

import threading
from concurrent.futures import CancelledError

import numpy as np
import pytest
from engine_testkit import make_inputs

from choreo.errors import EngineError, ParameterError
from engines.batcher import SequenceBatcher
from engines.onnxruntime_engine import OnnxRuntimeEngine
from engines.runner import SingleSongRunner


@pytest.fixture(scope="module")
def ort_engine(tiny_model):
    return OnnxRuntimeEngine(tiny_model, threads=1)


def _song(engine, n_frames, rng):
    inputs = make_inputs(engine.spec, 1, n_frames, rng)
    return {name: value[0] for name, value in inputs.items()}


def test_batched_songs_equal_running_alone(ort_engine, rng):
    lengths = [37, 32, 33, 150, 16, 95, 64]
    songs = [_song(ort_engine, n, rng) for n in lengths]
    with SequenceBatcher(ort_engine, max_batch=4, chunk_frames=32) as batcher:
        futures = [batcher.submit(song) for song in songs]
        results = [f.result(timeout=60) for f in futures]
    for song, poses in zip(songs, results, strict=True):
        assert poses.shape == (song["music"].shape[0], 75)
        np.testing.assert_array_equal(poses, SingleSongRunner(ort_engine, 32).run_song(song))
    assert batcher.stats.songs_done == len(songs)
    assert max(lengths) // 32 < batcher.stats.calls < sum(-(-n // 32) for n in lengths)


def test_many_threads_generate_at_once(ort_engine, rng):
    songs = [_song(ort_engine, int(n), rng) for n in rng.integers(20, 200, size=12)]
    results: dict[int, np.ndarray] = {}
    with SequenceBatcher(ort_engine, max_batch=8, chunk_frames=64) as batcher:

        def worker(i: int) -> None:
            results[i] = batcher.run_song(songs[i], timeout_s=60)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(songs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for i, song in enumerate(songs):
        np.testing.assert_allclose(results[i], SingleSongRunner(ort_engine, 64).run_song(song), atol=1e-5)


def test_a_new_song_joins_as_soon_as_a_slot_frees(ort_engine, rng):
    long_song = _song(ort_engine, 40 * 16, rng)
    shorts = [_song(ort_engine, 32, rng) for _ in range(3)]
    with SequenceBatcher(ort_engine, max_batch=2, chunk_frames=16) as batcher:
        long_future = batcher.submit(long_song)
        short_futures = [batcher.submit(s) for s in shorts]
        for f in short_futures:
            f.result(timeout=60)
        assert not long_future.done(), "short songs should finish beside the long one"
        long_future.result(timeout=60)
    # The three short songs (2 chunks each) ride along in the second slot: no extra calls.
    assert batcher.stats.calls == 40
    assert batcher.stats.rows == 40 + 6


def test_cancelled_song_leaves_and_its_slot_is_reused_cleanly(ort_engine, rng):
    long_song = _song(ort_engine, 20000, rng)
    follower = _song(ort_engine, 100, rng)
    with SequenceBatcher(ort_engine, max_batch=1, chunk_frames=16) as batcher:
        future = batcher.submit(long_song)
        while batcher.stats.calls < 3:
            threading.Event().wait(0.005)
        assert future.cancel()
        poses = batcher.run_song(follower, timeout_s=60)
        with pytest.raises(CancelledError):
            future.result()
    assert batcher.stats.songs_cancelled == 1
    assert batcher.in_flight() == 0
    # The follower took the cancelled song's slot; its state started from zeros.
    np.testing.assert_allclose(poses, SingleSongRunner(ort_engine, 16).run_song(follower), atol=1e-5)


def test_bad_song_is_refused_at_submission(ort_engine, rng):
    song = _song(ort_engine, 50, rng)
    song["style"] = song["style"][:, :2]
    with SequenceBatcher(ort_engine, max_batch=2, chunk_frames=16) as batcher:
        with pytest.raises(EngineError, match="style"):
            batcher.run_song(song)
        good = _song(ort_engine, 50, rng)
        np.testing.assert_allclose(
            batcher.run_song(good, timeout_s=30), SingleSongRunner(ort_engine, 16).run_song(good), atol=1e-5
        )


class _FiniteOnlyEngine(OnnxRuntimeEngine):
    """An engine that refuses non-finite music, as a GPU backend with input checks would."""

    def run(self, inputs, state):
        if not np.isfinite(inputs["music"]).all():
            raise EngineError("non-finite music features")
        return super().run(inputs, state)


def test_one_songs_failure_spares_its_batch_mates(tiny_model, rng):
    engine = _FiniteOnlyEngine(tiny_model, threads=1)
    songs = [_song(engine, 80, rng) for _ in range(4)]
    songs[2]["music"][40, 3] = np.nan
    with SequenceBatcher(engine, max_batch=4, chunk_frames=16) as batcher:
        futures = [batcher.submit(s) for s in songs]
        with pytest.raises(EngineError, match="non-finite"):
            futures[2].result(timeout=30)
        for i in (0, 1, 3):
            np.testing.assert_allclose(
                futures[i].result(timeout=30), SingleSongRunner(engine, 16).run_song(songs[i]), atol=1e-5
            )
    assert batcher.stats.songs_failed == 1
    assert batcher.stats.songs_done == 3


def test_closed_batcher_refuses_work(ort_engine, rng):
    batcher = SequenceBatcher(ort_engine, max_batch=2, chunk_frames=16)
    batcher.close()
    with pytest.raises(EngineError, match="closed"):
        batcher.submit(_song(ort_engine, 20, rng))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_batch": 0}, "max_batch must be at least 1, got 0"),
        ({"chunk_frames": 8}, "chunk_frames must be from 16 to 128, got 8"),
        ({"chunk_frames": 129}, "chunk_frames must be from 16 to 128, got 129"),
    ],
)
def test_bad_settings_are_refused(ort_engine, kwargs, message):
    with pytest.raises(ParameterError, match=message):
        SequenceBatcher(ort_engine, **kwargs)


class _ProfiledEngine(OnnxRuntimeEngine):
    """An engine that, like a TensorRT one, serves a single shape profile."""

    def __init__(self, path):
        super().__init__(path, threads=1)
        from engines.settings import ShapeProfile

        self.profile = ShapeProfile(min=(1, 16), opt=(4, 64), max=(8, 128))


def test_batcher_respects_the_engines_profile(tiny_model):
    engine = _ProfiledEngine(tiny_model)
    with pytest.raises(ParameterError, match="profile"):
        SequenceBatcher(engine, max_batch=16, chunk_frames=64)
    SequenceBatcher(engine, max_batch=8, chunk_frames=128).close()


def test_batcher_keeps_torch_state_on_its_device(tiny_model, rng):
    """The same guarantees with a torch engine, whose state rows are torch tensors."""
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install '.[train]')")
    from engines.torch_engine import TorchEngine

    engine = TorchEngine(tiny_model, device="cpu", dtype="fp32", cuda_graphs=False)
    songs = [_song(engine, n, rng) for n in (40, 70, 20)]
    with SequenceBatcher(engine, max_batch=2, chunk_frames=16) as batcher:
        results = [f.result(timeout=60) for f in [batcher.submit(s) for s in songs]]
        assert all(isinstance(v, torch.Tensor) for v in batcher.state_pool.values())
    for song, poses in zip(songs, results, strict=True):
        np.testing.assert_allclose(poses, SingleSongRunner(engine, 16).run_song(song), atol=1e-5)


class _CountingEngine(OnnxRuntimeEngine):
    """The ONNX Runtime engine, recording the (batch, frames) of every call it runs."""

    def __init__(self, path):
        super().__init__(path, threads=1)
        self.calls: list[tuple[int, int]] = []

    def run(self, inputs, state):
        self.calls.append(inputs["music"].shape[:2])
        return super().run(inputs, state)


def test_warm_up_runs_every_batch_bucket_once(tiny_model, rng):
    engine = _CountingEngine(tiny_model)
    with SequenceBatcher(engine, max_batch=5, chunk_frames=16) as batcher:
        assert engine.calls == []
        batcher.warm_up()
        assert engine.calls == [(1, 16), (2, 16), (4, 16), (5, 16)]  # powers of two, then max_batch
        assert batcher.stats.calls == 0, "warm-up calls are not serving calls"
        song = _song(engine, 40, rng)
        np.testing.assert_allclose(
            batcher.run_song(song, timeout_s=30), SingleSongRunner(engine, 16).run_song(song), atol=1e-5
        )


@pytest.mark.gpu
def test_the_pipelined_batcher_on_torch_cuda_gives_each_song_its_own_dance(rng):
    """On the GPU a call is launched before the previous call's poses are handed out, and a slot freed by
    a song's last chunk takes a waiting song while that chunk still runs: each song still gets the
    dance it gets alone (songs of mixed lengths, three times as many as slots)."""
    from engine_testkit import SHIPPED_MODEL, backend_skip_reason

    reason = backend_skip_reason("torch-cuda")
    if reason:
        pytest.skip(reason)
    from engines.torch_engine import TorchEngine

    engine = TorchEngine(SHIPPED_MODEL, device="cuda:0", dtype="fp32", cuda_graphs=True, max_batch=8)
    songs = [_song(engine, int(n), rng) for n in rng.integers(20, 200, 24)]
    alone = SingleSongRunner(engine, 32)
    with SequenceBatcher(engine, max_batch=8, chunk_frames=32) as batcher:
        batcher.warm_up()
        futures = [batcher.submit(s) for s in songs]
        for future, song in zip(futures, songs, strict=True):
            np.testing.assert_allclose(future.result(timeout=120), alone.run_song(song), atol=1e-4)
    assert batcher.stats.songs_done == len(songs)
