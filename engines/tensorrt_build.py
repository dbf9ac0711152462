"""Building TensorRT engines from the ONNX model: shapes, cache keys, the build itself.

Build once, run many times: ``choreo engines build`` writes a serialized engine
(a *plan*) into the engine cache ahead of time. A worker that finds no plan for
its settings builds it once when it loads the engine
(:func:`engines.tensorrt_engine.ensure_plan`, before the first song), never per
request; the int8 ONNX it builds from must already have been calibrated by
``choreo engines build --precision int8``, since calibration needs songs. A
plan bakes in the precision and the shape profile, and is only valid for the
library that built it (TensorRT 11 or TensorRT-RTX, :mod:`engines.tensorrt_flavour`)
and its target: the GPU model for TensorRT 11, the target compute capabilities
for TensorRT-RTX. The cache key holds all of them plus the hash of the ONNX
file actually parsed: a worker never builds the same engine twice, and never
loads one that does not fit.

TensorRT-RTX builds without a GPU, so CI builds the shipped model's engines
for real; only running them needs a GPU it supports.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from choreo.contracts.model_spec import ModelSpec
from choreo.errors import EngineError
from choreo.files import write_atomically
from engines.base import MAX_CHUNK_FRAMES, MIN_CHUNK_FRAMES, STATE_IN_PREFIX
from engines.settings import ShapeProfile
from engines.tensorrt_flavour import Flavour

__all__ = [
    "BuildResult",
    "EngineBuildError",
    "EngineKey",
    "build_plan",
    "check_profile",
    "profile_shapes",
    "timing_cache_path",
]

Shape = tuple[int, ...]


class EngineBuildError(EngineError):
    """TensorRT could not parse or build the model; the message lists why."""

    code = "engine_build_error"


def profile_shapes(spec: ModelSpec, profile: ShapeProfile) -> dict[str, tuple[Shape, Shape, Shape]]:
    """``(min, opt, max)`` shape of every model input under a batch x frames profile.

    Conditioning inputs are ``[B, T, width]``; state inputs ``[B, *state_shape]``
    take only the batch numbers.
    """
    shapes: dict[str, tuple[Shape, Shape, Shape]] = {}
    for name, width in spec.input_widths.items():
        shapes[name] = tuple((b, t, width) for b, t in (profile.min, profile.opt, profile.max))  # type: ignore[assignment]
    for name, shape in spec.state_shapes.items():
        shapes[STATE_IN_PREFIX + name] = tuple(
            (b, *shape) for b, _ in (profile.min, profile.opt, profile.max)
        )  # type: ignore[assignment]
    return shapes


@dataclass(frozen=True)
class EngineKey:
    """Everything a serialized engine depends on.

    Parameters
    ----------
    onnx_sha256 : hash of the ONNX file that was parsed (the precision-converted one)
    flavour : ``tensorrt`` or ``tensorrt-rtx``
    version : the library's version
    target : what the plan is specific to (:func:`~engines.tensorrt_flavour.build_target`): the GPU's name
        for TensorRT 11, the target compute capabilities for TensorRT-RTX
    precision : fp32, fp16 or int8
    profile_name : the settings' profile name
    profile : the profile's shapes (a renamed profile with other shapes is another engine)
    """

    onnx_sha256: str
    flavour: str
    version: str
    target: str
    precision: str
    profile_name: str
    profile: ShapeProfile

    def digest(self) -> str:
        """A short, stable hex digest of all the fields."""
        fields = asdict(self)
        fields["profile"] = self.profile.model_dump(mode="json")
        blob = json.dumps(fields, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:20]

    def filename(self) -> str:
        """File name of the plan in the engine cache."""
        short = "rtx" if self.flavour == "tensorrt-rtx" else "trt"
        return f"choreo-{short}-{self.precision}-{self.profile_name}-{self.digest()}.plan"


def timing_cache_path(cache_dir: Path, tensorrt_version: str, gpu: str) -> Path:
    """TensorRT 11's timing cache, shared by every build on one GPU model and TensorRT version."""
    slug = "".join(c if c.isalnum() else "_" for c in gpu).strip("_").lower()
    return Path(cache_dir) / f"timing-{slug}-trt{tensorrt_version}.cache"


def _parser_errors(parser: Any) -> list[str]:
    errors = []
    for i in range(parser.num_errors):
        err = parser.get_error(i)
        where = []
        for attr in ("node_name", "node_operator"):
            getter = getattr(err, attr, None)
            value = getter() if callable(getter) else None
            if value:
                where.append(f"{attr.replace('_', ' ')} {value}")
        suffix = f" ({', '.join(where)})" if where else ""
        errors.append(f"{err.desc()}{suffix}")
    return errors


def check_profile(network: Any, shapes: dict[str, tuple[Shape, Shape, Shape]], profile_name: str) -> None:
    """Refuse a profile the parsed network cannot take, naming the input and the dimension.

    Every network input must be in the profile and nothing else; ranks must
    match; a dimension the model fixes must be what the profile asks for at
    min, opt and max; chunks must stay within the model's 16 to 128 frames.

    Raises
    ------
    EngineBuildError
    """
    problems = []
    inputs = {network.get_input(i).name: tuple(network.get_input(i).shape) for i in range(network.num_inputs)}
    for name in sorted(set(inputs) - set(shapes)):
        problems.append(f"the model's input {name!r} is not in the profile")
    for name in sorted(set(shapes) - set(inputs)):
        problems.append(f"the profile sets {name!r}, which the model does not have")
    for name in sorted(set(inputs) & set(shapes)):
        dims, (lo, mid, hi) = inputs[name], shapes[name]
        if len(dims) != len(lo):
            problems.append(f"input {name!r} has {len(dims)} dimensions, the profile gives {len(lo)}")
            continue
        for axis, fixed in enumerate(dims):
            wanted = {lo[axis], mid[axis], hi[axis]}
            if fixed >= 0 and wanted != {fixed}:
                problems.append(
                    f"input {name!r} has dimension {axis} fixed at {fixed}, the profile asks for "
                    f"{lo[axis]}..{hi[axis]}"
                )
    frames = [shape[1] for triple in shapes.values() if len(triple[0]) == 3 for shape in triple]
    if frames and not MIN_CHUNK_FRAMES <= min(frames) <= max(frames) <= MAX_CHUNK_FRAMES:
        problems.append(
            f"the model runs chunks of {MIN_CHUNK_FRAMES} to {MAX_CHUNK_FRAMES} frames, "
            f"the profile asks for {min(frames)}..{max(frames)}"
        )
    if problems:
        raise EngineBuildError(
            f"profile {profile_name!r} does not fit the model:\n  " + "\n  ".join(problems)
        )


@dataclass(frozen=True)
class BuildResult:
    """What a build made, read from the network and the profile (reading an engine back needs a GPU).

    Parameters
    ----------
    plan_path : the serialized engine
    plan_bytes : its size
    seconds : wall time of the build itself (parse to serialized plan)
    flavour : the library that built it, e.g. ``"TensorRT-RTX 1.7.1.116"``
    target : what the plan is specific to (see :class:`EngineKey`)
    input_shapes : ``(min, opt, max)`` of every network input, as the optimisation profile holds it
    outputs : the network's output names
    quantize_layers : the network's Quantize and Dequantize layers (an int8 model has them)
    """

    plan_path: Path
    plan_bytes: int
    seconds: float
    flavour: str
    target: str
    input_shapes: dict[str, tuple[Shape, Shape, Shape]]
    outputs: tuple[str, ...]
    quantize_layers: int


def build_plan(
    onnx_path: Path,
    plan_path: Path,
    *,
    flavour: Flavour,
    spec: ModelSpec,
    profile: ShapeProfile,
    profile_name: str,
    target: str,
    workspace_mib: int,
    rtx_targets: tuple[str, ...] = (),
    timing_cache: Path | None = None,
) -> BuildResult:
    """Parse the ONNX file and build a strongly typed engine with one optimisation profile.

    The precision is whatever the ONNX graph says (neither flavour takes
    precision flags). TensorRT 11 reads ``timing_cache`` before and writes it
    after the build, so later builds on the same GPU skip the kernel timing
    they already did; TensorRT-RTX is built for ``rtx_targets`` and has no
    timing cache.

    Raises
    ------
    EngineBuildError
        Listing the parser's errors, the profile's misfits, or the builder's errors.
    """
    trt = flavour.trt
    start = time.perf_counter()
    with flavour.capture() as logged:
        builder = trt.Builder(flavour.logger)
        network = builder.create_network(0)  # explicit batch and strongly typed, in both flavours
        parser = trt.OnnxParser(network, flavour.logger)
        if not parser.parse_from_file(str(onnx_path)):
            errors = _parser_errors(parser) or logged
            raise EngineBuildError(
                f"{flavour.label} could not parse {onnx_path}:\n  "
                + "\n  ".join(errors or ["(no error reported)"])
            )
        shapes = profile_shapes(spec, profile)
        check_profile(network, shapes, profile_name)
        config = builder.create_builder_config()
        config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, int(workspace_mib) << 20)
        cache_in = timing_cache.read_bytes() if timing_cache is not None and timing_cache.is_file() else None
        flavour.configure_build(config, targets=rtx_targets, timing_cache=cache_in)
        optimisation = builder.create_optimization_profile()
        for name, (lo, mid, hi) in shapes.items():
            optimisation.set_shape(name, lo, mid, hi)
        config.add_optimization_profile(optimisation)
        plan = builder.build_serialized_network(network, config)
        if plan is None:
            raise EngineBuildError(
                f"{flavour.label} could not build {onnx_path} (profile {profile_name!r}):\n  "
                + "\n  ".join(logged or ["(no error reported)"])
            )
        seconds = time.perf_counter() - start
        read_back = {}
        for i in range(network.num_inputs):
            name = network.get_input(i).name
            lo, mid, hi = optimisation.get_shape(name)
            read_back[name] = (tuple(lo), tuple(mid), tuple(hi))
        outputs = tuple(network.get_output(i).name for i in range(network.num_outputs))
        qdq = (trt.LayerType.QUANTIZE, trt.LayerType.DEQUANTIZE)
        quantize_layers = sum(network.get_layer(i).type in qdq for i in range(network.num_layers))
        plan_path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(plan_path, bytes(plan), what="engine plan", error=EngineBuildError)
        cache_out = flavour.timing_cache_bytes(config)
    if cache_out is not None and timing_cache is not None:
        timing_cache.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(timing_cache, cache_out, what="timing cache", error=EngineBuildError)
    return BuildResult(
        plan_path=plan_path,
        plan_bytes=plan.nbytes,
        seconds=seconds,
        flavour=flavour.label,
        target=target,
        input_shapes=read_back,
        outputs=outputs,
        quantize_layers=quantize_layers,
    )
