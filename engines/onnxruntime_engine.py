"""The CPU engine: the ONNX model run by ONNX Runtime, the embedded default."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from choreo.contracts.model_spec import ModelSpec
from choreo.errors import EngineError
from engines.base import POSES_OUTPUT, STATE_IN_PREFIX, STATE_OUT_PREFIX, ReadyPoses, check_chunk
from engines.settings import ShapeProfile
from engines.state import NUMPY_ROWS

__all__ = ["OnnxRuntimeEngine"]

State = dict[str, np.ndarray]


class OnnxRuntimeEngine:
    """Runs the chunk graph with ONNX Runtime; state stays in host memory.

    Parameters
    ----------
    model_path : the ONNX chunk model (fp32, or an fp16 / int8 conversion with float32 I/O)
    threads : intra-op threads; the machine's cores shared with the rest of the worker
    """

    name = "onnxruntime"
    state_rows = NUMPY_ROWS
    profile: ShapeProfile | None = None  # any batch
    prepares_shapes = False

    def __init__(self, model_path: Path, *, threads: int = 2) -> None:
        import onnxruntime as ort

        if not Path(model_path).is_file():
            raise EngineError(f"model file not found: {model_path}")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only: converted models trip harmless warnings
        try:
            self._session = ort.InferenceSession(
                str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # ORT raises its own untyped errors
            raise EngineError(f"cannot load model {model_path}: {exc}") from exc
        self.spec = ModelSpec.from_metadata(self._session.get_modelmeta().custom_metadata_map)
        self._state_names = list(self.spec.state_shapes)
        self._outputs = [POSES_OUTPUT] + [STATE_OUT_PREFIX + name for name in self._state_names]

    def initial_state(self, batch: int) -> State:
        """Zeros for every state tensor: the start of ``batch`` dances."""
        return {
            name: np.zeros((batch, *shape), dtype=np.float32)
            for name, shape in self.spec.state_shapes.items()
        }

    def launch(self, inputs: Mapping[str, np.ndarray], state: State) -> tuple[ReadyPoses, State]:
        """Run the chunk now (see :meth:`run`): nothing is left to wait for."""
        poses, new_state = self.run(inputs, state)
        return ReadyPoses(poses), new_state

    def input_buffers(self, batch: int, frames: int) -> None:
        """None: ONNX Runtime on the CPU reads any host array as it is."""
        return None

    def run(self, inputs: Mapping[str, np.ndarray], state: State) -> tuple[np.ndarray, State]:
        """Run one chunk of ``T`` frames for ``B`` sequences.

        Raises
        ------
        EngineError
            When an input or state tensor has the wrong shape, or ONNX Runtime fails.
        """
        batch, _ = check_chunk(inputs, self.spec)
        feeds = {
            name: np.ascontiguousarray(inputs[name], dtype=np.float32) for name in self.spec.input_widths
        }
        for name in self._state_names:
            if name not in state:
                raise EngineError(f"state {name!r} is missing")
            value = np.ascontiguousarray(state[name], dtype=np.float32)
            expected = (batch, *self.spec.state_shapes[name])
            if value.shape != expected:
                raise EngineError(f"state {name!r} must be {expected}, got {value.shape}")
            feeds[STATE_IN_PREFIX + name] = value
        try:
            poses, *new_state = self._session.run(self._outputs, feeds)
        except Exception as exc:
            raise EngineError(f"ONNX Runtime failed on a chunk: {exc}") from exc
        return poses, dict(zip(self._state_names, new_state, strict=True))
