"""The TensorRT backend: a prebuilt engine run through cuda-python.

* The engine (plan) comes from the engine cache (:mod:`engines.tensorrt_build`),
  built once per ONNX hash, TensorRT version, GPU model, precision and profile.
* One execution context and one CUDA stream per *slot*; several threads can
  run chunks at once, each on its own slot.
* Device buffers for the conditioning inputs and the poses are allocated once
  per slot, at the profile's largest shape, with page-locked host twins for
  asynchronous copies.
* The recurrent state never leaves the GPU: ``state_in_*`` are bound straight
  to the caller's :class:`~engines.cuda_memory.DeviceRows` and ``state_out_*``
  to new ones, so carrying a song from chunk to chunk copies nothing.

Written against the TensorRT 11 Python API (name-based tensors,
``execute_async_v3``, strongly typed networks).
"""

from __future__ import annotations

import queue
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from choreo.errors import EngineError
from choreo.motion.motion import FRAME_SIZE
from engines.base import (
    POSES_OUTPUT,
    STATE_IN_PREFIX,
    STATE_OUT_PREFIX,
    ModelSpec,
    check_chunk,
)
from engines.cuda_memory import DeviceBuffer, DeviceRows, PinnedBuffer, Stream, cuda_call, gpu_name
from engines.settings import EngineSettings, ShapeProfile

__all__ = ["TensorRTEngine", "ensure_plan"]


def ensure_plan(
    model_path: Path, settings: EngineSettings, *, precision: str | None = None
) -> tuple[Path, bool]:
    """The cached plan for the model, precision and profile in ``settings``; builds it when missing.

    Returns the plan's path and whether it was built now.
    """
    import tensorrt as trt

    from engines.precision_files import precision_model
    from engines.tensorrt_build import EngineKey, build_plan, timing_cache_path

    precision = precision or settings.precision
    profile = settings.profiles[settings.profile]
    onnx_path, onnx_sha = precision_model(model_path, precision, settings)
    gpu = gpu_name(settings.device)
    key = EngineKey(onnx_sha, trt.__version__, gpu, precision, settings.profile, profile)
    plan = Path(settings.cache_dir) / key.filename()
    if plan.is_file():
        return plan, False
    spec = ModelSpec.from_metadata(_metadata(onnx_path))
    build_plan(
        onnx_path,
        plan,
        spec=spec,
        profile=profile,
        workspace_mib=settings.workspace_mib,
        timing_cache=timing_cache_path(settings.cache_dir, trt.__version__, gpu),
    )
    return plan, True


def _metadata(onnx_path: Path) -> dict[str, str]:
    import onnx

    model = onnx.load(str(onnx_path), load_external_data=False)
    return {p.key: p.value for p in model.metadata_props}


@dataclass
class _Slot:
    context: Any
    stream: Stream
    inputs: dict[str, tuple[DeviceBuffer, PinnedBuffer]]
    poses: tuple[DeviceBuffer, PinnedBuffer]


class TensorRTEngine:
    """Runs a serialized TensorRT engine of the chunk model.

    Parameters
    ----------
    plan_path : the serialized engine
    spec : the model's description (from the ONNX metadata)
    profile : the shape profile the engine was built with
    slots : execution contexts (and streams) for concurrent calls
    """

    name = "tensorrt"

    def __init__(self, plan_path: Path, *, spec: ModelSpec, profile: ShapeProfile, slots: int = 2) -> None:
        import tensorrt as trt

        self.spec = spec
        self.profile = profile
        self._logger = trt.Logger(trt.Logger.WARNING)
        self._runtime = trt.Runtime(self._logger)
        self._engine = self._runtime.deserialize_cuda_engine(Path(plan_path).read_bytes())
        if self._engine is None:
            raise EngineError(
                f"TensorRT could not load the engine {plan_path} (built for another version or GPU?)"
            )
        names = {self._engine.get_tensor_name(i) for i in range(self._engine.num_io_tensors)}
        expected = set(spec.input_widths) | {POSES_OUTPUT}
        for state in spec.state_shapes:
            expected |= {STATE_IN_PREFIX + state, STATE_OUT_PREFIX + state}
        if names != expected:
            raise EngineError(
                f"engine {plan_path} has tensors {sorted(names)}, the model needs {sorted(expected)}"
            )
        self._widths = spec.input_widths
        self._free: queue.Queue[_Slot] = queue.Queue()
        for _ in range(slots):
            self._free.put(self._make_slot())

    @classmethod
    def from_onnx(cls, model_path: Path, settings: EngineSettings) -> TensorRTEngine:
        """Load (building first if needed) the engine for ``settings``' precision and profile."""
        plan, _ = ensure_plan(model_path, settings)
        spec = ModelSpec.from_metadata(_metadata(Path(model_path)))
        return cls(plan, spec=spec, profile=settings.profiles[settings.profile], slots=settings.slots)

    def _make_slot(self) -> _Slot:
        max_b, max_t = self.profile.max
        inputs = {}
        for name, width in self._widths.items():
            n = max_b * max_t * width
            inputs[name] = (DeviceBuffer(4 * n), PinnedBuffer(n))
        n_poses = max_b * max_t * FRAME_SIZE
        context = self._engine.create_execution_context()
        stream = Stream()
        context.set_optimization_profile_async(0, int(stream))
        return _Slot(context, stream, inputs, (DeviceBuffer(4 * n_poses), PinnedBuffer(n_poses)))

    def initial_state(self, batch: int) -> dict[str, DeviceRows]:
        """Zeroed device rows for every state tensor: the start of ``batch`` dances."""
        return {name: DeviceRows.zeros(batch, shape) for name, shape in self.spec.state_shapes.items()}

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
            return self._run(slot, inputs, rows, batch, frames)
        finally:
            self._free.put(slot)

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
            raise EngineError(f"TensorRT failed to run a {batch}x{frames} chunk")
        n = batch * frames * FRAME_SIZE
        cuda_call(rt.cudaMemcpyAsync(poses_host.ptr, poses_device.ptr, 4 * n, d2h, stream))
        slot.stream.synchronize()
        return poses_host.array[:n].reshape(batch, frames, FRAME_SIZE).copy(), new_state
