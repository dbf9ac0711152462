"""The torch backends: the dance network itself (:class:`engines.network.dance_net.DanceNet`) run by torch.

The ONNX file carries the network's config and weights in its metadata
(:func:`engines.network.file.read_network`), so the backend rebuilds the very
network that was trained and exported, with no second copy of its arithmetic.

``torch-cuda`` runs it on an NVIDIA GPU and replays one CUDA graph per shape
bucket: the batch is padded up to a power of two (padded rows are computed
and thrown away, their state never kept), and each chunk length gets its own
graph, so after the first call of a shape a whole chunk is one graph launch.
It computes in fp32 by default; ``dtype="fp16"`` runs the matrix products
under autocast (measured no faster and drifting over a song, docs/engines.md).
With ``cuda_graphs=False`` it is the plain eager network, which lets the same
code be tested on the CPU.

The state stays on the device between chunks as torch tensors (fp32, batch
first), so the batcher gathers and scatters rows without a host round trip.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from choreo.contracts.model_spec import ModelSpec
from choreo.errors import EngineError, ParameterError
from engines.base import (
    POSES_OUTPUT,
    STATE_IN_PREFIX,
    STATE_OUT_PREFIX,
    PendingPoses,
    ReadyPoses,
    check_chunk,
)
from engines.settings import ShapeProfile
from engines.state import TORCH_ROWS

__all__ = ["TorchEngine", "batch_bucket"]


def _same_buffer(a: np.ndarray, b: Any) -> bool:
    """Whether ``b`` is the array ``a`` itself (the same memory, shape and strides): nothing to copy."""
    return (
        isinstance(b, np.ndarray)
        and a.ctypes.data == b.ctypes.data
        and a.shape == b.shape
        and a.strides == b.strides
    )


def batch_bucket(batch: int) -> int:
    """The padded batch a CUDA graph is captured for: the next power of two."""
    if batch < 1:
        raise EngineError(f"batch must be at least 1, got {batch}")
    return 1 << (batch - 1).bit_length()


@dataclass
class _Graph:
    """One captured shape: its static input buffers, outputs, CUDA graph and two sets of pinned host
    buffers, taken in turn, so one launch's copies may still run while the next is being prepared."""

    feeds: dict[str, Any]
    outputs: dict[str, Any]
    graph: Any
    staging: tuple[dict[str, Any], dict[str, Any]]
    poses_host: tuple[Any, Any]
    turn: int = 0


@dataclass(frozen=True)
class _PendingPoses:
    """A launched chunk's poses: copied into page-locked memory once the stream reaches ``event``."""

    event: Any
    host: Any
    batch: int

    def wait(self) -> np.ndarray:
        self.event.synchronize()
        return self.host[: self.batch].numpy().copy()


class TorchEngine:
    """Runs the dance network an ONNX model file carries, with torch on one device.

    Parameters
    ----------
    model_path : an ONNX model written by :func:`choreo.model.export.export_onnx` (fp32)
    device : torch device, e.g. ``"cuda:0"`` or ``"cpu"``
    dtype : ``"fp32"`` or ``"fp16"`` (the matrix products under autocast; state stays fp32)
    cuda_graphs : capture and replay a CUDA graph per (batch bucket, chunk length)
    compile_step : with CUDA graphs, compile the network's per-frame step with ``torch.compile``
        (fused kernels; compiled before the first capture of each shape, some seconds)
    max_batch : largest batch expected; larger ones still run (in a larger bucket)
    """

    def __init__(
        self,
        model_path: Path,
        *,
        device: str = "cuda:0",
        dtype: str = "fp32",
        cuda_graphs: bool = True,
        compile_step: bool = False,
        max_batch: int = 256,
    ) -> None:
        import onnx
        import torch

        from engines.network.dance_net import DanceNet
        from engines.network.file import read_network

        if not Path(model_path).is_file():
            raise EngineError(f"model file not found: {model_path}")
        self._torch = torch
        self.device = torch.device(device)
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise EngineError("torch sees no CUDA device")
        if dtype not in ("fp16", "fp32"):
            raise EngineError(f"torch dtype must be fp16 or fp32, got {dtype!r}")
        self.dtype = torch.float16 if dtype == "fp16" else torch.float32
        self.cuda_graphs = bool(cuda_graphs and self.device.type == "cuda")
        self.max_batch = max_batch
        self.name = "torch-cuda" if self.cuda_graphs else f"torch-eager-{self.device.type}"
        self.state_rows = TORCH_ROWS
        self.profile: ShapeProfile | None = None  # any batch: larger ones run in a larger bucket
        self.prepares_shapes = self.cuda_graphs  # a CUDA graph capture per batch bucket
        model = onnx.load(str(model_path), load_external_data=False)
        self.spec = ModelSpec.from_metadata({p.key: p.value for p in model.metadata_props})
        try:
            config, params = read_network(Path(model_path))
        except ParameterError as exc:
            raise EngineError(str(exc)) from exc
        net = DanceNet(config)
        net.load_state_dict({name: torch.from_numpy(value) for name, value in params.items()})
        self._net = net.to(self.device).eval().requires_grad_(False)
        if compile_step and self.cuda_graphs:
            self._net.compile_steps()
        self._state_names = list(self.spec.state_shapes)
        self._graphs: dict[tuple[int, int], _Graph] = {}
        self._lock = threading.Lock()
        self._pool = torch.cuda.graph_pool_handle() if self.cuda_graphs else None

    # -- state --------------------------------------------------------------------------------------------

    def initial_state(self, batch: int) -> dict[str, Any]:
        """Zeros on the device for every state tensor: the start of ``batch`` dances."""
        torch = self._torch
        return {
            name: torch.zeros((batch, *shape), dtype=torch.float32, device=self.device)
            for name, shape in self.spec.state_shapes.items()
        }

    def _check_state(self, state: Mapping[str, Any], batch: int) -> None:
        for name, shape in self.spec.state_shapes.items():
            if name not in state:
                raise EngineError(f"state {name!r} is missing")
            got = tuple(state[name].shape)
            if got != (batch, *shape):
                raise EngineError(f"state {name!r} must be {(batch, *shape)}, got {got}")

    # -- running ------------------------------------------------------------------------------------------

    def _forward(self, feeds: Mapping[str, Any]) -> dict[str, Any]:
        """The network on one chunk: contract-named feeds in, ``poses`` and ``state_out_*`` out (fp32)."""
        torch = self._torch
        inputs = {name: feeds[name] for name in self.spec.input_widths}
        state = {name: feeds[STATE_IN_PREFIX + name] for name in self._state_names}
        with torch.autocast(self.device.type, dtype=torch.float16, enabled=self.dtype == torch.float16):
            poses, new_state = self._net.run_chunk(inputs, state)
        out = {POSES_OUTPUT: poses.float()}
        out.update({STATE_OUT_PREFIX + n: new_state[n].float() for n in self._state_names})
        return out

    def _feeds_like(self, batch: int, frames: int) -> dict[str, Any]:
        torch = self._torch
        feeds = {
            name: torch.zeros((batch, frames, width), dtype=torch.float32, device=self.device)
            for name, width in self.spec.input_widths.items()
        }
        for name, shape in self.spec.state_shapes.items():
            feeds[STATE_IN_PREFIX + name] = torch.zeros(
                (batch, *shape), dtype=torch.float32, device=self.device
            )
        return feeds

    def _captured(self, batch: int, frames: int) -> _Graph:
        key = (batch, frames)
        if key in self._graphs:
            return self._graphs[key]
        torch = self._torch
        feeds = self._feeds_like(batch, frames)
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            self._forward(feeds)  # warm-up outside the capture (allocations, library handles)
        torch.cuda.current_stream(self.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self._pool):
            outputs = self._forward(feeds)

        def staging() -> dict[str, Any]:
            return {
                name: torch.zeros(tuple(feeds[name].shape), dtype=torch.float32, pin_memory=True)
                for name in self.spec.input_widths
            }

        def poses_host() -> Any:
            return torch.zeros((batch, frames, 75), dtype=torch.float32, pin_memory=True)

        captured = _Graph(feeds, outputs, graph, (staging(), staging()), (poses_host(), poses_host()))
        self._graphs[key] = captured
        return captured

    def input_buffers(self, batch: int, frames: int) -> dict[str, np.ndarray] | None:
        """With CUDA graphs, the page-locked host buffers the next launch of this shape copies its inputs
        from (the graph captured on first use, as :meth:`launch` would); eager, None."""
        if not self.cuda_graphs:
            return None
        with (
            self._lock,
            self._torch.no_grad(),
        ):  # captured as launch captures it (a compiled step is per grad mode)
            g = self._captured(batch_bucket(batch), frames)
        return {name: g.staging[g.turn][name][:batch].numpy() for name in self.spec.input_widths}

    def launch(
        self, inputs: Mapping[str, np.ndarray], state: Mapping[str, Any]
    ) -> tuple[PendingPoses, dict[str, Any]]:
        """Queue one chunk of ``T`` frames for ``B`` sequences on the device's stream and return at once.

        The new state is on the device, ready to be passed to the next launch (the stream keeps the
        order). Inputs written into :meth:`input_buffers` are sent as they are, without a host copy.
        Wait for a launch's poses before launching the same shape twice more: the shape's two sets
        of host buffers are taken in turn.
        """
        batch, frames = check_chunk(inputs, self.spec)
        self._check_state(state, batch)
        torch = self._torch
        with self._lock, torch.no_grad():
            if not self.cuda_graphs:
                poses, new_state = self._run_eager(inputs, state, batch)
                return ReadyPoses(poses), new_state
            g = self._captured(batch_bucket(batch), frames)
            staging, poses_host = g.staging[g.turn], g.poses_host[g.turn]
            g.turn ^= 1
            for name in self.spec.input_widths:
                host = staging[name]
                view = host[:batch].numpy()
                if not _same_buffer(view, inputs[name]):
                    view[...] = inputs[name]
                g.feeds[name].copy_(host, non_blocking=True)
            for name in self._state_names:
                g.feeds[STATE_IN_PREFIX + name][:batch].copy_(state[name], non_blocking=True)
            g.graph.replay()
            poses_host[:batch].copy_(g.outputs[POSES_OUTPUT][:batch], non_blocking=True)
            new_state = {n: g.outputs[STATE_OUT_PREFIX + n][:batch].clone() for n in self._state_names}
            done = torch.cuda.Event()
            done.record(torch.cuda.current_stream(self.device))
            return _PendingPoses(done, poses_host, batch), new_state

    def run(
        self, inputs: Mapping[str, np.ndarray], state: Mapping[str, Any]
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Run one chunk of ``T`` frames for ``B`` sequences and wait for its poses; the state stays put."""
        pending, new_state = self.launch(inputs, state)
        return pending.wait(), new_state

    def _run_eager(
        self, inputs: Mapping[str, np.ndarray], state: Mapping[str, Any], batch: int
    ) -> tuple[np.ndarray, dict[str, Any]]:
        torch = self._torch
        feeds = {
            name: torch.from_numpy(np.ascontiguousarray(inputs[name], dtype=np.float32)).to(self.device)
            for name in self.spec.input_widths
        }
        feeds.update({STATE_IN_PREFIX + n: state[n] for n in self._state_names})
        out = self._forward(feeds)
        poses = out[POSES_OUTPUT][:batch].cpu().numpy()
        return poses, {n: out[STATE_OUT_PREFIX + n] for n in self._state_names}
