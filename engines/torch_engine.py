"""The torch backends: the ONNX model's own computation run by torch.

``torch-cuda`` runs it on an NVIDIA GPU with the large matrix products in fp16
(everything else, the recurrent state included, in fp32) and replays one CUDA
graph per shape bucket: the batch is padded up to a
power of two (padded rows are computed and thrown away, their state never
kept), and each chunk length gets its own graph, so after the first call of a
shape a whole chunk is one graph launch. With ``cuda_graphs=False`` and fp32 it
is the plain eager baseline that every optimisation is measured against, and
on the CPU it lets the same code be tested anywhere.

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

from choreo.errors import EngineError
from engines.base import (
    POSES_OUTPUT,
    STATE_IN_PREFIX,
    STATE_OUT_PREFIX,
    ModelSpec,
    check_chunk,
)
from engines.settings import ShapeProfile
from engines.state import TORCH_ROWS
from engines.torch_graph import FlatProgram, trace_program

__all__ = ["TorchEngine", "batch_bucket"]


def batch_bucket(batch: int) -> int:
    """The padded batch a CUDA graph is captured for: the next power of two."""
    if batch < 1:
        raise EngineError(f"batch must be at least 1, got {batch}")
    return 1 << (batch - 1).bit_length()


@dataclass
class _Runner:
    """One traced shape: the program, its static buffers and (on CUDA) its graph."""

    program: FlatProgram
    feeds: dict[str, Any]
    outputs: dict[str, Any]
    graph: Any | None
    staging: dict[str, Any]
    poses_host: Any


class TorchEngine:
    """Runs the ONNX chunk graph with torch on one device.

    Parameters
    ----------
    model_path : the ONNX chunk model (fp32)
    device : torch device, e.g. ``"cuda:0"`` or ``"cpu"``
    dtype : ``"fp16"`` or ``"fp32"``, the precision of the large matrix products
    cuda_graphs : capture and replay a CUDA graph per (batch bucket, chunk length)
    max_batch : largest batch expected; larger ones still run (in a larger bucket)
    compile_bodies : fuse each ``Scan`` body with ``torch.compile`` (one compile per model,
        dynamic batch), then call it once per frame; fewer kernel launches per frame
    """

    def __init__(
        self,
        model_path: Path,
        *,
        device: str = "cuda:0",
        dtype: str = "fp16",
        cuda_graphs: bool = True,
        max_batch: int = 256,
        compile_bodies: bool = False,
    ) -> None:
        import onnx
        import torch

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
        self.compile_bodies = compile_bodies
        if compile_bodies:
            # A state width equal to the batch must not pin the batch size in the compiled body.
            torch.fx.experimental._config.use_duck_shape = False
        self._compiled: dict[str, Any] = {}
        self.name = "torch-cuda" if self.cuda_graphs else f"torch-eager-{self.device.type}"
        self.state_rows = TORCH_ROWS
        self.profile: ShapeProfile | None = None  # any batch: larger ones run in a larger bucket
        self.prepares_shapes = self.cuda_graphs  # a CUDA graph capture per batch bucket
        self._model = onnx.load(str(model_path))
        meta = {p.key: p.value for p in self._model.metadata_props}
        self.spec = ModelSpec.from_metadata(meta)
        self._state_names = list(self.spec.state_shapes)
        self._outputs = [POSES_OUTPUT] + [STATE_OUT_PREFIX + n for n in self._state_names]
        self._runners: dict[tuple[int, int], _Runner] = {}
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

    # -- running ------------------------------------------------------------------------------------------

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

    def _runner(self, batch: int, frames: int) -> _Runner:
        key = (batch, frames)
        if key in self._runners:
            return self._runners[key]
        torch = self._torch
        feeds = self._feeds_like(batch, frames)
        program = trace_program(
            self._model,
            feeds,
            device=self.device,
            inner_dtype=torch.float32,
            matmul_dtype=self.dtype,
            outputs=self._outputs,
            compile_bodies=self.compile_bodies,
            compiled=self._compiled,
        )
        graph = None
        if self.cuda_graphs:
            side = torch.cuda.Stream(self.device)
            side.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(side), torch.no_grad():
                program(feeds)
            torch.cuda.current_stream(self.device).wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.no_grad(), torch.cuda.graph(graph, pool=self._pool):
                outputs = program(feeds)
        else:
            outputs = {}
        pin = self.device.type == "cuda"
        staging = {
            name: torch.zeros(tuple(feeds[name].shape), dtype=torch.float32, pin_memory=pin)
            for name in self.spec.input_widths
        }
        poses_host = torch.zeros((batch, frames, 75), dtype=torch.float32, pin_memory=pin)
        runner = _Runner(program, feeds, outputs, graph, staging, poses_host)
        self._runners[key] = runner
        return runner

    def _check_state(self, state: Mapping[str, Any], batch: int) -> None:
        for name, shape in self.spec.state_shapes.items():
            if name not in state:
                raise EngineError(f"state {name!r} is missing")
            got = tuple(state[name].shape)
            if got != (batch, *shape):
                raise EngineError(f"state {name!r} must be {(batch, *shape)}, got {got}")

    def run(
        self, inputs: Mapping[str, np.ndarray], state: Mapping[str, Any]
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Run one chunk of ``T`` frames for ``B`` sequences; state stays on the device."""
        batch, frames = check_chunk(inputs, self.spec)
        self._check_state(state, batch)
        torch = self._torch
        with self._lock, torch.no_grad():
            if not self.cuda_graphs:
                return self._run_eager(inputs, state, batch, frames)
            runner = self._runner(batch_bucket(batch), frames)
            graph = runner.graph
            assert graph is not None, "with cuda_graphs every runner captures its graph"
            for name in self.spec.input_widths:
                host = runner.staging[name]
                host[:batch].numpy()[...] = inputs[name]
                runner.feeds[name].copy_(host, non_blocking=True)
            for name in self._state_names:
                runner.feeds[STATE_IN_PREFIX + name][:batch].copy_(state[name], non_blocking=True)
            graph.replay()
            runner.poses_host[:batch].copy_(runner.outputs[POSES_OUTPUT][:batch], non_blocking=True)
            new_state = {n: runner.outputs[STATE_OUT_PREFIX + n][:batch].clone() for n in self._state_names}
            torch.cuda.current_stream(self.device).synchronize()
            return runner.poses_host[:batch].numpy().copy(), new_state

    def _run_eager(
        self, inputs: Mapping[str, np.ndarray], state: Mapping[str, Any], batch: int, frames: int
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Without CUDA graphs: the traced program for the batch bucket, rows padded with zeros.

        Padding to the bucket keeps the number of traces small when the batcher's
        batch size changes from call to call.
        """
        torch = self._torch
        bucket = batch_bucket(batch)
        runner = self._runner(bucket, frames)
        feeds = {}
        for name in self.spec.input_widths:
            host = np.zeros((bucket, frames, np.shape(inputs[name])[2]), dtype=np.float32)
            host[:batch] = inputs[name]
            feeds[name] = torch.from_numpy(host).to(self.device)
        for name, shape in self.spec.state_shapes.items():
            rows = torch.zeros((bucket, *shape), dtype=torch.float32, device=self.device)
            rows[:batch] = state[name]
            feeds[STATE_IN_PREFIX + name] = rows
        out = runner.program(feeds)
        poses = out[POSES_OUTPUT][:batch].float().cpu().numpy()
        return poses, {n: out[STATE_OUT_PREFIX + n][:batch] for n in self._state_names}
