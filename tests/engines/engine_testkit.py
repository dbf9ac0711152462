"""Inputs and backend factories shared by the engine tests."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from choreo.contracts.model_spec import ModelSpec

__all__ = ["BACKEND_FACTORIES", "backend_skip_reason", "make_inputs", "to_numpy_state"]

# The engine contract is checked on the earlier styled LSTM (music, style, latent in; trained,
# self-contained), kept as a fixture only: the shipped guided model has the same contract.
STYLED_MODEL = Path(__file__).resolve().parents[2] / "tests" / "data" / "styled-lstm.onnx"


def make_inputs(spec: ModelSpec, batch: int, frames: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random conditioning of the model's widths: features, a one-hot style per sequence, a latent."""
    styles = rng.integers(0, len(spec.styles), size=batch)
    style = np.zeros((batch, frames, len(spec.styles)), dtype=np.float32)
    style[np.arange(batch), :, styles] = 1.0
    return {
        "music": rng.standard_normal((batch, frames, spec.feature_dim)).astype(np.float32),
        "style": style,
        "latent": rng.standard_normal((batch, frames, spec.latent_dim)).astype(np.float32),
    }


def to_numpy_state(state: dict[str, Any]) -> dict[str, np.ndarray]:
    """A backend's state as host arrays, for comparisons."""
    out = {}
    for name, value in state.items():
        if hasattr(value, "detach"):
            value = value.detach().float().cpu().numpy()
        elif hasattr(value, "to_host"):
            value = value.to_host()
        out[name] = np.asarray(value, dtype=np.float32)
    return out


def _torch_cuda_reason() -> str | None:
    from engines.registry import BACKENDS

    return BACKENDS["torch-cuda"].probe()


def _tensorrt_reason() -> str | None:
    from engines.registry import BACKENDS

    return BACKENDS["tensorrt"].probe()


def _torch_cpu_reason() -> str | None:
    return None if importlib.util.find_spec("torch") else "torch is not installed (pip install '.[train]')"


def _ort(path: Path) -> Any:
    from engines.onnxruntime_engine import OnnxRuntimeEngine

    return OnnxRuntimeEngine(path, threads=1)


def _torch_cpu(path: Path) -> Any:
    from engines.torch_engine import TorchEngine

    return TorchEngine(path, device="cpu", dtype="fp32", cuda_graphs=False)


def _torch_cuda(path: Path) -> Any:
    from engines.torch_engine import TorchEngine

    return TorchEngine(path, device="cuda:0", dtype="fp32", cuda_graphs=True, max_batch=16)


def _tensorrt(path: Path) -> Any:
    from engines.settings import EngineSettings
    from engines.tensorrt_engine import TensorRTEngine

    return TensorRTEngine.from_onnx(path, EngineSettings(precision="fp32", profile="realtime"))


# name -> (reason it cannot run here or None, factory, absolute tolerance on poses)
BACKEND_FACTORIES: dict[str, tuple[Callable[[], str | None], Callable[[Path], Any], float]] = {
    "onnxruntime": (lambda: None, _ort, 1e-4),
    "torch-eager-cpu": (_torch_cpu_reason, _torch_cpu, 1e-4),
    "torch-cuda": (_torch_cuda_reason, _torch_cuda, 1e-4),
    "tensorrt": (_tensorrt_reason, _tensorrt, 1e-3),
}


def backend_skip_reason(name: str) -> str | None:
    """Why the backend cannot be tested on this machine, or None."""
    return BACKEND_FACTORIES[name][0]()
