"""Run an ONNX chunk graph with torch, traced per input shape into a flat program.

The torch backends compute exactly what the ONNX file says, from its own
initializers, so there is one model file and no second implementation to keep
in step. For one input shape ``(B, T)`` the graph is traced once:

* everything that depends only on shapes and constants (trip counts, index
  ranges, the latent filter matrix of a chunk length) is computed on the CPU
  during the trace and frozen into constants on the device;
* ``Loop`` and ``Scan`` are unrolled over the chunk's frames, so the result is a
  flat list of device operations with no host synchronisation in it, which a
  CUDA graph can capture whole;
* the products of activations with large weight matrices (the bulk of the
  arithmetic) can run in fp16 (``matmul_dtype``), each cast back to fp32; the
  recurrent state, the gate nonlinearities, the cell update and the root
  integration stay fp32, so rounding does not pile up over a whole song
  (an all-fp16 loop body drifted by 9 degrees at the 99th percentile on real
  songs with the trained model).

Only the operators the shipped model and its test models use are supported; an
unknown operator is an :class:`~choreo.errors.EngineError` naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from choreo.errors import EngineError

__all__ = ["HEAVY_MIN_DIM", "FlatProgram", "SUPPORTED_OPS", "trace_program"]

HEAVY_MIN_DIM = 32
"""A constant matrix whose dimensions both reach this makes a product worth lower precision."""

_ONNX_TO_TORCH: dict[int, str] = {
    onnx.TensorProto.FLOAT: "float32",
    onnx.TensorProto.FLOAT16: "float16",
    onnx.TensorProto.DOUBLE: "float64",
    onnx.TensorProto.INT64: "int64",
    onnx.TensorProto.INT32: "int32",
    onnx.TensorProto.BOOL: "bool",
}

# Input positions that are shapes, axes or indices: they must be known at trace time.
_STATIC_ARGS: dict[str, set[int]] = {
    "Reshape": {1},
    "Slice": {1, 2, 3, 4},
    "Split": {1},
    "Unsqueeze": {1},
    "Squeeze": {1},
    "ReduceSum": {1},
    "ReduceMean": {1},
    "ReduceMax": {1},
    "OneHot": {1, 2},
    "Tile": {1},
    "Expand": {1},
    "ConstantOfShape": {0},
    "Range": {0, 1, 2},
}


def _attrs(node: onnx.NodeProto) -> dict[str, Any]:
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _flat(t: Any) -> list[Any]:
    """A constant argument flattened to Python numbers (plain Python, so torch.compile traces it)."""
    if isinstance(t, list | tuple):
        return [v for item in t for v in _flat(item)]
    if isinstance(t, int | float | bool):
        return [t]
    return _flat(t.tolist())  # a CPU tensor, in the shape computations done while tracing


def _ints(t: Any) -> list[int]:
    """A shape, axes or index argument as Python ints (from a list, a scalar or a CPU tensor)."""
    return [int(v) for v in _flat(t)]


def _floats(t: Any) -> list[float]:
    return [float(v) for v in _flat(t)]


@dataclass
class _Val:
    """A traced value: a CPU constant (``slot is None``) or a device tensor in a slot."""

    t: Any
    slot: int | None = None
    init_key: str | None = None


def _given(v: _Val | None, node: onnx.NodeProto) -> _Val:
    """An input the operator needs: ONNX leaves optional inputs out by an empty name."""
    if v is None:
        raise EngineError(f"{node.op_type} {node.name!r}: a required input is missing")
    return v


@dataclass
class _Step:
    fn: Callable[..., Any]
    args: list[tuple[str, Any]]
    outs: list[int]
    free: list[int] = field(default_factory=list)


class FlatProgram:
    """The chunk graph for one input shape as a flat list of torch operations.

    Call it with the graph's inputs (device tensors of the traced shapes) to get
    its outputs; it never synchronises with the host, so it can be captured in a
    CUDA graph.
    """

    def __init__(
        self, steps: list[_Step], inputs: dict[str, int], outputs: dict[str, _Val], n_slots: int
    ) -> None:
        self.steps = steps
        self.inputs = inputs
        self.outputs = outputs
        self.n_slots = n_slots
        keep = {v.slot for v in outputs.values() if v.slot is not None}
        last: dict[int, int] = {}
        for i, step in enumerate(steps):
            for kind, ref in step.args:
                if kind == "slot":
                    last[ref] = i
        for slot, i in last.items():
            if slot not in keep:
                steps[i].free.append(slot)

    def __call__(self, feeds: Mapping[str, Any]) -> dict[str, Any]:
        # A dict, not a list: torch.compile traces dict stores but not list item stores.
        slots: dict[int, Any] = {}
        for name, slot in self.inputs.items():
            slots[slot] = feeds[name]
        for step in self.steps:
            args = [slots[ref] if kind == "slot" else ref for kind, ref in step.args]
            result = step.fn(*args)
            if len(step.outs) == 1:
                slots[step.outs[0]] = result
            else:
                for slot, value in zip(step.outs, result):  # noqa: B905 (traced by torch.compile)
                    slots[slot] = value
            for slot in step.free:
                del slots[slot]
        return {name: slots[v.slot] if v.slot is not None else v.t for name, v in self.outputs.items()}


class _Tracer:
    def __init__(
        self,
        device: Any,
        inner_dtype: Any,
        *,
        compile_bodies: bool = False,
        uploads: dict[tuple[str, Any], Any] | None = None,
        compiled: dict[str, Callable[..., Any]] | None = None,
        matmul_dtype: Any = None,
    ) -> None:
        import torch

        self.torch = torch
        self.device = device
        self.inner_dtype = inner_dtype
        self.matmul_dtype = matmul_dtype
        self.compile_bodies = compile_bodies
        self.steps: list[_Step] = []
        self.n_slots = 0
        self.uploads: dict[tuple[str, Any], Any] = uploads if uploads is not None else {}
        self.compiled: dict[str, Callable[..., Any]] = compiled if compiled is not None else {}
        self.casts: dict[tuple[int, Any], _Val] = {}

    def new_slot(self) -> int:
        self.n_slots += 1
        return self.n_slots - 1

    def record(self, fn: Callable[..., Any], args: list[tuple[str, Any]], values: list[Any]) -> list[_Val]:
        outs_t = fn(*values)
        many = isinstance(outs_t, tuple | list)
        outs = list(outs_t) if many else [outs_t]
        slots = [self.new_slot() for _ in outs]
        self.steps.append(_Step(fn, args, slots))
        return [_Val(t, slot) for t, slot in zip(outs, slots, strict=True)]

    def as_device(self, v: _Val, float_dtype: Any) -> tuple[tuple[str, Any], Any]:
        """An argument for a device operation: a slot (cast if needed) or an uploaded constant."""
        if v.slot is None:
            key = (v.init_key, float_dtype) if v.init_key else None
            if key is not None and key in self.uploads:
                t = self.uploads[key]
            else:
                dtype = float_dtype if v.t.is_floating_point() else v.t.dtype
                t = v.t.to(device=self.device, dtype=dtype)
                if key is not None:
                    self.uploads[key] = t
            return ("const", t), t
        if v.t.is_floating_point() and v.t.dtype != float_dtype:
            key2 = (v.slot, float_dtype)
            if key2 not in self.casts:
                (cast,) = self.record(lambda x, d=float_dtype: x.to(d), [("slot", v.slot)], [v.t])
                self.casts[key2] = cast
            v = self.casts[key2]
        return ("slot", v.slot), v.t

    def trace(self, graph: onnx.GraphProto, env: dict[str, _Val], float_dtype: Any, scope: str) -> None:
        for init in graph.initializer:
            env[init.name] = _Val(
                self.torch.from_numpy(numpy_helper.to_array(init).copy()), None, scope + init.name
            )
        for node in graph.node:
            vals = [env[name] if name else None for name in node.input]
            if node.op_type == "Loop":
                outs = self.loop(node, vals, env, scope)
            elif node.op_type == "Scan":
                outs = self.scan(node, vals, env, scope)
            else:
                outs = self.plain(node, vals, float_dtype)
            for name, v in zip(node.output, outs, strict=False):
                if name:
                    env[name] = v

    def plain(self, node: onnx.NodeProto, vals: list[_Val | None], float_dtype: Any) -> list[_Val]:
        op = node.op_type
        if op not in _OPS:
            raise EngineError(
                f"ONNX operator {op!r} (node {node.name!r}) is not supported by the torch backend"
            )
        attrs = _attrs(node)
        if op == "Shape":
            return [_Val(self.torch.tensor(list(_given(vals[0], node).t.shape), dtype=self.torch.int64))]
        if op == "Constant":
            value = numpy_helper.to_array(attrs["value"]).copy()
            return [_Val(self.torch.from_numpy(np.asarray(value)), None, None)]
        static = all(v is None or v.slot is None for v in vals)
        if not static and self._heavy_matmul(op, vals, float_dtype):
            return self.low_precision_matmul(op, attrs, vals, float_dtype)
        if static:
            fn = _OPS[op](attrs, self.torch.float32)
            out = fn(*[v.t if v is not None else None for v in vals])
            outs = list(out) if isinstance(out, tuple | list) else [out]
            return [_Val(t) for t in outs]
        fixed = _STATIC_ARGS.get(op, set())
        args: list[tuple[str, Any]] = []
        values: list[Any] = []
        for i, v in enumerate(vals):
            if v is None:
                args.append(("const", None))
                values.append(None)
            elif i in fixed:
                if v.slot is not None:
                    raise EngineError(f"{op} node {node.name!r} needs input {i} known before the run")
                # Python values: nothing in the program touches the host at run time.
                args.append(("const", v.t.tolist()))
                values.append(v.t.tolist())
            elif op == "Gather" and i == 1 and v.slot is None and v.t.dim() == 0:
                args.append(("const", int(v.t)))
                values.append(int(v.t))
            else:
                arg, t = self.as_device(v, float_dtype)
                args.append(arg)
                values.append(t)
        return self.record(_OPS[op](attrs, float_dtype), args, values)

    def _heavy_matmul(self, op: str, vals: list[_Val | None], float_dtype: Any) -> bool:
        """A product of an activation and a large constant matrix, when products run in lower precision."""
        if op not in ("MatMul", "Gemm") or self.matmul_dtype in (None, float_dtype) or len(vals) < 2:
            return False
        x, w = vals[0], vals[1]
        return (
            x is not None
            and x.slot is not None
            and w is not None
            and w.slot is None
            and w.t.dim() == 2
            and min(w.t.shape) >= HEAVY_MIN_DIM
        )

    def low_precision_matmul(
        self, op: str, attrs: dict[str, Any], vals: list[_Val | None], float_dtype: Any
    ) -> list[_Val]:
        """The product in ``matmul_dtype`` (tensor cores), its result back in ``float_dtype``.

        Only the large products lose precision; the recurrent state, the gates'
        nonlinearities and the root integration stay in fp32, so errors do not
        pile up over a song as they would with the whole loop body in fp16.
        """
        args: list[tuple[str, Any]] = []
        values: list[Any] = []
        for v in vals:
            if v is None:
                args.append(("const", None))
                values.append(None)
            else:
                arg, t = self.as_device(v, self.matmul_dtype)
                args.append(arg)
                values.append(t)
        product = _OPS[op](attrs, self.matmul_dtype)
        return self.record(lambda *a, f=product, d=float_dtype: f(*a).to(d), args, values)

    def _body_env(self, env: dict[str, _Val]) -> dict[str, _Val]:
        return dict(env)

    def loop(
        self, node: onnx.NodeProto, vals: list[_Val | None], env: dict[str, _Val], scope: str
    ) -> list[_Val]:
        torch = self.torch
        attrs = _attrs(node)
        body: onnx.GraphProto = attrs["body"]
        trip, cond = vals[0], vals[1]
        if trip is None or trip.slot is not None:
            raise EngineError(f"Loop {node.name!r} needs a trip count known from the input shapes")
        if cond is not None and (cond.slot is not None or not bool(cond.t)):
            raise EngineError(f"Loop {node.name!r} needs a constant true start condition")
        carried = [_given(v, node) for v in vals[2:]]
        n_carried = len(carried)
        scans: list[list[_Val]] = [[] for _ in range(len(body.output) - 1 - n_carried)]
        body_scope = f"{scope}{node.name or id(node)}/"
        for i in range(int(trip.t)):
            benv = self._body_env(env)
            benv[body.input[0].name] = _Val(torch.tensor(i, dtype=torch.int64))
            benv[body.input[1].name] = _Val(torch.tensor(True))
            for inp, v in zip(body.input[2:], carried, strict=True):
                benv[inp.name] = v
            self.trace(body, benv, self.inner_dtype, body_scope)
            outs = [benv[o.name] for o in body.output]
            if outs[0].slot is not None:
                raise EngineError(f"Loop {node.name!r}: a data-dependent stop condition is not supported")
            carried = outs[1 : 1 + n_carried]
            for j, v in enumerate(outs[1 + n_carried :]):
                scans[j].append(v)
            if not bool(outs[0].t):
                break
        return carried + [self.stack(s, 0) for s in scans]

    def scan(
        self, node: onnx.NodeProto, vals: list[_Val | None], env: dict[str, _Val], scope: str
    ) -> list[_Val]:
        attrs = _attrs(node)
        body: onnx.GraphProto = attrs["body"]
        n_scan_in = int(attrs["num_scan_inputs"])
        n_state = len(vals) - n_scan_in
        in_axes = list(attrs.get("scan_input_axes", [0] * n_scan_in))
        n_scan_out = len(body.output) - n_state
        out_axes = list(attrs.get("scan_output_axes", [0] * n_scan_out))
        if any(attrs.get("scan_input_directions", [])) or any(attrs.get("scan_output_directions", [])):
            raise EngineError(f"Scan {node.name!r}: reverse directions are not supported")
        states = [_given(v, node) for v in vals[:n_state]]
        xs = [_given(v, node) for v in vals[n_state:]]
        frames = int(xs[0].t.shape[in_axes[0]])
        scans: list[list[_Val]] = [[] for _ in range(n_scan_out)]
        body_scope = f"{scope}{node.name or id(node)}/"
        if self.compile_bodies:
            return self.scan_compiled(body, states, xs, in_axes, out_axes, env, body_scope)
        for t in range(frames):
            benv = self._body_env(env)
            for inp, v in zip(body.input[:n_state], states, strict=True):
                benv[inp.name] = v
            for inp, x, axis in zip(body.input[n_state:], xs, in_axes, strict=True):
                benv[inp.name] = self.select(x, axis, t)
            self.trace(body, benv, self.inner_dtype, body_scope)
            outs = [benv[o.name] for o in body.output]
            states = outs[:n_state]
            for j, v in enumerate(outs[n_state:]):
                scans[j].append(v)
        return states + [self.stack(s, axis) for s, axis in zip(scans, out_axes, strict=True)]

    def to_inner(self, v: _Val) -> _Val:
        """A dynamic float value in the loop-body dtype (a recorded cast when needed)."""
        if v.slot is None or not v.t.is_floating_point() or v.t.dtype == self.inner_dtype:
            return v
        arg, t = self.as_device(v, self.inner_dtype)
        return _Val(t, arg[1])

    def scan_compiled(
        self,
        body: onnx.GraphProto,
        states: list[_Val],
        xs: list[_Val],
        in_axes: list[int],
        out_axes: list[int],
        env: dict[str, _Val],
        body_scope: str,
    ) -> list[_Val]:
        """Trace the Scan body once as its own program, compile it, and call it once per frame.

        torch.compile fuses the body's elementwise work (gates, cell update, the
        root clamp) into a few kernels, so a frame costs a handful of launches
        instead of dozens; the body depends on no iteration counter, so one
        compiled function serves every frame.
        """
        torch = self.torch
        n_state = len(states)
        states = [self.to_inner(v) for v in states]
        local = {i.name for i in body.initializer} | {i.name for i in body.input}
        produced = {o for n in body.node for o in n.output}
        outer_dynamic = sorted(
            {
                name
                for n in body.node
                for name in n.input
                if name and name not in local and name not in produced and env[name].slot is not None
            }
        )
        example = [*states, *(self.frame(x, a, 0) for x, a in zip(xs, in_axes, strict=True))]
        example += [self.to_inner(env[name]) for name in outer_dynamic]
        names = [i.name for i in body.input] + outer_dynamic
        # A body that reads shapes bakes the batch size into its program: one per batch then.
        reads_shapes = any(n.op_type in ("Shape", "Size") for n in body.node)
        key = body_scope + (str([tuple(v.t.shape) for v in example]) if reads_shapes else "")
        if key not in self.compiled:
            sub = _Tracer(self.device, self.inner_dtype, uploads=self.uploads, matmul_dtype=self.matmul_dtype)
            sub_env = {k: v for k, v in env.items() if v.slot is None}
            inputs = {}
            for name, v in zip(names, example, strict=True):
                slot = sub.new_slot()
                sub_env[name] = _Val(v.t, slot)
                inputs[name] = slot
            sub.trace(body, sub_env, self.inner_dtype, body_scope)
            body_outs = {}
            for o in body.output:
                v = sub_env[o.name]
                if v.slot is None:
                    arg, t = sub.as_device(v, self.inner_dtype)
                    v = _Val(t)
                body_outs[o.name] = v
            program = FlatProgram(sub.steps, inputs, body_outs, sub.n_slots)
            out_names = [o.name for o in body.output]

            def body_fn(*args: Any) -> tuple[Any, ...]:
                result = program(dict(zip(names, args)))  # noqa: B905 (traced by torch.compile)
                return tuple(result[n] for n in out_names)

            self.compiled[key] = torch.compile(body_fn, dynamic=True, fullgraph=True)
        fn = self.compiled[key]
        scans: list[list[_Val]] = [[] for _ in range(len(body.output) - n_state)]
        extra = example[len(names) - len(outer_dynamic) :]
        for t in range(int(xs[0].t.shape[in_axes[0]])):
            args = [*states, *(self.frame(x, a, t) for x, a in zip(xs, in_axes, strict=True)), *extra]
            outs = self.record(fn, [("slot", v.slot) for v in args], [v.t for v in args])
            states = outs[:n_state]
            for j, v in enumerate(outs[n_state:]):
                scans[j].append(v)
        return states + [self.stack(s, axis) for s, axis in zip(scans, out_axes, strict=True)]

    def frame(self, x: _Val, axis: int, index: int) -> _Val:
        """One frame of a scanned input as a fresh contiguous tensor.

        A view would carry the frame's offset and the chunk length in its
        strides, and the compiled body would be recompiled for each of them.
        """
        if x.slot is None:
            return _Val(x.t.select(axis, index).contiguous())
        fn = lambda v, a=axis, i=index: v.select(a, i).clone(memory_format=self.torch.contiguous_format)  # noqa: E731
        (out,) = self.record(fn, [("slot", x.slot)], [x.t])
        return out

    def select(self, x: _Val, axis: int, index: int) -> _Val:
        if x.slot is None:
            return _Val(x.t.select(axis, index))
        (out,) = self.record(lambda v, a=axis, i=index: v.select(a, i), [("slot", x.slot)], [x.t])
        return out

    def stack(self, parts: list[_Val], axis: int) -> _Val:
        torch = self.torch
        if all(p.slot is None for p in parts):
            return _Val(torch.stack([p.t for p in parts], dim=axis))
        dtype = next(p.t.dtype for p in parts if p.slot is not None)
        args, values = zip(*(self.as_device(p, dtype) for p in parts), strict=True)
        (out,) = self.record(lambda *xs, a=axis: torch.stack(xs, dim=a), list(args), list(values))
        return out


def trace_program(
    model: onnx.ModelProto,
    feeds: Mapping[str, Any],
    *,
    device: Any,
    inner_dtype: Any,
    outputs: list[str] | None = None,
    compile_bodies: bool = False,
    compiled: dict[str, Callable[..., Any]] | None = None,
    matmul_dtype: Any = None,
) -> FlatProgram:
    """Trace ``model`` for the shapes of ``feeds`` (device tensors) into a :class:`FlatProgram`.

    Parameters
    ----------
    model : the ONNX chunk model
    feeds : one tensor per graph input, on ``device``, in float32
    device : torch device the program runs on
    inner_dtype : torch dtype of the operations inside ``Loop`` / ``Scan`` bodies
    outputs : graph outputs to return (default: all), always in float32
    compile_bodies : run each ``Scan`` body as one ``torch.compile`` function per frame
    compiled : cache of compiled bodies shared between traces of one model (all shapes)
    matmul_dtype : torch dtype of the products of activations with large constant matrices
        (both dimensions at least :data:`HEAVY_MIN_DIM`), wherever they are; None keeps them
        in the dtype of their context
    """
    import torch

    tracer = _Tracer(
        device, inner_dtype, compile_bodies=compile_bodies, compiled=compiled, matmul_dtype=matmul_dtype
    )
    env: dict[str, _Val] = {}
    inputs: dict[str, int] = {}
    for inp in model.graph.input:
        if inp.name not in feeds:
            raise EngineError(f"trace needs a value for graph input {inp.name!r}")
        slot = tracer.new_slot()
        env[inp.name] = _Val(feeds[inp.name], slot)
        inputs[inp.name] = slot
    with torch.no_grad():
        tracer.trace(model.graph, env, torch.float32, "")
        names = outputs or [o.name for o in model.graph.output]
        result: dict[str, _Val] = {}
        for name in names:
            v = env[name]
            if v.slot is None:
                v = _Val(v.t.to(device=device, dtype=torch.float32))
            elif v.t.is_floating_point() and v.t.dtype != torch.float32:
                arg, t = tracer.as_device(v, torch.float32)
                v = _Val(t, arg[1])
            result[name] = v
    return FlatProgram(tracer.steps, inputs, result, tracer.n_slots)


# --- operators -------------------------------------------------------------------------------------------

_OPS: dict[str, Callable[[dict[str, Any], Any], Callable[..., Any]]] = {}


def _op(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(make: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            _OPS[name] = make
        return make

    return register


def _binary(fn_name: str) -> Callable[[dict[str, Any], Any], Callable[..., Any]]:
    def make(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
        import torch

        fn = getattr(torch, fn_name)
        return lambda a, b: fn(a, b)

    return make


def _unary(fn_name: str) -> Callable[[dict[str, Any], Any], Callable[..., Any]]:
    def make(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
        import torch

        fn = getattr(torch, fn_name)
        return lambda a: fn(a)

    return make


for _name, _fn in {
    "Add": "add",
    "Sub": "sub",
    "Mul": "mul",
    "MatMul": "matmul",
    "Pow": "pow",
    "Greater": "gt",
    "GreaterOrEqual": "ge",
    "Less": "lt",
    "LessOrEqual": "le",
    "Equal": "eq",
    "And": "logical_and",
    "Or": "logical_or",
}.items():
    _op(_name)(_binary(_fn))

for _name, _fn in {
    "Relu": "relu",
    "Sigmoid": "sigmoid",
    "Tanh": "tanh",
    "Exp": "exp",
    "Log": "log",
    "Sqrt": "sqrt",
    "Abs": "abs",
    "Sign": "sign",
    "Neg": "neg",
    "Atan": "atan",
    "Sin": "sin",
    "Cos": "cos",
    "Erf": "erf",
    "Not": "logical_not",
    "Floor": "floor",
}.items():
    _op(_name)(_unary(_fn))


@_op("Identity")
def _identity(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    return lambda a: a


@_op("Div")
def _div(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    import torch

    def div(a: Any, b: Any) -> Any:
        if a.is_floating_point() or b.is_floating_point():
            return torch.div(a, b)
        return torch.div(a, b, rounding_mode="trunc")

    return div


def _make_variadic(fn_name: str) -> Callable[[dict[str, Any], Any], Callable[..., Any]]:
    def make(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
        import torch

        fn = getattr(torch, fn_name)

        def reduce(*xs: Any) -> Any:
            out = xs[0]
            for x in xs[1:]:
                out = fn(out, x)
            return out

        return reduce

    return make


_OPS["Min"] = _make_variadic("minimum")
_OPS["Max"] = _make_variadic("maximum")
_OPS["Sum"] = _make_variadic("add")


@_op("Where")
def _where(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    import torch

    return lambda c, a, b: torch.where(c, a, b)


@_op("Cast")
def _cast(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    import torch

    target = _ONNX_TO_TORCH.get(int(attrs["to"]))
    if target is None:
        raise EngineError(f"Cast to ONNX type {attrs['to']} is not supported by the torch backend")
    tdtype = dtype if target in ("float32", "float16") else getattr(torch, target)
    return lambda a: a.to(tdtype)


@_op("Gemm")
def _gemm(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    alpha, beta = float(attrs.get("alpha", 1.0)), float(attrs.get("beta", 1.0))
    ta, tb = int(attrs.get("transA", 0)), int(attrs.get("transB", 0))

    def gemm(a: Any, b: Any, c: Any = None) -> Any:
        y = (a.T if ta else a) @ (b.T if tb else b)
        if alpha != 1.0:
            y = y * alpha
        if c is not None:
            y = y + (c * beta if beta != 1.0 else c)
        return y

    return gemm


@_op("Concat")
def _concat(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    import torch

    axis = int(attrs["axis"])
    return lambda *xs: torch.cat(xs, dim=axis)


@_op("Split")
def _split(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    import torch

    axis = int(attrs.get("axis", 0))
    n_out = attrs.get("num_outputs")

    def split(x: Any, sizes: Any = None) -> Any:
        if sizes is not None:
            return torch.split(x, _ints(sizes), dim=axis)
        if "split" in attrs:
            return torch.split(x, list(attrs["split"]), dim=axis)
        if n_out is None:
            raise EngineError("Split without sizes needs its num_outputs attribute")
        n = int(n_out)
        return torch.split(x, -(-x.shape[axis] // n), dim=axis)

    return split


@_op("Slice")
def _slice(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    def slice_(x: Any, starts: Any, ends: Any, axes: Any = None, steps: Any = None) -> Any:
        s, e = _ints(starts), _ints(ends)
        ax = _ints(axes) if axes is not None else list(range(len(s)))
        st = _ints(steps) if steps is not None else [1] * len(s)
        index: list[Any] = [slice(None)] * x.dim()
        for a, lo, hi, step in zip(ax, s, e, st, strict=True):
            if step != 1:
                raise EngineError("Slice with steps other than 1 is not supported by the torch backend")
            dim = x.shape[a]
            lo = max(0, min(dim, lo + dim if lo < 0 else lo))
            hi = max(0, min(dim, hi + dim if hi < 0 else hi))
            index[a] = slice(lo, hi)
        return x[tuple(index)]

    return slice_


@_op("Gather")
def _gather(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    import torch

    axis = int(attrs.get("axis", 0))

    def gather(x: Any, idx: Any) -> Any:
        ax = axis % x.dim()
        if isinstance(idx, int) or idx.dim() == 0:
            i = int(idx)
            return x.select(ax, i + x.shape[ax] if i < 0 else i)
        flat = idx.reshape(-1)
        flat = torch.where(flat < 0, flat + x.shape[ax], flat)
        out = torch.index_select(x, ax, flat)
        return out.reshape(*x.shape[:ax], *idx.shape, *x.shape[ax + 1 :])

    return gather


@_op("Reshape")
def _reshape(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    def reshape(x: Any, shape: Any) -> Any:
        target = _ints(shape)
        target = [x.shape[i] if v == 0 else v for i, v in enumerate(target)]
        return x.reshape(target)

    return reshape


@_op("Transpose")
def _transpose(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    perm = attrs.get("perm")
    return lambda x: x.permute(*(perm if perm is not None else reversed(range(x.dim()))))


@_op("Unsqueeze")
def _unsqueeze(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    def unsqueeze(x: Any, axes: Any = None) -> Any:
        ax = _ints(axes) if axes is not None else list(attrs["axes"])
        rank = x.dim() + len(ax)
        for a in sorted(v % rank for v in ax):
            x = x.unsqueeze(a)
        return x

    return unsqueeze


@_op("Squeeze")
def _squeeze(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    def squeeze(x: Any, axes: Any = None) -> Any:
        ax = _ints(axes) if axes is not None else list(attrs.get("axes", []))
        if not ax:
            return x.squeeze()
        for a in sorted((v % x.dim() for v in ax), reverse=True):
            x = x.squeeze(a)
        return x

    return squeeze


def _reduce(fn_name: str) -> Callable[[dict[str, Any], Any], Callable[..., Any]]:
    def make(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
        keep = bool(attrs.get("keepdims", 1))

        def reduce(x: Any, axes: Any = None) -> Any:
            ax = _ints(axes) if axes is not None else list(attrs.get("axes", range(x.dim())))
            dims = tuple(a % x.dim() for a in ax)
            return getattr(x, fn_name)(dim=dims, keepdim=keep)

        return reduce

    return make


_OPS["ReduceSum"] = _reduce("sum")
_OPS["ReduceMean"] = _reduce("mean")
_OPS["ReduceMax"] = _reduce("amax")


@_op("ArgMax")
def _argmax(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    axis, keep = int(attrs.get("axis", 0)), bool(attrs.get("keepdims", 1))
    if int(attrs.get("select_last_index", 0)):
        raise EngineError("ArgMax with select_last_index is not supported by the torch backend")
    return lambda x: x.argmax(dim=axis, keepdim=keep)


@_op("OneHot")
def _onehot(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    import torch

    axis = int(attrs.get("axis", -1))

    def onehot(idx: Any, depth: Any, values: Any) -> Any:
        n = _ints(depth)[0]
        off, on = _floats(values)
        classes = torch.arange(n, device=idx.device)
        hot = torch.remainder(idx, n).unsqueeze(-1) == classes  # no host sync, unlike F.one_hot
        if axis not in (-1, idx.dim()):
            hot = hot.movedim(-1, axis)
        return hot.to(dtype) * (on - off) + off

    return onehot


@_op("Range")
def _range(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    import torch

    return lambda a, b, c: torch.arange(a.item(), b.item(), c.item(), dtype=a.dtype)


@_op("ConstantOfShape")
def _constant_of_shape(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    import torch

    value = numpy_helper.to_array(attrs["value"]) if "value" in attrs else np.zeros(1, np.float32)
    return lambda shape: torch.full(
        _ints(shape), value.reshape(-1)[0].item(), dtype=torch.from_numpy(value).dtype
    )


@_op("Expand")
def _expand(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    import torch

    return lambda x, shape: x * torch.ones(_ints(shape), dtype=x.dtype, device=x.device)


@_op("Tile")
def _tile(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    return lambda x, reps: x.repeat(*_ints(reps))


@_op("Softmax")
def _softmax(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    axis = int(attrs.get("axis", -1))
    return lambda x: x.softmax(dim=axis)


@_op("LeakyRelu")
def _leaky(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    import torch

    alpha = float(attrs.get("alpha", 0.01))
    return lambda x: torch.nn.functional.leaky_relu(x, alpha)


@_op("Clip")
def _clip(attrs: dict[str, Any], dtype: Any) -> Callable[..., Any]:
    import torch

    def clip(x: Any, lo: Any = None, hi: Any = None) -> Any:
        if lo is not None:
            x = torch.maximum(x, lo)
        if hi is not None:
            x = torch.minimum(x, hi)
        return x

    return clip


# Shape and Constant are handled by the tracer itself.
_OPS["Shape"] = _identity
_OPS["Constant"] = _identity

SUPPORTED_OPS = frozenset(_OPS) | {"Loop", "Scan"}
"""ONNX operators the torch backends can run."""
