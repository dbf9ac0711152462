"""FP16 and INT8 versions of the ONNX chunk model, made on the CPU.

TensorRT 11 builds only strongly typed networks: the precision of every
tensor is whatever the ONNX graph says. So the precision is written into the
graph here, and the same files run in ONNX Runtime on the CPU to measure what
each precision costs in accuracy.

* **fp16** (:func:`to_mixed_fp16`): the large matrix products (weights of at
  least 32 x 32), inside the ``Scan`` / ``Loop`` bodies and outside, run in fp16;
  the recurrent state, the gates, the cell update, the root integration and the
  6D to axis-angle conversion stay fp32. Converting whole loop bodies to fp16
  was tried first: on real songs with the trained model the autoregressive
  feedback piled the rounding up to 9 degrees of joint rotation at the 99th
  percentile. Casts mark every boundary; inputs and outputs stay float32.
* **int8** (:func:`quantize_int8`): post-training static quantization with
  Q/DQ nodes (ONNX Runtime's ``quantize_static``, QDQ format, symmetric int8,
  per-channel weights, percentile calibration) of the large matrix products
  outside the recurrent loop (the encoders, batched over all frames of a
  chunk); the products inside the loop then go to fp16 as above. Quantizing
  inside the loop is available (``quantize_loops=True``): a loop body's tensors
  are not graph outputs, so ONNX Runtime's calibrator cannot see them, and the
  body is cut out as a model of its own, calibrated on the per-frame values it
  really receives on the calibration songs (found by stepping it frame by
  frame), quantized, and put back in the loop. It is off by default because the
  feedback of int8-rounded poses costs far more accuracy (measured numbers in
  ``quantize_int8``).

:func:`precision_model` gives the ONNX file of a precision under the engine
cache. fp16 is converted on first use (it needs only the graph). int8 needs
songs to calibrate on, which engines know nothing of: it is converted offline
by ``choreo engines build --precision int8`` (:mod:`choreo.enginetools`) into
the file :func:`converted_model_path` names, and only looked up here.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from choreo.errors import EngineError, ParameterError
from choreo.files import atomic_path
from engines.settings import EngineSettings

__all__ = [
    "CONVERSION_VERSION",
    "converted_model_path",
    "file_sha256",
    "heavy_matmuls",
    "precision_model",
    "quantize_int8",
    "save_model",
    "to_mixed_fp16",
]

_FLOAT, _HALF = TensorProto.FLOAT, TensorProto.FLOAT16
_LOOPS = ("Scan", "Loop")
CONVERSION_VERSION = 3
"""Bumped whenever a conversion changes, so cached converted models are made again."""
HEAVY_MIN_DIM = 32
"""A matrix product is worth lower precision when both weight dimensions reach this."""


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def converted_model_path(source_sha: str, precision: str, settings: EngineSettings) -> Path:
    """Where the ``precision`` conversion of the model with SHA-256 ``source_sha`` is cached.

    int8 files are also keyed by the calibration set (the hash of
    ``settings.calibration_dir``'s ``MANIFEST.tsv``), so another set makes another file.

    Raises
    ------
    ParameterError
        For int8 without a calibration folder, or for an unknown precision.
    """
    out_dir = Path(settings.cache_dir) / "converted"
    if precision == "fp16":
        return out_dir / f"{source_sha[:16]}-fp16-v{CONVERSION_VERSION}.onnx"
    if precision == "int8":
        if settings.calibration_dir is None:
            raise ParameterError(
                "int8 needs a calibration set: set CHOREO_ENGINE_CALIBRATION_DIR (or --calibration-dir) "
                "to a folder of songs with a MANIFEST.tsv"
            )
        manifest = Path(settings.calibration_dir) / "MANIFEST.tsv"
        if not manifest.is_file():
            raise ParameterError(f"calibration folder {settings.calibration_dir} has no MANIFEST.tsv")
        calib_key = file_sha256(manifest)
        return out_dir / f"{source_sha[:16]}-int8-{calib_key[:12]}-v{CONVERSION_VERSION}.onnx"
    raise ParameterError(f"precision must be fp32, fp16 or int8, got {precision!r}")


def precision_model(model_path: Path, precision: str, settings: EngineSettings) -> tuple[Path, str]:
    """The ONNX file of ``precision`` and its SHA-256; converts (and caches) fp16 when needed.

    Raises
    ------
    EngineError
        When the model file is missing, or the int8 file was not converted yet
        (``choreo engines build --precision int8`` converts it).
    ParameterError
        See :func:`converted_model_path`.
    """
    model_path = Path(model_path)
    if not model_path.is_file():
        raise EngineError(f"model file not found: {model_path}")
    source_sha = file_sha256(model_path)
    if precision == "fp32":
        return model_path, source_sha
    target = converted_model_path(source_sha, precision, settings)
    if not target.is_file():
        if precision != "fp16":
            raise EngineError(
                f"no {precision} conversion of {model_path} for the calibration set in "
                f"{settings.calibration_dir}: run `choreo engines build --precision {precision}` first"
            )
        save_model(to_mixed_fp16(onnx.load(str(model_path))), target)
    return target, file_sha256(target)


def save_model(model: onnx.ModelProto, target: Path) -> None:
    """Write a converted model atomically (other workers may be reading the cache)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as tmp:
        onnx.save(model, str(tmp))


def _body(node: onnx.NodeProto) -> onnx.GraphProto:
    for attr in node.attribute:
        if attr.name == "body":
            return attr.g
    raise EngineError(f"{node.op_type} node {node.name!r} has no body")


def _name_nodes(graph: onnx.GraphProto, prefix: str = "node") -> None:
    """Give every node a unique name (quantization selects nodes by name)."""
    seen: set[str] = set()
    for i, node in enumerate(graph.node):
        if not node.name or node.name in seen:
            node.name = f"{prefix}_{node.op_type}_{i}"
        seen.add(node.name)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                _name_nodes(attr.g, f"{node.name}/body")


def _graph_reads(graph: onnx.GraphProto) -> set[str]:
    """Every tensor name read by the graph's nodes, their subgraphs included."""
    names = set()
    for node in graph.node:
        names.update(node.input)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                names |= _graph_reads(attr.g)
    return names


def _drop_unused_initializers(graph: onnx.GraphProto) -> None:
    used = _graph_reads(graph) | {o.name for o in graph.output}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)


def heavy_matmuls(graph: onnx.GraphProto, weights: Mapping[str, onnx.TensorProto]) -> list[str]:
    """Names of the MatMul / Gemm nodes of ``graph`` whose weight is a large constant matrix."""
    names = []
    for node in graph.node:
        if node.op_type in ("MatMul", "Gemm") and len(node.input) > 1 and node.input[1] in weights:
            dims = list(weights[node.input[1]].dims)
            if len(dims) == 2 and min(dims) >= HEAVY_MIN_DIM:
                names.append(node.name)
    return names


# --- fp16 -------------------------------------------------------------------------------------------------


class _Fp16Pass:
    def __init__(self, model: onnx.ModelProto) -> None:
        self.model = model
        self.graph = model.graph
        self.inits = {i.name: i for i in self.graph.initializer}
        self.half_copies: dict[str, str] = {}
        self.n = 0

    def fresh(self, hint: str) -> str:
        self.n += 1
        return f"{hint}__fp16_{self.n}"

    def half_init(self, name: str, source: onnx.TensorProto) -> str:
        """An fp16 twin of a float32 initializer, kept in the top graph (made once)."""
        if name not in self.half_copies:
            array = numpy_helper.to_array(source).astype(np.float16)
            twin = f"{name}__fp16"
            self.graph.initializer.append(numpy_helper.from_array(array, twin))
            self.half_copies[name] = twin
        return self.half_copies[name]

    def cast(self, src: str, dst: str, to: int) -> onnx.NodeProto:
        return helper.make_node("Cast", [src], [dst], to=to, name=self.fresh("cast"))

    def run(self) -> onnx.ModelProto:
        _name_nodes(self.graph)
        self._convert(self.graph, self.inits)
        del self.graph.value_info[:]
        _drop_unused_initializers(self.graph)
        return self.model

    def _convert(self, graph: onnx.GraphProto, weights: Mapping[str, onnx.TensorProto]) -> None:
        """Put the graph's large products in fp16, then do the same inside its loop bodies."""
        heavy = set(heavy_matmuls(graph, weights))
        new_nodes: list[onnx.NodeProto] = []
        for node in graph.node:
            if node.name in heavy:
                new_nodes.extend(self._matmul(node, weights))
                continue
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    body_weights = {**weights, **{i.name: i for i in attr.g.initializer}}
                    self._convert(attr.g, body_weights)
                    del attr.g.value_info[:]
            new_nodes.append(node)
        del graph.node[:]
        graph.node.extend(new_nodes)

    def _matmul(self, node: onnx.NodeProto, weights: Mapping[str, onnx.TensorProto]) -> list[onnx.NodeProto]:
        x16 = self.fresh(node.input[0])
        y16 = self.fresh(node.output[0])
        inputs = [x16, self.half_init(node.input[1], weights[node.input[1]])]
        if len(node.input) > 2 and node.input[2]:
            bias = node.input[2]
            if bias in weights:
                inputs.append(self.half_init(bias, weights[bias]))
            else:
                inputs.append(self.fresh(bias))
        half = helper.make_node(node.op_type, inputs, [y16], name=node.name)
        half.attribute.extend(node.attribute)
        nodes = [self.cast(node.input[0], x16, _HALF)]
        if len(inputs) > 2 and inputs[2] not in self.half_copies.values():
            nodes.append(self.cast(node.input[2], inputs[2], _HALF))
        return [*nodes, half, self.cast(y16, node.output[0], _FLOAT)]


def to_mixed_fp16(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with its large matrix products in fp16, in loop bodies and outside (a converted copy).

    Each product reads an fp16 copy of its activation and weights and is cast
    back to fp32; everything else, the recurrent state included, stays fp32.
    Inputs, outputs and state are float32, so every backend and the batcher
    handle it exactly like the fp32 model.
    """
    converted = onnx.ModelProto()
    converted.CopyFrom(model)
    converted = _Fp16Pass(converted).run()
    onnx.checker.check_model(converted)
    return converted


# --- int8 -------------------------------------------------------------------------------------------------


def _quantize(
    model: onnx.ModelProto, nodes: list[str], feeds: list[dict[str, np.ndarray]], method: str
) -> onnx.ModelProto:
    """``quantize_static`` in QDQ format (symmetric int8, per-channel weights) on the named nodes."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    class _Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self._it = iter(feeds)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self._it, None)

        def __len__(self) -> int:
            return len(feeds)

        def set_range(self, start_index: int, end_index: int) -> None:
            self._it = iter(feeds[start_index:end_index])

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.onnx", Path(tmp) / "out.onnx"
        onnx.save(model, str(src))
        quantize_static(
            str(src),
            str(dst),
            _Reader(),
            quant_format=QuantFormat.QDQ,
            activation_type=QuantType.QInt8,
            weight_type=QuantType.QInt8,
            per_channel=True,
            nodes_to_quantize=nodes,
            calibrate_method={"minmax": CalibrationMethod.MinMax, "percentile": CalibrationMethod.Percentile}[
                method
            ],
            extra_options={
                "ActivationSymmetric": True,
                "WeightSymmetric": True,
                "CalibStridedMinMax": 1,
            },
        )
        return onnx.load(str(dst))


def _without(nodes: list[str], graph: onnx.GraphProto, weights: set[str]) -> list[str]:
    """``nodes`` less those whose weight input is one of ``weights``."""
    by_name = {n.name: n for n in graph.node}
    return [name for name in nodes if by_name[name].input[1] not in weights]


def _body_model(model: onnx.ModelProto, loop: onnx.NodeProto) -> onnx.ModelProto:
    """A loop body as a model of its own, with the outer weights it reads as its initializers."""
    body = onnx.GraphProto()
    body.CopyFrom(_body(loop))
    outer = {i.name: i for i in model.graph.initializer}
    local = {i.name for i in body.initializer} | {i.name for i in body.input}
    produced = {o for n in body.node for o in n.output}
    for node in body.node:
        for name in node.input:
            if name and name not in local and name not in produced:
                if name not in outer:
                    raise EngineError(f"int8: loop body reads outer value {name!r}, not supported")
                body.initializer.append(outer[name])
                local.add(name)
    standalone = helper.make_model(body, opset_imports=model.opset_import)
    standalone.ir_version = model.ir_version
    return standalone


def _scan_step_feeds(
    model: onnx.ModelProto, scan: onnx.NodeProto, chunks: list[dict[str, np.ndarray]], rows_per_item: int
) -> list[dict[str, np.ndarray]]:
    """The values a Scan body receives, frame by frame, on the calibration chunks.

    The chunk model is run once with the Scan's inputs exposed as outputs; the
    body is then stepped over the frames. Rows of many frames are stacked on the
    batch axis (the body treats rows independently) into calibration items.
    """
    import onnxruntime as ort

    body = _body(scan)
    attrs = {a.name: helper.get_attribute_value(a) for a in scan.attribute}
    n_scan = int(attrs["num_scan_inputs"])
    n_state = len(scan.input) - n_scan
    axes = list(attrs.get("scan_input_axes", [0] * n_scan))
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    known = {o.name for o in probe.graph.output}
    for name in scan.input:
        if name not in known:
            probe.graph.output.append(helper.make_empty_tensor_value_info(name))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    chunk_session = ort.InferenceSession(
        probe.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    body_session = ort.InferenceSession(
        _body_model(model, scan).SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    body_in = [i.name for i in body.input]
    body_out = [o.name for o in body.output]
    rows: dict[str, list[np.ndarray]] = {name: [] for name in body_in}
    for chunk in chunks:
        values = dict(zip([o.name for o in probe.graph.output], chunk_session.run(None, chunk), strict=True))
        states = [values[name] for name in scan.input[:n_state]]
        xs = [values[name] for name in scan.input[n_state:]]
        for t in range(xs[0].shape[axes[0]]):
            step = dict(zip(body_in[:n_state], states, strict=True))
            for name, x, axis in zip(body_in[n_state:], xs, axes, strict=True):
                step[name] = np.take(x, t, axis=axis)
            for name, value in step.items():
                rows[name].append(value)
            states = body_session.run(body_out[:n_state], step)
    stacked = {name: np.concatenate(parts, axis=0) for name, parts in rows.items()}
    total = next(iter(stacked.values())).shape[0]
    return [
        {name: value[lo : lo + rows_per_item] for name, value in stacked.items()}
        for lo in range(0, total, rows_per_item)
    ]


def quantize_int8(
    model: onnx.ModelProto,
    chunks: Iterable[Mapping[str, np.ndarray]],
    *,
    rows_per_item: int = 512,
    method: str = "percentile",
    keep_fp32: Iterable[str] = (),
    quantize_loops: bool = False,
) -> onnx.ModelProto:
    """Post-training INT8 quantization (Q/DQ) calibrated on real chunks.

    Parameters
    ----------
    model : the fp32 chunk model
    chunks : calibration feeds for the whole chunk model (conditioning and ``state_in_*``),
        taken from real songs of different tempi and styles (see :mod:`choreo.enginetools.calibration`)
    rows_per_item : per-frame rows stacked into one calibration item of a loop body
    method : activation range calibration, ``"minmax"`` or ``"percentile"`` (99.999 %)
    keep_fp32 : names of weight initializers whose products stay unquantized
    quantize_loops : also quantize the products inside ``Scan`` bodies. Off by default:
        on real songs with the trained model, int8 inside the recurrent loop cost about
        1 degree of joint rotation on average (20 degrees at the 99th percentile) in the
        first minute, against 0.07 (0.9) with only the products outside the loop
    """
    chunk_list = [dict(c) for c in chunks]
    if not chunk_list:
        raise EngineError("int8 quantization needs at least one calibration chunk")
    keep = set(keep_fp32)
    base = onnx.ModelProto()
    base.CopyFrom(model)
    _name_nodes(base.graph)
    inits = {i.name: i for i in base.graph.initializer}
    loops = [n for n in base.graph.node if n.op_type in _LOOPS] if quantize_loops else []
    quantized_bodies = {}
    for loop in loops:
        if loop.op_type != "Scan":
            raise EngineError("int8 quantization of Loop bodies is not supported; export the model with Scan")
        body_model = _body_model(base, loop)
        body_inits = {i.name: i for i in body_model.graph.initializer}
        nodes = _without(heavy_matmuls(body_model.graph, body_inits), body_model.graph, keep)
        if nodes:
            feeds = _scan_step_feeds(base, loop, chunk_list, rows_per_item)
            quantized_bodies[loop.name] = _quantize(body_model, nodes, feeds, method).graph
    outer_nodes = _without(heavy_matmuls(base.graph, inits), base.graph, keep)
    result = _quantize(base, outer_nodes, chunk_list, method) if outer_nodes else base
    for node in result.graph.node:
        if node.name in quantized_bodies:
            for attr in node.attribute:
                if attr.name == "body":
                    attr.g.CopyFrom(quantized_bodies[node.name])
    # Weights the bodies now carry themselves (quantized) may be unused outside.
    _drop_unused_initializers(result.graph)
    del result.metadata_props[:]
    result.metadata_props.extend(model.metadata_props)
    onnx.checker.check_model(result)
    return result
