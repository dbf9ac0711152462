"""The CPU engine: the ONNX model run by ONNX Runtime, the embedded default."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from choreo.errors import EngineError
from engines.base import POSES_OUTPUT, STATE_IN_PREFIX, STATE_OUT_PREFIX, ModelSpec, check_chunk

__all__ = ["OnnxRuntimeEngine"]

State = dict[str, np.ndarray]


class OnnxRuntimeEngine:
    """Runs the chunk graph with ONNX Runtime; state stays in host memory."""

    name = "onnxruntime"

    def __init__(self, model_path: Path, *, threads: int = 2) -> None:
        import onnxruntime as ort

        if not Path(model_path).is_file():
            raise EngineError(f"model file not found: {model_path}")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        try:
            self._session = ort.InferenceSession(
                str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # ORT raises its own untyped errors
            raise EngineError(f"cannot load model {model_path}: {exc}") from exc
        self.spec = ModelSpec.from_metadata(self._session.get_modelmeta().custom_metadata_map)
        self._state_names = list(self.spec.state_shapes)

    def initial_state(self, batch: int) -> State:
        """Zeros for every state tensor: the start of ``batch`` dances."""
        return {
            name: np.zeros((batch, *shape), dtype=np.float32)
            for name, shape in self.spec.state_shapes.items()
        }

    def run(self, inputs: Mapping[str, np.ndarray], state: State) -> tuple[np.ndarray, State]:
        """Run one chunk of ``T`` frames for ``B`` sequences."""
        check_chunk(inputs, self.spec)
        feeds = {
            name: np.ascontiguousarray(inputs[name], dtype=np.float32)
            for name in ("music", "style", "latent")
        }
        feeds.update({STATE_IN_PREFIX + name: state[name] for name in self._state_names})
        outputs = [POSES_OUTPUT] + [STATE_OUT_PREFIX + name for name in self._state_names]
        try:
            poses, *new_state = self._session.run(outputs, feeds)
        except Exception as exc:
            raise EngineError(f"ONNX Runtime failed on a chunk: {exc}") from exc
        return poses, dict(zip(self._state_names, new_state, strict=True))
