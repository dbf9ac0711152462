"""The torch backend's own parts, on the CPU: the network loaded from the ONNX file, buckets, fp16."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from engine_testkit import SHIPPED_MODEL, make_inputs

from choreo.errors import EngineError
from engines.accuracy import rotation_error_deg
from engines.onnxruntime_engine import OnnxRuntimeEngine

torch = pytest.importorskip("torch", reason="torch is not installed (pip install '.[train]')")

from engines.torch_engine import TorchEngine, batch_bucket  # noqa: E402


@pytest.fixture(scope="module")
def shipped():
    return SHIPPED_MODEL


def test_batch_buckets_are_powers_of_two():
    assert [batch_bucket(b) for b in (1, 2, 3, 8, 9, 64, 65, 256)] == [1, 2, 4, 8, 16, 64, 128, 256]
    with pytest.raises(EngineError, match="batch must be at least 1, got 0"):
        batch_bucket(0)


def test_the_network_from_the_shipped_file_runs_as_onnx_runtime(shipped, rng):
    """The weights and config in the ONNX file rebuild the network that made the graph (CPU, fp32)."""
    reference = OnnxRuntimeEngine(shipped, threads=1)
    engine = TorchEngine(shipped, device="cpu", dtype="fp32", cuda_graphs=False)
    assert engine.spec == reference.spec
    ref_state, state = reference.initial_state(3), engine.initial_state(3)
    for _ in range(3):  # three chunks, the state carried on
        inputs = make_inputs(reference.spec, 3, 48, rng)
        expected, ref_state = reference.run(inputs, ref_state)
        got, state = engine.run(inputs, state)
        np.testing.assert_allclose(got, expected, atol=1e-4)
    for name, value in ref_state.items():
        np.testing.assert_allclose(state[name].numpy(), value, atol=1e-4)


def test_fp16_products_stay_close_to_fp32(shipped, rng):
    reference = OnnxRuntimeEngine(shipped, threads=1)
    half = TorchEngine(shipped, device="cpu", dtype="fp16", cuda_graphs=False)
    inputs = make_inputs(reference.spec, 2, 32, rng)
    expected, _ = reference.run(inputs, reference.initial_state(2))
    got, state = half.run(inputs, half.initial_state(2))
    assert state["h1"].dtype == torch.float32, "state crosses chunks in fp32"
    assert rotation_error_deg(expected.reshape(-1, 75), got.reshape(-1, 75)).mean() < 0.5


def test_a_model_without_its_network_is_refused_naming_the_key(tiny_model, tmp_path):
    model = onnx.load(str(tiny_model))
    kept = [p for p in model.metadata_props if p.key != "choreo.network"]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    onnx.save(model, str(tmp_path / "bare.onnx"))
    with pytest.raises(EngineError, match="choreo.network"):
        TorchEngine(tmp_path / "bare.onnx", device="cpu", dtype="fp32", cuda_graphs=False)
