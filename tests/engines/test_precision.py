"""FP16 and INT8 ONNX conversions run in ONNX Runtime and stay close to fp32."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from engine_testkit import SHIPPED_MODEL, make_inputs

from choreo.errors import EngineError
from engines.accuracy import compare_poses, rotation_error_deg, trajectory_mse_normalised
from engines.onnxruntime_engine import OnnxRuntimeEngine
from engines.precision import quantize_int8, to_mixed_fp16


@pytest.fixture(scope="module")
def shipped():
    return onnx.load(str(SHIPPED_MODEL))


def _loop_bodies(model):
    return [
        a.g
        for n in model.graph.node
        if n.op_type in ("Scan", "Loop")
        for a in n.attribute
        if a.name == "body"
    ]


def _run(model, inputs, tmp_path, name):
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    engine = OnnxRuntimeEngine(path, threads=1)
    batch = inputs["music"].shape[0]
    return engine.run(inputs, engine.initial_state(batch))[0]


def _chunks(engine, rng, n=3):
    feeds = []
    for _ in range(n):
        feed = make_inputs(engine.spec, 2, 32, rng)
        feed.update({f"state_in_{k}": v for k, v in engine.initial_state(2).items()})
        feeds.append(feed)
    return feeds


@pytest.mark.parametrize("which", ["tiny", "shipped"])
def test_fp16_keeps_float32_io_and_runs_the_loop_products_in_fp16(which, tiny_model, tmp_path, rng, request):
    model = onnx.load(str(tiny_model)) if which == "tiny" else request.getfixturevalue("shipped")
    half = to_mixed_fp16(model)
    for vi in [*half.graph.input, *half.graph.output]:
        assert vi.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    for body in _loop_bodies(half):
        products = [n for n in body.node if n.op_type == "MatMul"]
        assert products and all(n.input[1].endswith("__fp16") for n in products)
        assert all(vi.type.tensor_type.elem_type == onnx.TensorProto.FLOAT for vi in body.input[-2:])
    assert any(i.data_type == onnx.TensorProto.FLOAT16 for i in half.graph.initializer)
    inputs = make_inputs(OnnxRuntimeEngine(tiny_model).spec if which == "tiny" else _spec(model), 2, 48, rng)
    ref = _run(model, inputs, tmp_path, "fp32")
    got = _run(half, inputs, tmp_path, "fp16")
    assert not np.array_equal(ref, got), "fp16 should change the numbers a little"
    errors = rotation_error_deg(ref.reshape(-1, 75), got.reshape(-1, 75))
    assert errors.mean() < 0.5


def _spec(model):
    from choreo.contracts.model_spec import ModelSpec

    return ModelSpec.from_metadata({p.key: p.value for p in model.metadata_props})


def test_int8_puts_qdq_inside_the_scan_body_and_outside(shipped, tmp_path, rng):
    engine_path = tmp_path / "fp32.onnx"
    onnx.save(shipped, str(engine_path))
    engine = OnnxRuntimeEngine(engine_path, threads=1)
    quantized = quantize_int8(shipped, _chunks(engine, rng), quantize_loops=True)
    outer_ops = {n.op_type for n in quantized.graph.node}
    body_ops = {n.op_type for b in _loop_bodies(quantized) for n in b.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= outer_ops
    assert {"QuantizeLinear", "DequantizeLinear"} <= body_ops
    assert {p.key: p.value for p in quantized.metadata_props} == {
        p.key: p.value for p in shipped.metadata_props
    }
    inputs = make_inputs(engine.spec, 2, 48, rng)
    ref = _run(shipped, inputs, tmp_path, "ref")
    got = _run(quantized, inputs, tmp_path, "int8")
    assert np.isfinite(got).all()
    assert rotation_error_deg(ref.reshape(-1, 75), got.reshape(-1, 75)).mean() < 5.0


def test_int8_of_a_loop_model_body_is_refused_clearly():
    from onnx import TensorProto, helper

    f32 = TensorProto.FLOAT
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond"], ["cond_out"]),
            helper.make_node("Identity", ["x"], ["x_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", f32, [1]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x_out", f32, [1]),
        ],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["", "", "x"], ["y"], body=body)],
        "looped",
        [helper.make_tensor_value_info("x", f32, [1])],
        [helper.make_tensor_value_info("y", f32, [1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(EngineError, match="Loop bodies"):
        quantize_int8(model, [{"x": np.zeros(1, np.float32)}], quantize_loops=True)


def test_default_int8_leaves_the_recurrent_loop_alone(shipped, tmp_path, rng):
    path = tmp_path / "fp32.onnx"
    onnx.save(shipped, str(path))
    quantized = quantize_int8(shipped, _chunks(OnnxRuntimeEngine(path, threads=1), rng))
    assert "QuantizeLinear" in {n.op_type for n in quantized.graph.node}
    assert "QuantizeLinear" not in {n.op_type for b in _loop_bodies(quantized) for n in b.node}


def test_rotation_error_of_a_known_turn():
    ref = np.zeros((3, 75))
    turned = ref.copy()
    turned[:, 3] = np.radians(10.0)  # joint 1 turned 10 degrees about x
    errors = rotation_error_deg(ref, turned)
    np.testing.assert_allclose(errors[:, 1], 10.0, atol=1e-9)
    assert errors[:, [0, *range(2, 24)]].max() < 1e-9


def test_identical_motions_have_no_error(rng):
    poses = rng.normal(0, 0.3, size=(50, 75))
    err = compare_poses(poses, poses.copy())
    assert err.rotation_max_deg < 1e-4 and err.trajectory_mse_norm == 0.0
    assert trajectory_mse_normalised(poses, poses + np.r_[np.zeros(72), [0.1, 0, 0]]) > 0
