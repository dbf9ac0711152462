"""A small ONNX chunk model with the engine contract, built in code for tests.

It is an autoregressive LSTM cell run inside an ONNX ``Loop`` over the frames
of a chunk, with the previous pose fed back in: the same shape of graph as the
shipped model (conditioning inputs, ``state_in_*`` / ``state_out_*`` carried
from chunk to chunk, ``poses [B, T, 75]``), small enough to run in milliseconds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from engines.base import ModelSpec

__all__ = ["STYLES", "build_tiny_model", "tiny_spec"]

STYLES = ("salsa", "modern", "breakdance", "whirl")
FEATURES = 35
LATENT = 8
POSE = 75


def tiny_spec(hidden: int) -> ModelSpec:
    """The metadata of the tiny model with ``hidden`` LSTM units."""
    return ModelSpec(
        version="tiny-test-0",
        native_fps=30,
        feature_dim=FEATURES,
        styles=STYLES,
        latent_dim=LATENT,
        state_shapes={"h": (hidden,), "c": (hidden,), "pose": (POSE,)},
        trained=False,
        credits=(),
    )


def _body(hidden: int, rng: np.random.Generator) -> onnx.GraphProto:
    """One frame: LSTM cell on (projected input, previous pose), then the pose head."""
    init = [
        numpy_helper.from_array(
            (rng.standard_normal((hidden, 4 * hidden)) / np.sqrt(hidden)).astype(np.float32), "Rh"
        ),
        numpy_helper.from_array((rng.standard_normal((POSE, 4 * hidden)) * 0.05).astype(np.float32), "Rp"),
        numpy_helper.from_array((rng.standard_normal((hidden, POSE)) * 0.3).astype(np.float32), "Wo"),
        numpy_helper.from_array((rng.standard_normal(POSE) * 0.1).astype(np.float32), "bo"),
    ]
    nodes = [
        helper.make_node("Gather", ["xp_tbf", "iter"], ["x_t"], axis=0),
        helper.make_node("MatMul", ["h_in", "Rh"], ["hr"]),
        helper.make_node("MatMul", ["pose_in", "Rp"], ["pr"]),
        helper.make_node("Add", ["x_t", "hr"], ["g0"]),
        helper.make_node("Add", ["g0", "pr"], ["gates"]),
        helper.make_node("Split", ["gates"], ["gi", "gf", "gg", "go"], axis=1, num_outputs=4),
        helper.make_node("Sigmoid", ["gi"], ["si"]),
        helper.make_node("Sigmoid", ["gf"], ["sf"]),
        helper.make_node("Tanh", ["gg"], ["tg"]),
        helper.make_node("Sigmoid", ["go"], ["so"]),
        helper.make_node("Mul", ["sf", "c_in"], ["fc"]),
        helper.make_node("Mul", ["si", "tg"], ["it"]),
        helper.make_node("Add", ["fc", "it"], ["c_out"]),
        helper.make_node("Tanh", ["c_out"], ["tc"]),
        helper.make_node("Mul", ["so", "tc"], ["h_out"]),
        helper.make_node("MatMul", ["h_out", "Wo"], ["ho"]),
        helper.make_node("Add", ["ho", "bo"], ["pose_out"]),
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("Identity", ["pose_out"], ["pose_scan"]),
    ]
    f32 = TensorProto.FLOAT
    inputs = [
        helper.make_tensor_value_info("iter", TensorProto.INT64, []),
        helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
        helper.make_tensor_value_info("h_in", f32, ["B", hidden]),
        helper.make_tensor_value_info("c_in", f32, ["B", hidden]),
        helper.make_tensor_value_info("pose_in", f32, ["B", POSE]),
    ]
    outputs = [
        helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
        helper.make_tensor_value_info("h_out", f32, ["B", hidden]),
        helper.make_tensor_value_info("c_out", f32, ["B", hidden]),
        helper.make_tensor_value_info("pose_out", f32, ["B", POSE]),
        helper.make_tensor_value_info("pose_scan", f32, ["B", POSE]),
    ]
    return helper.make_graph(nodes, "frame", inputs, outputs, initializer=init)


def build_tiny_model(path: Path, *, hidden: int = 32, seed: int = 0) -> Path:
    """Write the tiny chunk model to ``path`` and return it."""
    rng = np.random.default_rng(seed)
    cond_width = FEATURES + len(STYLES) + LATENT
    f32 = TensorProto.FLOAT
    init = [
        numpy_helper.from_array(
            (rng.standard_normal((cond_width, 4 * hidden)) * 0.2).astype(np.float32), "Wx"
        ),
        numpy_helper.from_array((rng.standard_normal(4 * hidden) * 0.1).astype(np.float32), "bx"),
        numpy_helper.from_array(np.array(1, dtype=np.int64), "one"),
        numpy_helper.from_array(np.array(True), "true"),
    ]
    nodes = [
        helper.make_node("Concat", ["music", "style", "latent"], ["x"], axis=2),
        helper.make_node("MatMul", ["x", "Wx"], ["xw"]),
        helper.make_node("Add", ["xw", "bx"], ["xp"]),
        helper.make_node("Transpose", ["xp"], ["xp_tbf"], perm=[1, 0, 2]),
        helper.make_node("Shape", ["music"], ["music_shape"]),
        helper.make_node("Gather", ["music_shape", "one"], ["frames"], axis=0),
        helper.make_node(
            "Loop",
            ["frames", "true", "state_in_h", "state_in_c", "state_in_pose"],
            ["state_out_h", "state_out_c", "state_out_pose", "poses_tbf"],
            body=_body(hidden, rng),
        ),
        helper.make_node("Transpose", ["poses_tbf"], ["poses"], perm=[1, 0, 2]),
    ]
    inputs = [
        helper.make_tensor_value_info("music", f32, ["B", "T", FEATURES]),
        helper.make_tensor_value_info("style", f32, ["B", "T", len(STYLES)]),
        helper.make_tensor_value_info("latent", f32, ["B", "T", LATENT]),
        helper.make_tensor_value_info("state_in_h", f32, ["B", hidden]),
        helper.make_tensor_value_info("state_in_c", f32, ["B", hidden]),
        helper.make_tensor_value_info("state_in_pose", f32, ["B", POSE]),
    ]
    outputs = [
        helper.make_tensor_value_info("poses", f32, ["B", "T", POSE]),
        helper.make_tensor_value_info("state_out_h", f32, ["B", hidden]),
        helper.make_tensor_value_info("state_out_c", f32, ["B", hidden]),
        helper.make_tensor_value_info("state_out_pose", f32, ["B", POSE]),
    ]
    graph = helper.make_graph(nodes, "tiny_choreo", inputs, outputs, initializer=init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    for key, value in tiny_spec(hidden).to_metadata().items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.checker.check_model(model, full_check=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path
