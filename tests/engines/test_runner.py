"""The song-runner seam: one chunking rule, one-song runner against the engine run by hand."""

from __future__ import annotations

import numpy as np
import pytest
from engine_testkit import make_inputs

from choreo.errors import EngineError, ParameterError
from engines.onnxruntime_engine import OnnxRuntimeEngine
from engines.runner import SingleSongRunner, pack_song, song_frames


@pytest.fixture(scope="module")
def ort_engine(tiny_model):
    return OnnxRuntimeEngine(tiny_model, threads=1)


def _song(engine, n_frames, rng):
    return {name: value[0] for name, value in make_inputs(engine.spec, 1, n_frames, rng).items()}


def test_pack_song_cuts_whole_chunks_and_zero_pads_the_last(ort_engine, rng):
    song = _song(ort_engine, 40, rng)
    widths = ort_engine.spec.input_widths
    packed = pack_song(song, widths, 40, 16)
    assert list(packed) == list(widths)
    for name, width in widths.items():
        assert packed[name].shape == (3, 16, width) and packed[name].flags.c_contiguous
        flat = packed[name].reshape(48, width)
        np.testing.assert_array_equal(flat[:40], song[name])
        assert not flat[40:].any(), "the last chunk's padding must be zeros"


def test_single_runner_equals_the_engine_run_chunk_by_chunk(ort_engine, rng):
    song = _song(ort_engine, 70, rng)
    state = ort_engine.initial_state(1)
    expected = []
    for lo in (0, 32, 64):
        chunk = {k: np.zeros((1, 32, v.shape[1]), np.float32) for k, v in song.items()}
        for k, v in song.items():
            chunk[k][0, : min(32, 70 - lo)] = v[lo : lo + 32]
        poses, state = ort_engine.run(chunk, state)
        expected.append(poses[0, : min(32, 70 - lo)])
    got = SingleSongRunner(ort_engine, 32).run_song(song)
    assert got.shape == (70, 75) and got.dtype == np.float32
    np.testing.assert_array_equal(got, np.concatenate(expected))


def test_the_chunk_length_does_not_change_the_dance(ort_engine, rng):
    song = _song(ort_engine, 150, rng)
    reference = SingleSongRunner(ort_engine, 128).run_song(song)
    for chunk_frames in (16, 37, 64):
        np.testing.assert_allclose(
            SingleSongRunner(ort_engine, chunk_frames).run_song(song), reference, atol=1e-5
        )


def test_a_song_shorter_than_the_smallest_chunk_runs(ort_engine, rng):
    song = _song(ort_engine, 5, rng)
    np.testing.assert_allclose(
        SingleSongRunner(ort_engine, 16).run_song(song),
        SingleSongRunner(ort_engine, 16).run_song(_song_prefix(song, rng, ort_engine))[:5],
        atol=1e-5,
    )


def _song_prefix(song, rng, engine):
    """``song`` followed by 30 other frames: its first five poses must not change (the model is causal)."""
    more = _song(engine, 30, rng)
    return {k: np.concatenate([v, more[k]]) for k, v in song.items()}


def test_bad_song_inputs_are_named(ort_engine, rng):
    runner = SingleSongRunner(ort_engine, 16)
    song = _song(ort_engine, 20, rng)
    with pytest.raises(EngineError, match="missing"):
        runner.run_song({k: v for k, v in song.items() if k != "latent"})
    with pytest.raises(EngineError, match="'style'"):
        runner.run_song(song | {"style": song["style"][:, :1]})
    with pytest.raises(EngineError, match="no frames"):
        runner.run_song({k: v[:0] for k, v in song.items()})
    assert song_frames(song, ort_engine.spec.input_widths) == 20


@pytest.mark.parametrize("chunk_frames", [8, 129])
def test_a_chunk_length_outside_the_contract_is_refused(ort_engine, chunk_frames):
    with pytest.raises(ParameterError, match="chunk_frames"):
        SingleSongRunner(ort_engine, chunk_frames)
