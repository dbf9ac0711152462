"""The torch backend's own parts, on the CPU: batch buckets, fp16 loop bodies, compiled bodies."""

from __future__ import annotations

import numpy as np
import pytest
from engine_testkit import SHIPPED_MODEL, make_inputs

from choreo.errors import EngineError
from engines.accuracy import rotation_error_deg
from engines.onnxruntime_engine import OnnxRuntimeEngine

torch = pytest.importorskip("torch", reason="torch is not installed (pip install '.[train]')")

from engines.torch_engine import TorchEngine, batch_bucket  # noqa: E402


@pytest.fixture(scope="module")
def shipped():
    if not SHIPPED_MODEL.is_file():
        pytest.skip(f"shipped model not exported yet: {SHIPPED_MODEL}")
    return SHIPPED_MODEL


def test_batch_buckets_are_powers_of_two():
    assert [batch_bucket(b) for b in (1, 2, 3, 8, 9, 64, 65, 256)] == [1, 2, 4, 8, 16, 64, 128, 256]
    with pytest.raises(EngineError, match="batch must be at least 1, got 0"):
        batch_bucket(0)


def test_fp16_loop_body_stays_close_to_fp32(shipped, rng):
    reference = OnnxRuntimeEngine(shipped, threads=1)
    half = TorchEngine(shipped, device="cpu", dtype="fp16", cuda_graphs=False)
    inputs = make_inputs(reference.spec, 2, 32, rng)
    expected, _ = reference.run(inputs, reference.initial_state(2))
    got, state = half.run(inputs, half.initial_state(2))
    assert state["h1"].dtype == torch.float32, "state crosses chunks in fp32"
    assert rotation_error_deg(expected.reshape(-1, 75), got.reshape(-1, 75)).mean() < 0.5


def test_unknown_operator_is_named(tmp_path, rng):
    import onnx
    from onnx import TensorProto, helper
    from tiny_engine_model import tiny_spec

    spec = tiny_spec(4)
    f32 = TensorProto.FLOAT
    nodes = [helper.make_node("HardSwish", ["music"], ["poses"])]
    graph = helper.make_graph(
        nodes,
        "odd",
        [helper.make_tensor_value_info(n, f32, None) for n in ("music", "style", "latent")],
        [helper.make_tensor_value_info("poses", f32, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    helper.set_model_props(model, spec.to_metadata())
    onnx.save(model, str(tmp_path / "odd.onnx"))
    engine = TorchEngine(tmp_path / "odd.onnx", device="cpu", dtype="fp32", cuda_graphs=False)
    with pytest.raises(EngineError, match="HardSwish"):
        engine.run(make_inputs(spec, 1, 16, rng), engine.initial_state(1))


@pytest.mark.slow
def test_compiled_scan_body_equals_the_graph(shipped, rng):
    reference = OnnxRuntimeEngine(shipped, threads=1)
    compiled = TorchEngine(shipped, device="cpu", dtype="fp32", cuda_graphs=False, compile_bodies=True)
    for batch, frames in ((2, 16), (3, 24)):
        inputs = make_inputs(reference.spec, batch, frames, rng)
        expected, expected_state = reference.run(inputs, reference.initial_state(batch))
        got, state = compiled.run(inputs, compiled.initial_state(batch))
        np.testing.assert_allclose(got, expected, atol=1e-4)
        np.testing.assert_allclose(state["h2"].numpy(), expected_state["h2"], atol=1e-5)
