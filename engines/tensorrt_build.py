"""Building TensorRT engines from the ONNX model: shapes, cache keys, the build itself.

Build offline, run many times: ``choreo engines build`` writes a serialized
engine (a *plan*) into the engine cache, and a worker only deserializes it. A
plan is only valid for the TensorRT version and GPU it was built on, and it
bakes in the precision and the shape profile, so the cache key holds all of
them plus the hash of the ONNX file actually parsed: a worker never builds the
same engine twice, and never loads one that does not fit.

The parts here that need neither TensorRT nor a GPU (profile shapes, cache
keys) are tested on CI.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from choreo.errors import EngineError
from choreo.files import write_atomically
from engines.base import STATE_IN_PREFIX, ModelSpec
from engines.settings import ShapeProfile

__all__ = [
    "EngineBuildError",
    "EngineKey",
    "build_plan",
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
    tensorrt_version : ``tensorrt.__version__``
    gpu : the GPU's name (plans are specific to a GPU model)
    precision : fp32, fp16 or int8
    profile_name : the settings' profile name
    profile : the profile's shapes (a renamed profile with other shapes is another engine)
    """

    onnx_sha256: str
    tensorrt_version: str
    gpu: str
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
        return f"choreo-{self.precision}-{self.profile_name}-{self.digest()}.plan"


def timing_cache_path(cache_dir: Path, tensorrt_version: str, gpu: str) -> Path:
    """The timing cache shared by every build on one GPU model and TensorRT version."""
    slug = "".join(c if c.isalnum() else "_" for c in gpu).strip("_").lower()
    return Path(cache_dir) / f"timing-{slug}-trt{tensorrt_version}.cache"


def _logger(trt: Any) -> Any:
    class _Collect(trt.ILogger):
        def __init__(self) -> None:
            trt.ILogger.__init__(self)
            self.errors: list[str] = []

        def log(self, severity: Any, msg: str) -> None:
            if severity in (trt.ILogger.Severity.ERROR, trt.ILogger.Severity.INTERNAL_ERROR):
                self.errors.append(msg)

    return _Collect()


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


def build_plan(
    onnx_path: Path,
    plan_path: Path,
    *,
    spec: ModelSpec,
    profile: ShapeProfile,
    workspace_mib: int,
    timing_cache: Path,
) -> Path:
    """Parse the ONNX file and build a strongly typed engine with one optimisation profile.

    The precision is whatever the ONNX graph says (TensorRT 11 has no precision
    flags). The timing cache is read before and written after the build, so
    later builds on the same GPU skip the kernel timing they already did.

    Raises
    ------
    EngineBuildError
        Listing the parser's errors, or the builder's, when the build fails.
    """
    import tensorrt as trt

    logger = _logger(trt)
    builder = trt.Builder(logger)
    network = builder.create_network(0)  # TensorRT 11: always explicit batch and strongly typed
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(str(onnx_path)):
        errors = _parser_errors(parser) or logger.errors
        raise EngineBuildError(
            f"TensorRT could not parse {onnx_path}:\n  " + "\n  ".join(errors or ["(no error reported)"])
        )
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, int(workspace_mib) << 20)
    cache_bytes = timing_cache.read_bytes() if timing_cache.is_file() else b""
    cache = config.create_timing_cache(cache_bytes)
    config.set_timing_cache(cache, ignore_mismatch=False)
    optimisation = builder.create_optimization_profile()
    for name, (lo, mid, hi) in profile_shapes(spec, profile).items():
        optimisation.set_shape(name, lo, mid, hi)
    config.add_optimization_profile(optimisation)
    plan = builder.build_serialized_network(network, config)
    if plan is None:
        raise EngineBuildError(
            f"TensorRT could not build {onnx_path}:\n  "
            + "\n  ".join(logger.errors or ["(no error reported)"])
        )
    plan_path.parent.mkdir(parents=True, exist_ok=True)
    timing_cache.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(plan_path, bytes(plan))
    write_atomically(timing_cache, bytes(config.get_timing_cache().serialize()))
    return plan_path
