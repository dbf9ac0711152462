"""Inputs and backend factories shared by the engine tests."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from choreo.contracts.model_spec import ModelSpec
from choreo.models import DEFAULT_MODEL_PATH
from choreo.motion.skeleton import REST_PELVIS_HEIGHT_M

__all__ = ["BACKEND_FACTORIES", "SHIPPED_MODEL", "backend_skip_reason", "make_inputs", "to_numpy_state"]

SHIPPED_MODEL = DEFAULT_MODEL_PATH
"""The model the product ships (``choreo-guided.onnx``: music, guide, junction and latent in, trained)."""

_MAX_JUNCTION_S = 2.0
"""Longest gap to a junction in :func:`make_inputs`, about a phrase."""


def make_inputs(spec: ModelSpec, batch: int, frames: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random conditioning for every input the model declares, ``{name: [batch, frames, width]}`` float32.

    Music features and the latent are standard normal; a style is one-hot, one per sequence; a guide
    is a pose of the contract layout (joint rotations of about 0.3 rad, the root near the floor's
    centre at the rest pose's pelvis height); a junction is the seconds since the previous and to
    the next junction.
    """
    out: dict[str, np.ndarray] = {}
    for name, width in spec.input_widths.items():
        shape = (batch, frames, width)
        if name == "style":
            value = np.zeros(shape)
            value[np.arange(batch), :, rng.integers(0, width, size=batch)] = 1.0
        elif name == "guide":
            value = rng.normal(0.0, 0.3, size=shape)
            value[..., -3:] = rng.normal(
                (0.0, REST_PELVIS_HEIGHT_M, 0.0), (0.3, 0.05, 0.3), size=(*shape[:2], 3)
            )
        elif name == "junction":
            value = rng.uniform(0.0, _MAX_JUNCTION_S, size=shape)
        else:
            value = rng.standard_normal(shape)
        out[name] = value.astype(np.float32)
    return out


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


def _torch_cuda_compiled(path: Path) -> Any:
    from engines.torch_engine import TorchEngine

    return TorchEngine(path, device="cuda:0", dtype="fp32", cuda_graphs=True, compile_step=True, max_batch=16)


def _tensorrt(path: Path) -> Any:
    from engines.settings import EngineSettings
    from engines.tensorrt_engine import TensorRTEngine

    return TensorRTEngine.from_onnx(path, EngineSettings(precision="fp32", profile="realtime"))


# name -> (reason it cannot run here or None, factory, absolute tolerance on poses)
BACKEND_FACTORIES: dict[str, tuple[Callable[[], str | None], Callable[[Path], Any], float]] = {
    "onnxruntime": (lambda: None, _ort, 1e-4),
    "torch-eager-cpu": (_torch_cpu_reason, _torch_cpu, 1e-4),
    "torch-cuda": (_torch_cuda_reason, _torch_cuda, 1e-4),
    "torch-cuda-compiled": (_torch_cuda_reason, _torch_cuda_compiled, 1e-4),
    "tensorrt": (_tensorrt_reason, _tensorrt, 1e-3),
}


def backend_skip_reason(name: str) -> str | None:
    """Why the backend cannot be tested on this machine, or None."""
    return BACKEND_FACTORIES[name][0]()
