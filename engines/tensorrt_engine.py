"""The TensorRT backend: a prebuilt engine run through cuda-python, with TensorRT 11 or TensorRT-RTX.

* The engine (plan) comes from the engine cache (:mod:`engines.tensorrt_build`),
  built once per ONNX hash, library and version, target (GPU model, or
  TensorRT-RTX's compute capabilities), precision and profile.
* One execution context and one CUDA stream per *slot*; several threads can
  run chunks at once, each on its own slot.
* Device buffers for the conditioning inputs and the poses are allocated once
  per slot, at the profile's largest shape (:func:`slot_buffer_floats`), with
  page-locked host twins for asynchronous copies.
* The recurrent state never leaves the GPU: ``state_in_*`` are bound straight
  to the caller's :class:`~engines.cuda_memory.DeviceRows` and ``state_out_*``
  to new ones, so carrying a song from chunk to chunk copies nothing.
* TensorRT-RTX compiles its kernels just in time on the GPU it runs on. They go
  into one runtime cache shared by every slot, kept on disk beside the plan per
  GPU model (:class:`RuntimeCacheFile`): saved after each chunk shape it first
  meets and on :meth:`TensorRTEngine.close`, and loaded when a worker restarts.

The two libraries' differences live in :mod:`engines.tensorrt_flavour`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from choreo.contracts.model_spec import ModelSpec
from choreo.errors import EngineError
from choreo.files import write_atomically
from choreo.motion.motion import FRAME_SIZE
from engines.base import POSES_OUTPUT, STATE_IN_PREFIX, STATE_OUT_PREFIX, ReadyPoses, check_chunk
from engines.cuda_memory import DeviceBuffer, DeviceRows, PinnedBuffer, Stream, cuda_call, gpu_name
from engines.settings import EngineSettings, ShapeProfile
from engines.state import DEVICE_ROWS
from engines.tensorrt_build import BuildResult
from engines.tensorrt_flavour import Flavour, build_target, get_flavour

__all__ = ["RuntimeCacheFile", "TensorRTEngine", "engine_tensor_names", "ensure_plan", "slot_buffer_floats"]


def ensure_plan(
    model_path: Path,
    settings: EngineSettings,
    *,
    precision: str | None = None,
    flavour: Flavour | None = None,
) -> tuple[Path, BuildResult | None]:
    """The cached plan for the model, precision and profile in ``settings``; builds it when missing.

    Returns the plan's path and the build's result, or None when the plan was
    already in the cache. TensorRT 11 needs the GPU it builds for; TensorRT-RTX
    builds anywhere, for ``settings.rtx_targets``.
    """
    from engines.precision import precision_model
    from engines.tensorrt_build import EngineKey, build_plan, timing_cache_path

    flavour = flavour or get_flavour()
    precision = precision or settings.precision
    profile = settings.profiles[settings.profile]
    onnx_path, onnx_sha = precision_model(model_path, precision, settings)
    gpu = None if flavour.is_rtx else gpu_name(settings.device)
    target = build_target(flavour.name, gpu=gpu, targets=settings.rtx_targets)
    key = EngineKey(onnx_sha, flavour.name, flavour.version, target, precision, settings.profile, profile)
    plan = Path(settings.cache_dir) / key.filename()
    if plan.is_file():
        return plan, None
    result = build_plan(
        onnx_path,
        plan,
        flavour=flavour,
        spec=ModelSpec.from_metadata(_metadata(onnx_path)),
        profile=profile,
        profile_name=settings.profile,
        target=target,
        workspace_mib=settings.workspace_mib,
        rtx_targets=settings.rtx_targets,
        timing_cache=None if gpu is None else timing_cache_path(settings.cache_dir, flavour.version, gpu),
    )
    return plan, result


def _metadata(onnx_path: Path) -> dict[str, str]:
    import onnx

    model = onnx.load(str(onnx_path), load_external_data=False)
    return {p.key: p.value for p in model.metadata_props}


def engine_tensor_names(spec: ModelSpec) -> set[str]:
    """Every input and output tensor an engine of the model has (checked when a plan is loaded)."""
    names = set(spec.input_widths) | {POSES_OUTPUT}
    for state in spec.state_shapes:
        names |= {STATE_IN_PREFIX + state, STATE_OUT_PREFIX + state}
    return names


def slot_buffer_floats(spec: ModelSpec, profile: ShapeProfile) -> dict[str, int]:
    """Floats of each slot's device buffer (conditioning inputs and poses), at the profile's maximum.

    The state has no slot buffer: it lives in the caller's device rows.
    """
    max_b, max_t = profile.max
    sizes = {name: max_b * max_t * width for name, width in spec.input_widths.items()}
    sizes[POSES_OUTPUT] = max_b * max_t * FRAME_SIZE
    return sizes


class RuntimeCacheFile:
    """TensorRT-RTX's runtime cache of one plan on one GPU model, on disk beside the plan.

    The kernels TensorRT-RTX compiles just in time depend on the engine and the
    GPU, so the file is named after both; it is replaced atomically, so
    workers sharing the engine cache never read half a file.

    Parameters
    ----------
    plan_path : the serialized engine
    gpu : the GPU's name, e.g. ``"NVIDIA GeForce RTX 4090"``
    """

    def __init__(self, plan_path: Path, gpu: str) -> None:
        slug = "".join(c if c.isalnum() else "_" for c in gpu).strip("_").lower()
        plan_path = Path(plan_path)
        self.path = plan_path.with_name(f"{plan_path.stem}.{slug}.runtime-cache")

    def read(self) -> bytes | None:
        """The saved cache, or None when there is none yet (or it is empty)."""
        try:
            blob = self.path.read_bytes()
        except FileNotFoundError:
            return None
        return blob or None

    def write(self, blob: bytes) -> None:
        """Replace the saved cache with ``blob``."""
        write_atomically(self.path, blob, what="TensorRT-RTX runtime cache", error=EngineError)


@dataclass
class _Slot:
    context: Any
    stream: Stream
    inputs: dict[str, tuple[DeviceBuffer, PinnedBuffer]]
    poses: tuple[DeviceBuffer, PinnedBuffer]


class TensorRTEngine:
    """Runs a serialized TensorRT (11 or RTX) engine of the chunk model.

    Parameters
    ----------
    plan_path : the serialized engine
    spec : the model's description (from the ONNX metadata)
    profile : the shape profile the engine was built with
    slots : execution contexts (and streams) for concurrent calls
    device : the CUDA device ordinal (names TensorRT-RTX's runtime cache file)
    flavour : the library; default :func:`~engines.tensorrt_flavour.get_flavour`

    Raises
    ------
    EngineError
        When the plan cannot run here (TensorRT-RTX says why from the plan's
        header: another GPU, driver or version), or does not match the model.
    """

    name = "tensorrt"
    state_rows = DEVICE_ROWS
    prepares_shapes = True  # an execution context per shape; TensorRT-RTX compiles kernels on first use

    def __init__(
        self,
        plan_path: Path,
        *,
        spec: ModelSpec,
        profile: ShapeProfile,
        slots: int = 2,
        device: int = 0,
        flavour: Flavour | None = None,
    ) -> None:
        self.spec = spec
        self.profile = profile
        self.flavour = flavour or get_flavour()
        trt = self.flavour.trt
        blob = Path(plan_path).read_bytes()
        with self.flavour.capture() as logged:
            self._runtime = trt.Runtime(self.flavour.logger)
            invalid = self.flavour.engine_invalid_reason(self._runtime, blob)
            if invalid is not None:
                raise EngineError(f"cannot load the engine {plan_path}: {invalid}")
            self._engine = self._runtime.deserialize_cuda_engine(blob)
        if self._engine is None:
            why = "; ".join(logged) or "built for another version or GPU?"
            raise EngineError(f"{self.flavour.label} could not load the engine {plan_path}: {why}")
        names = {self._engine.get_tensor_name(i) for i in range(self._engine.num_io_tensors)}
        expected = engine_tensor_names(spec)
        if names != expected:
            raise EngineError(
                f"engine {plan_path} has tensors {sorted(names)}, the model needs {sorted(expected)}"
            )
        self._cache_file = RuntimeCacheFile(plan_path, gpu_name(device)) if self.flavour.is_rtx else None
        saved = self._cache_file.read() if self._cache_file is not None else None
        self._runtime_cache, self.runtime_cache_loaded = self.flavour.runtime_cache(self._engine, saved)
        self._seen_shapes: set[tuple[int, int]] = set()
        self._cache_lock = threading.Lock()
        self._widths = spec.input_widths
        self._free: queue.Queue[_Slot] = queue.Queue()
        for _ in range(slots):
            self._free.put(self._make_slot())

    @classmethod
    def from_onnx(cls, model_path: Path, settings: EngineSettings) -> TensorRTEngine:
        """Load (building first if needed) the engine for ``settings``' precision and profile."""
        plan, _ = ensure_plan(model_path, settings)
        spec = ModelSpec.from_metadata(_metadata(Path(model_path)))
        return cls(
            plan,
            spec=spec,
            profile=settings.profiles[settings.profile],
            slots=settings.slots,
            device=settings.device,
        )

    def _make_slot(self) -> _Slot:
        sizes = slot_buffer_floats(self.spec, self.profile)
        inputs = {name: (DeviceBuffer(4 * sizes[name]), PinnedBuffer(sizes[name])) for name in self._widths}
        n_poses = sizes[POSES_OUTPUT]
        context = self.flavour.create_context(self._engine, self._runtime_cache)
        stream = Stream()
        context.set_optimization_profile_async(0, int(stream))
        return _Slot(context, stream, inputs, (DeviceBuffer(4 * n_poses), PinnedBuffer(n_poses)))

    def save_runtime_cache(self) -> bool:
        """Write TensorRT-RTX's runtime cache to its file; False for TensorRT 11 (it has none)."""
        if self._cache_file is None or self._runtime_cache is None:
            return False
        with self._cache_lock:
            self._cache_file.write(bytes(self._runtime_cache.serialize()))
        return True

    def close(self) -> None:
        """Keep the kernels compiled so far for the next worker (TensorRT-RTX)."""
        self.save_runtime_cache()

    def initial_state(self, batch: int) -> dict[str, DeviceRows]:
        """Zeroed device rows for every state tensor: the start of ``batch`` dances."""
        return {name: DeviceRows.zeros(batch, shape) for name, shape in self.spec.state_shapes.items()}

    def launch(
        self, inputs: Mapping[str, np.ndarray], state: Mapping[str, Any]
    ) -> tuple[ReadyPoses, dict[str, Any]]:
        """Run the chunk now (see :meth:`run`): nothing is left to wait for."""
        poses, new_state = self.run(inputs, state)
        return ReadyPoses(poses), new_state

    def input_buffers(self, batch: int, frames: int) -> None:
        """None: a call's slot (and so its page-locked inputs) is chosen when it runs."""
        return None

    def run(
        self, inputs: Mapping[str, np.ndarray], state: Mapping[str, Any]
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Run one chunk on a free slot; the new state stays on the device."""
        batch, frames = check_chunk(inputs, self.spec)
        if not self.profile.contains(batch, frames):
            raise EngineError(
                f"chunk {batch}x{frames} (batch x frames) is outside the engine's profile "
                f"{self.profile.min}..{self.profile.max}; build an engine with a larger profile"
            )
        rows = {}
        for name, shape in self.spec.state_shapes.items():
            value = state.get(name)
            if value is None:
                raise EngineError(f"state {name!r} is missing")
            if not isinstance(value, DeviceRows):
                value = DeviceRows.from_host(np.asarray(value))
            if value.shape != (batch, *shape):
                raise EngineError(f"state {name!r} must be {(batch, *shape)}, got {value.shape}")
            rows[name] = value
        slot = self._free.get()
        try:
            result = self._run(slot, inputs, rows, batch, frames)
        finally:
            self._free.put(slot)
        with self._cache_lock:
            new_shape = (batch, frames) not in self._seen_shapes
            self._seen_shapes.add((batch, frames))
        if new_shape:  # TensorRT-RTX has just compiled kernels for this shape: keep them
            self.save_runtime_cache()
        return result

    def _run(
        self,
        slot: _Slot,
        inputs: Mapping[str, np.ndarray],
        state: dict[str, DeviceRows],
        batch: int,
        frames: int,
    ) -> tuple[np.ndarray, dict[str, DeviceRows]]:
        from cuda.bindings import runtime as rt

        h2d = rt.cudaMemcpyKind.cudaMemcpyHostToDevice
        d2h = rt.cudaMemcpyKind.cudaMemcpyDeviceToHost
        ctx, stream = slot.context, slot.stream.handle
        for name, width in self._widths.items():
            device, host = slot.inputs[name]
            n = batch * frames * width
            host.array[:n] = np.asarray(inputs[name], dtype=np.float32).reshape(-1)
            cuda_call(rt.cudaMemcpyAsync(device.ptr, host.ptr, 4 * n, h2d, stream))
            ctx.set_input_shape(name, (batch, frames, width))
            ctx.set_tensor_address(name, device.ptr)
        new_state = {}
        for name, rows in state.items():
            ctx.set_input_shape(STATE_IN_PREFIX + name, rows.shape)
            ctx.set_tensor_address(STATE_IN_PREFIX + name, rows.ptr)
            out = DeviceRows(batch, rows.row_shape)
            ctx.set_tensor_address(STATE_OUT_PREFIX + name, out.ptr)
            new_state[name] = out
        poses_device, poses_host = slot.poses
        ctx.set_tensor_address(POSES_OUTPUT, poses_device.ptr)
        if not ctx.execute_async_v3(int(slot.stream)):
            raise EngineError(f"{self.flavour.label} failed to run a {batch}x{frames} chunk")
        n = batch * frames * FRAME_SIZE
        cuda_call(rt.cudaMemcpyAsync(poses_host.ptr, poses_device.ptr, 4 * n, d2h, stream))
        slot.stream.synchronize()
        return poses_host.array[:n].reshape(batch, frames, FRAME_SIZE).copy(), new_state
