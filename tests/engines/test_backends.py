"""One test suite for every backend this machine can run (the others skip, saying why).

Each backend runs the tiny styled test model (built in code) and the shipped guided model.
"""

from __future__ import annotations

import numpy as np
import pytest
from engine_testkit import BACKEND_FACTORIES, make_inputs, to_numpy_state

from choreo.errors import EngineError
from engines.onnxruntime_engine import OnnxRuntimeEngine


def _run_chunks(engine, inputs, bounds, state=None):
    state = state if state is not None else engine.initial_state(inputs["music"].shape[0])
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        poses, state = engine.run({k: v[:, lo:hi] for k, v in inputs.items()}, state)
        parts.append(poses)
    return np.concatenate(parts, axis=1), state


def test_shapes_and_dtype(engine, rng):
    inputs = make_inputs(engine.spec, 3, 32, rng)
    poses, state = engine.run(inputs, engine.initial_state(3))
    assert poses.shape == (3, 32, 75)
    assert poses.dtype == np.float32
    assert np.isfinite(poses).all()
    host = to_numpy_state(state)
    assert set(host) == set(engine.spec.state_shapes)
    for name, shape in engine.spec.state_shapes.items():
        assert host[name].shape == (3, *shape)


def test_chunked_run_equals_one_long_run(engine, rng, tolerance):
    inputs = make_inputs(engine.spec, 2, 112, rng)
    whole, whole_state = _run_chunks(engine, inputs, [0, 112])
    chunked, chunked_state = _run_chunks(engine, inputs, [0, 16, 64, 112])
    np.testing.assert_allclose(chunked, whole, atol=tolerance)
    for name, value in to_numpy_state(whole_state).items():
        np.testing.assert_allclose(to_numpy_state(chunked_state)[name], value, atol=tolerance)


def test_batch_equals_single_runs(engine, rng, tolerance):
    inputs = make_inputs(engine.spec, 5, 48, rng)
    batched, _ = engine.run(inputs, engine.initial_state(5))
    for b in range(5):
        single, _ = engine.run({k: v[b : b + 1] for k, v in inputs.items()}, engine.initial_state(1))
        np.testing.assert_allclose(batched[b : b + 1], single, atol=tolerance)


def test_state_carries_the_dance(engine, rng):
    """A non-zero state changes what follows: the state is really used."""
    inputs = make_inputs(engine.spec, 1, 32, rng)
    _, state = engine.run(inputs, engine.initial_state(1))
    fresh, _ = engine.run(inputs, engine.initial_state(1))
    carried, _ = engine.run(inputs, state)
    assert np.abs(fresh - carried).max() > 1e-3


def test_every_declared_input_moves_the_dance(engine, rng):
    """Each input the model declares (a style, or a guide and junction timing) reaches the poses.

    The run is deterministic (below), so poses equal to the last bit mean the input is not wired in.
    """
    inputs = make_inputs(engine.spec, 1, 32, rng)
    poses, _ = engine.run(inputs, engine.initial_state(1))
    other = make_inputs(engine.spec, 1, 32, rng)
    if "style" in other:
        other["style"] = np.roll(inputs["style"], 1, axis=-1)  # surely another style
    for name in engine.spec.input_widths:
        moved, _ = engine.run(inputs | {name: other[name]}, engine.initial_state(1))
        assert not np.array_equal(moved, poses), f"input {name!r} does not reach the poses"


def test_deterministic(engine, rng):
    inputs = make_inputs(engine.spec, 2, 40, rng)
    first, _ = engine.run(inputs, engine.initial_state(2))
    second, _ = engine.run(inputs, engine.initial_state(2))
    np.testing.assert_array_equal(first, second)


def test_causal_so_a_padded_last_chunk_is_exact(engine, rng, tolerance):
    """Frames after t never change pose t: the batcher pads a song's last chunk with zeros."""
    inputs = make_inputs(engine.spec, 2, 64, rng)
    exact, _ = engine.run({k: v[:, :40] for k, v in inputs.items()}, engine.initial_state(2))
    padded_inputs = {k: v.copy() for k, v in inputs.items()}
    for v in padded_inputs.values():
        v[:, 40:] = 0.0
    padded, _ = engine.run(padded_inputs, engine.initial_state(2))
    np.testing.assert_allclose(padded[:, :40], exact, atol=tolerance)


def test_agrees_with_onnxruntime_fp32(engine, backend, model_path, rng):
    if backend == "onnxruntime":
        pytest.skip("the reference itself")
    reference = OnnxRuntimeEngine(model_path, threads=1)
    inputs = make_inputs(engine.spec, 4, 64, rng)
    expected, _ = reference.run(inputs, reference.initial_state(4))
    got, _ = engine.run(inputs, engine.initial_state(4))
    np.testing.assert_allclose(got, expected, atol=BACKEND_FACTORIES[backend][2] * 4)


def test_wrong_input_width_is_refused(engine, rng):
    inputs = make_inputs(engine.spec, 2, 16, rng)
    inputs["music"] = inputs["music"][:, :, :-1]
    with pytest.raises(EngineError, match="music"):
        engine.run(inputs, engine.initial_state(2))


def test_state_of_another_batch_is_refused(engine, rng):
    inputs = make_inputs(engine.spec, 2, 16, rng)
    with pytest.raises(EngineError, match="state"):
        engine.run(inputs, engine.initial_state(3))


def test_chunk_shorter_than_the_minimum_is_refused(engine, rng):
    inputs = make_inputs(engine.spec, 1, 8, rng)
    with pytest.raises(EngineError, match="16 to 128"):
        engine.run(inputs, engine.initial_state(1))


def test_inputs_written_into_the_engine_s_own_buffers_run_as_plain_ones(engine, rng):
    """A backend with page-locked input buffers sends them as they are; the dance is the same."""
    inputs = make_inputs(engine.spec, 3, 32, rng)
    expected, _ = engine.run(inputs, engine.initial_state(3))
    buffers = engine.input_buffers(3, 32)
    if buffers is None:
        return  # this backend reads the caller's arrays: nothing more to check
    assert set(buffers) == set(inputs)
    for name, value in inputs.items():
        buffers[name][...] = value
    got, _ = engine.run(buffers, engine.initial_state(3))
    np.testing.assert_array_equal(got, expected)
    buffers["music"][...] = 0.0  # the buffers are what is sent: another chunk gives another dance
    other, _ = engine.run(buffers, engine.initial_state(3))
    assert not np.array_equal(other, expected)


def test_chunks_launched_back_to_back_equal_chunks_run_one_at_a_time(engine, rng):
    """A launch's state feeds the next launch before its poses are read (the batcher's pipeline)."""
    inputs = make_inputs(engine.spec, 2, 64, rng)
    chunks = [{name: value[:, lo : lo + 32] for name, value in inputs.items()} for lo in (0, 32)]
    state, expected = engine.initial_state(2), []
    for chunk in chunks:
        poses, state = engine.run(chunk, state)
        expected.append(poses)
    state, pending = engine.initial_state(2), []
    for chunk in chunks:
        launched, state = engine.launch(chunk, state)
        pending.append(launched)
    for launched, poses in zip(pending, expected, strict=True):
        np.testing.assert_array_equal(launched.wait(), poses)
