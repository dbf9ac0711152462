"""Build the chunk graph of the dance model with ``onnx.helper``.

One ONNX Runtime call runs a whole chunk of ``T`` frames: the per-frame
conditioning (music, style, slow latent) is encoded for all frames at once,
then an ONNX ``Scan`` runs the two LSTM layers frame by frame, feeding each
generated pose back into the next step, and finally the 6D rotations are
turned into axis-angle for all frames at once. The graph is built by hand
from the weights (not traced) so that the autoregressive loop is one Scan
node and the weights live in the one file.

A guided model (``ModelConfig(guided=True)``) takes ``music``, ``guide``,
``junction`` and ``latent``: the guide's axis-angle rotations become 6D in the
graph, the Scan adds the predicted correction to the guide's normalised
features frame by frame, and the root follows the guide's plus its correction.

The arithmetic mirrors :class:`engines.network.dance_net.DanceNet`; a test checks
the two agree within 1e-4.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from choreo.errors import ParameterError
from engines.network.config import GUIDE_FEATURES, N_JOINTS, POSE_DIM, ROOT_DIM, ModelConfig, param_shapes
from engines.network.quat_pick import quat_pick_matrix

__all__ = ["OPSET", "build_model", "sixd_to_axis_angle_model"]

OPSET = 17
FLOAT = TensorProto.FLOAT
SMALL_ANGLE = 1e-4  # as engines.network.dance_net.SMALL_ANGLE


class _Graph:
    """Collects nodes and constants with generated names."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._n = 0

    def name(self, hint: str) -> str:
        self._n += 1
        return f"{self.prefix}{hint}_{self._n}"

    def const(self, value: np.ndarray | float | list, hint: str = "c", dtype: type = np.float32) -> str:
        name = self.name(hint)
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(self, op_type: str, inputs: list[str], hint: str | None = None, n_out: int = 1, **attrs: Any):
        outs = [self.name(hint or op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=self.name("n_" + op_type), **attrs))
        return outs[0] if n_out == 1 else outs

    def named(self, op_type: str, inputs: list[str], output: str, **attrs: Any) -> str:
        self.nodes.append(
            helper.make_node(op_type, inputs, [output], name=self.name("n_" + op_type), **attrs)
        )
        return output

    def slice_last(self, x: str, start: int, end: int) -> str:
        return self.op(
            "Slice",
            [
                x,
                self.const([start], "s", np.int64),
                self.const([end], "e", np.int64),
                self.const([-1], "ax", np.int64),
            ],
        )

    def dense(self, x: str, w: str, b: str | None) -> str:
        y = self.op("MatMul", [x, w])
        return self.op("Add", [y, b]) if b is not None else y

    def lstm_cell(self, gates: str, c: str, hidden: int) -> tuple[str, str]:
        """Gates ordered input, forget, output, cell; returns ``(h, c)``."""
        sig = self.op("Sigmoid", [self.slice_last(gates, 0, 3 * hidden)])
        cand = self.op("Tanh", [self.slice_last(gates, 3 * hidden, 4 * hidden)])
        i, f, o = self._split3(sig, hidden)
        c_new = self.op("Add", [self.op("Mul", [f, c]), self.op("Mul", [i, cand])])
        h_new = self.op("Mul", [o, self.op("Tanh", [c_new])])
        return h_new, c_new

    def _split3(self, x: str, hidden: int) -> list[str]:
        split = self.const([hidden, hidden, hidden], "split", np.int64)
        return self.op("Split", [x, split], n_out=3, axis=-1)


def _soft_clamp(g: _Graph, x: str, soft: float, hard: float) -> str:
    knee = hard - soft
    mag = g.op("Abs", [x])
    inner = g.op("Min", [mag, g.const(soft)])
    over = g.op("Relu", [g.op("Sub", [mag, g.const(soft)])])
    outer = g.op("Mul", [g.op("Tanh", [g.op("Mul", [over, g.const(1.0 / knee)])]), g.const(knee)])
    return g.op("Mul", [g.op("Sign", [x]), g.op("Add", [inner, outer])])


def _scan_body(config: ModelConfig, weights: Mapping[str, str]) -> onnx.GraphProto:
    """One frame: two LSTM cells, the pose head and the root integration."""
    h = config.hidden
    g = _Graph("b_")
    names = ["h1", "c1", "h2", "c2", "pose", "root"]
    dims = {"h1": h, "c1": h, "h2": h, "c2": h, "pose": POSE_DIM, "root": ROOT_DIM}
    ins = [helper.make_tensor_value_info(f"in_{n}", FLOAT, ["B", dims[n]]) for n in names]
    ins.append(helper.make_tensor_value_info("in_g1x", FLOAT, ["B", 4 * h]))

    fb = g.op("Concat", ["in_h1", "in_pose", "in_root"], axis=-1)
    g1 = g.op("Add", [g.op("MatMul", [fb, weights["l1_wr"]]), "in_g1x"])
    h1, c1 = g.lstm_cell(g1, "in_c1", h)
    g2 = g.dense(g.op("Concat", [h1, "in_h2"], axis=-1), weights["l2_w"], weights["l2_b"])
    h2, c2 = g.lstm_cell(g2, "in_c2", h)
    z = g.dense(h2, weights["out_w"], weights["out_b"])
    vel = g.op(
        "Add",
        [g.op("Mul", [g.slice_last(z, POSE_DIM - 2, POSE_DIM), weights["vel_std"]]), weights["vel_mean"]],
    )
    root = _soft_clamp(g, g.op("Add", ["in_root", vel]), config.floor_soft_m, config.floor_hard_m)

    new = {"h1": h1, "c1": c1, "h2": h2, "c2": c2, "pose": z, "root": root}
    outs = []
    for n in names:
        g.named("Identity", [new[n]], f"out_{n}")
        outs.append(helper.make_tensor_value_info(f"out_{n}", FLOAT, ["B", dims[n]]))
    g.named("Identity", [z], "scan_pose")
    g.named("Identity", [root], "scan_root")
    outs += [
        helper.make_tensor_value_info("scan_pose", FLOAT, ["B", POSE_DIM]),
        helper.make_tensor_value_info("scan_root", FLOAT, ["B", ROOT_DIM]),
    ]
    return helper.make_graph(g.nodes, "frame_step", ins, outs, initializer=g.inits)


def _guided_scan_body(config: ModelConfig, weights: Mapping[str, str]) -> onnx.GraphProto:
    """One frame of the guided model: two LSTM cells and the correction added to the guide."""
    h = config.hidden
    g = _Graph("b_")
    names = ["h1", "c1", "h2", "c2", "pose"]
    dims = {"h1": h, "c1": h, "h2": h, "c2": h, "pose": POSE_DIM}
    ins = [helper.make_tensor_value_info(f"in_{n}", FLOAT, ["B", dims[n]]) for n in names]
    ins.append(helper.make_tensor_value_info("in_g1x", FLOAT, ["B", 4 * h]))
    ins.append(helper.make_tensor_value_info("in_guide", FLOAT, ["B", POSE_DIM]))

    fb = g.op("Concat", ["in_h1", "in_pose"], axis=-1)
    g1 = g.op("Add", [g.op("MatMul", [fb, weights["l1_wr"]]), "in_g1x"])
    h1, c1 = g.lstm_cell(g1, "in_c1", h)
    g2 = g.dense(g.op("Concat", [h1, "in_h2"], axis=-1), weights["l2_w"], weights["l2_b"])
    h2, c2 = g.lstm_cell(g2, "in_c2", h)
    pose = g.op("Add", ["in_guide", g.dense(h2, weights["out_w"], weights["out_b"])])

    new = {"h1": h1, "c1": c1, "h2": h2, "c2": c2, "pose": pose}
    outs = []
    for n in names:
        g.named("Identity", [new[n]], f"out_{n}")
        outs.append(helper.make_tensor_value_info(f"out_{n}", FLOAT, ["B", dims[n]]))
    g.named("Identity", [pose], "scan_pose")
    outs.append(helper.make_tensor_value_info("scan_pose", FLOAT, ["B", POSE_DIM]))
    return helper.make_graph(g.nodes, "guided_frame_step", ins, outs, initializer=g.inits)


def _axis_angle_to_sixd(g: _Graph, aa: str) -> str:
    """``[..., 3]`` axis-angle to ``[..., 6]`` (matrix columns 0 and 1) by Rodrigues' formula.

    ``R = (1 - b t^2) I + a K + b v v^T``, ``a = sin t / t``, ``b = (1 - cos t) / t^2``,
    both by their Taylor series at angles up to :data:`SMALL_ANGLE`.
    """
    t2 = g.op("ReduceSum", [g.op("Mul", [aa, aa]), g.const([-1], "ax", np.int64)], keepdims=1)
    t = g.op("Sqrt", [t2])
    safe = g.op("Max", [t, g.const(SMALL_ANGLE)])
    small = g.op("LessOrEqual", [t, g.const(SMALL_ANGLE)])
    a = g.op(
        "Where",
        [
            small,
            g.op("Sub", [g.const(1.0), g.op("Div", [t2, g.const(6.0)])]),
            g.op("Div", [g.op("Sin", [safe]), safe]),
        ],
    )
    half_sin = g.op("Sin", [g.op("Mul", [safe, g.const(0.5)])])
    b_large = g.op(
        "Div", [g.op("Mul", [g.op("Mul", [half_sin, half_sin]), g.const(2.0)]), g.op("Mul", [safe, safe])]
    )
    b = g.op("Where", [small, g.op("Sub", [g.const(0.5), g.op("Div", [t2, g.const(24.0)])]), b_large])
    x, y, z = (g.slice_last(aa, k, k + 1) for k in range(3))
    diag = g.op("Sub", [g.const(1.0), g.op("Mul", [b, t2])])
    ax, ay, az = (g.op("Mul", [a, v]) for v in (x, y, z))
    col0 = g.op("Concat", [diag, az, g.op("Neg", [ay])], axis=-1)
    col1 = g.op("Concat", [g.op("Neg", [az]), diag, ax], axis=-1)
    col0 = g.op("Add", [col0, g.op("Mul", [g.op("Mul", [b, x]), aa])])
    col1 = g.op("Add", [col1, g.op("Mul", [g.op("Mul", [b, y]), aa])])
    return g.op("Concat", [col0, col1], axis=-1)


def _slow_latent(g: _Graph, config: ModelConfig, latent: str, state: str) -> tuple[str, str]:
    """AR(1) filter of the i.i.d. latent over the chunk as one matrix product.

    ``s_t = a s_{t-1} + sqrt(1 - a^2) e_t``; returns ``(s [B, T, Z], s_last [B, Z])``.
    """
    a = config.latent_decay
    shape = g.op("Shape", [latent])
    frames = g.op("Gather", [shape, g.const(1, "one", np.int64)], axis=0)
    idx = g.op(
        "Cast", [g.op("Range", [g.const(0, "zero", np.int64), frames, g.const(1, "one", np.int64)])], to=FLOAT
    )
    diff = g.op(
        "Sub",
        [
            g.op("Unsqueeze", [idx, g.const([1], "ax", np.int64)]),
            g.op("Unsqueeze", [idx, g.const([0], "ax", np.int64)]),
        ],
    )
    lower = g.op("Cast", [g.op("GreaterOrEqual", [diff, g.const(0.0)])], to=FLOAT)
    decay = g.op("Exp", [g.op("Mul", [g.op("Relu", [diff]), g.const(np.log(a))])])
    filt = g.op("Mul", [g.op("Mul", [lower, decay]), g.const(np.sqrt(1.0 - a * a))])
    driven = g.op("MatMul", [filt, latent])
    carry = g.op("Exp", [g.op("Mul", [g.op("Add", [idx, g.const(1.0)]), g.const(np.log(a))])])
    carry = g.op(
        "Mul",
        [
            g.op("Unsqueeze", [carry, g.const([1], "ax", np.int64)]),
            g.op("Unsqueeze", [state, g.const([1], "ax", np.int64)]),
        ],
    )
    slow = g.op("Add", [driven, carry])
    last = g.op(
        "Squeeze",
        [
            g.op(
                "Slice",
                [
                    slow,
                    g.const([-1], "s", np.int64),
                    g.const([2**62], "e", np.int64),
                    g.const([1], "ax", np.int64),
                ],
            ),
            g.const([1], "ax", np.int64),
        ],
    )
    return slow, last


def _sixd_to_axis_angle(g: _Graph, sixd: str) -> str:
    """``[..., 6]`` (two matrix columns) to axis-angle ``[..., 3]`` via Shepperd's quaternion."""
    eps = g.const(1e-8)
    a = g.slice_last(sixd, 0, 3)
    b = g.slice_last(sixd, 3, 6)

    def normalise(v: str) -> str:
        norm = g.op(
            "Sqrt", [g.op("ReduceSum", [g.op("Mul", [v, v]), g.const([-1], "ax", np.int64)], keepdims=1)]
        )
        return g.op("Div", [v, g.op("Max", [norm, eps])])

    x = normalise(a)
    dot = g.op("ReduceSum", [g.op("Mul", [x, b]), g.const([-1], "ax", np.int64)], keepdims=1)
    y = normalise(g.op("Sub", [b, g.op("Mul", [dot, x])]))
    i1 = g.const([1, 2, 0], "i1", np.int64)
    i2 = g.const([2, 0, 1], "i2", np.int64)
    z = g.op(
        "Sub",
        [
            g.op("Mul", [g.op("Gather", [x, i1], axis=-1), g.op("Gather", [y, i2], axis=-1)]),
            g.op("Mul", [g.op("Gather", [x, i2], axis=-1), g.op("Gather", [y, i1], axis=-1)]),
        ],
    )
    cols = [g.op("Unsqueeze", [v, g.const([-1], "ax", np.int64)]) for v in (x, y, z)]
    mat = g.op("Concat", cols, axis=-1)  # [..., 3 rows, 3 cols]
    flat = g.op("Reshape", [mat, g.const([0, 0, 0, 9], "shape", np.int64)])
    pick_a, pick_c = quat_pick_matrix()
    kmat = g.op("Add", [g.op("MatMul", [flat, g.const(pick_a, "pick")]), g.const(pick_c, "pickc")])
    diag = g.op("Gather", [kmat, g.const([0, 5, 10, 15], "diag", np.int64)], axis=-1)
    best = g.op("ArgMax", [diag], axis=-1, keepdims=1)
    onehot = g.op("OneHot", [best, g.const(4, "depth", np.int64), g.const([0.0, 1.0], "vals")], axis=-1)
    k4 = g.op("Reshape", [kmat, g.const([0, 0, 0, 4, 4], "shape", np.int64)])
    q = g.op("Squeeze", [g.op("MatMul", [onehot, k4]), g.const([-2], "ax", np.int64)])
    q = normalise(q)
    w = g.slice_last(q, 0, 1)
    sign = g.op(
        "Sub",
        [
            g.op("Mul", [g.op("Cast", [g.op("GreaterOrEqual", [w, g.const(0.0)])], to=FLOAT), g.const(2.0)]),
            g.const(1.0),
        ],
    )
    w = g.op("Mul", [w, sign])
    v = g.op("Mul", [g.slice_last(q, 1, 4), sign])
    s = g.op("Sqrt", [g.op("ReduceSum", [g.op("Mul", [v, v]), g.const([-1], "ax", np.int64)], keepdims=1)])
    # atan2(s, w) for s, w >= 0 without Atan2: pick the well-conditioned ratio.
    half_pi = g.const(np.pi / 2)
    small = g.op("Atan", [g.op("Div", [s, g.op("Max", [w, eps])])])
    large = g.op("Sub", [half_pi, g.op("Atan", [g.op("Div", [w, g.op("Max", [s, eps])])])])
    half_angle = g.op("Where", [g.op("GreaterOrEqual", [w, s]), small, large])
    scale = g.op(
        "Where",
        [
            g.op("Greater", [s, g.const(1e-6)]),
            g.op("Div", [g.op("Mul", [half_angle, g.const(2.0)]), g.op("Max", [s, eps])]),
            g.op("Div", [g.const(2.0), g.op("Max", [w, eps])]),
        ],
    )
    return g.op("Mul", [v, scale])


def _encode(g: _Graph, w: Mapping[str, str], cond: str) -> str:
    enc = g.op("Relu", [g.dense(cond, w["enc1_w"], w["enc1_b"])])
    enc = g.op("Relu", [g.dense(enc, w["enc2_w"], w["enc2_b"])])
    return g.dense(enc, w["l1_wx"], w["l1_b"])


def _scan(g: _Graph, body: onnx.GraphProto, state_names: list[str], scans: list[str], n_scan_out: int):
    scan_out = g.op(
        "Scan",
        [f"state_in_{n}" for n in state_names] + scans,
        n_out=len(state_names) + n_scan_out,
        body=body,
        num_scan_inputs=len(scans),
        scan_input_axes=[1] * len(scans),
        scan_output_axes=[1] * n_scan_out,
    )
    for n, out in zip(state_names, scan_out[: len(state_names)], strict=True):
        g.named("Identity", [out], f"state_out_{n}")
    return scan_out[len(state_names) :]


def _styled_frames(g, config, params, w, music, slow) -> tuple[str, str]:
    """The style-conditioned generator: raw pose features ``[B, T, P]`` and the clamped root ``[B, T, 2]``."""
    w = dict(w)
    w["vel_std"] = g.const(np.asarray(params["pose_std"][POSE_DIM - 2 :], np.float32), "vel_std")
    w["vel_mean"] = g.const(np.asarray(params["pose_mean"][POSE_DIM - 2 :], np.float32), "vel_mean")
    g1x = _encode(g, w, g.op("Concat", [music, "style", slow], axis=-1))
    z_all, root_xz = _scan(g, _scan_body(config, w), ["h1", "c1", "h2", "c2", "pose", "root"], [g1x], 2)
    return g.op("Add", [g.op("Mul", [z_all, w["pose_std"]]), w["pose_mean"]]), root_xz


def _guided_frames(g, config, params, w, music, slow) -> tuple[str, str]:
    """The residual synthesizer: raw output features ``[B, T, P]``, the guide's root plus its correction."""
    mean = g.const(np.asarray(params["pose_mean"][:GUIDE_FEATURES], np.float32), "guide_mean")
    std = g.const(np.asarray(params["pose_std"][:GUIDE_FEATURES], np.float32), "guide_std")
    aa = g.op(
        "Reshape", [g.slice_last("guide", 0, 3 * N_JOINTS), g.const([0, 0, N_JOINTS, 3], "shape", np.int64)]
    )
    sixd = g.op("Reshape", [_axis_angle_to_sixd(g, aa), g.const([0, 0, 6 * N_JOINTS], "shape", np.int64)])
    feats = g.op("Concat", [sixd, g.slice_last("guide", 73, 74)], axis=-1)
    norm = g.op("Div", [g.op("Sub", [feats, mean]), std])
    guide_xz = g.op("Concat", [g.slice_last("guide", 72, 73), g.slice_last("guide", 74, 75)], axis=-1)
    guide = g.op("Concat", [norm, g.op("Mul", [guide_xz, g.const(0.0)])], axis=-1)
    junction = g.op(
        "Exp", [g.op("Mul", [g.op("Relu", ["junction"]), g.const(-1.0 / config.junction_time_s)])]
    )
    g1x = _encode(g, w, g.op("Concat", [music, norm, junction, slow], axis=-1))
    (z_all,) = _scan(g, _guided_scan_body(config, w), ["h1", "c1", "h2", "c2", "pose"], [g1x, guide], 1)
    feat = g.op("Add", [g.op("Mul", [z_all, w["pose_std"]]), w["pose_mean"]])
    return feat, g.op("Add", [guide_xz, g.slice_last(feat, GUIDE_FEATURES, POSE_DIM)])


def build_model(
    config: ModelConfig, params: Mapping[str, np.ndarray], metadata: Mapping[str, str]
) -> onnx.ModelProto:
    """The chunk model, checked by ``onnx.checker``.

    Parameters
    ----------
    config : sizes and constants
    params : weights and normalisation constants laid out by :func:`~engines.network.config.param_shapes`
    metadata : ``metadata_props`` (see :meth:`engines.base.ModelSpec.to_metadata`)
    """
    shapes = param_shapes(config)
    for key, shape in shapes.items():
        if key not in params:
            raise ParameterError(f"model weights lack {key!r}")
        if tuple(np.shape(params[key])) != shape:
            raise ParameterError(f"weight {key!r} must be {shape}, got {np.shape(params[key])}")
    g = _Graph("")
    w = {k: g.const(np.asarray(params[k], dtype=np.float32), k) for k in shapes}
    inputs = [helper.make_tensor_value_info(name, FLOAT, ["B", "T", width]) for name, width in config.inputs]
    for name, shape in config.state_shapes.items():
        inputs.append(helper.make_tensor_value_info(f"state_in_{name}", FLOAT, ["B", *shape]))

    music = g.op("Div", [g.op("Sub", ["music", w["music_mean"]]), w["music_std"]])
    slow, slow_last = _slow_latent(g, config, "latent", "state_in_latent")
    if config.guided:
        feat, root_xz = _guided_frames(g, config, params, w, music, slow)
    else:
        feat, root_xz = _styled_frames(g, config, params, w, music, slow)
    g.named("Identity", [slow_last], "state_out_latent")

    sixd = g.op(
        "Reshape", [g.slice_last(feat, 0, 6 * N_JOINTS), g.const([0, 0, N_JOINTS, 6], "shape", np.int64)]
    )
    aa = g.op("Reshape", [_sixd_to_axis_angle(g, sixd), g.const([0, 0, 3 * N_JOINTS], "shape", np.int64)])
    height = g.slice_last(feat, 6 * N_JOINTS, 6 * N_JOINTS + 1)
    root = g.op("Concat", [g.slice_last(root_xz, 0, 1), height, g.slice_last(root_xz, 1, 2)], axis=-1)
    g.named("Concat", [aa, root], "poses", axis=-1)

    outputs = [helper.make_tensor_value_info("poses", FLOAT, ["B", "T", 75])]
    for name, shape in config.state_shapes.items():
        outputs.append(helper.make_tensor_value_info(f"state_out_{name}", FLOAT, ["B", *shape]))
    graph = helper.make_graph(g.nodes, "choreo_dance_chunk", inputs, outputs, initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="choreo")
    model.ir_version = 8
    helper.set_model_props(model, dict(metadata))
    onnx.checker.check_model(model, full_check=True)
    return model


def sixd_to_axis_angle_model() -> onnx.ModelProto:
    """A graph of the 6D to axis-angle step alone, ``x [A, B, J, 6] -> y [A, B, J, 3]`` (for tests)."""
    g = _Graph("")
    g.named("Identity", [_sixd_to_axis_angle(g, "x")], "y")
    graph = helper.make_graph(
        g.nodes,
        "sixd_to_axis_angle",
        [helper.make_tensor_value_info("x", FLOAT, ["A", "B", "J", 6])],
        [helper.make_tensor_value_info("y", FLOAT, ["A", "B", "J", 3])],
        initializer=g.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    return model
