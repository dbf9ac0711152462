"""Which backends this machine can run, and loading the one to use.

Backends are tried in order of speed: TensorRT, then torch on CUDA, then ONNX
Runtime on the CPU, which is always there. ``CHOREO_ENGINE_BACKEND`` picks one
by name instead of ``auto``; asking for a backend the machine cannot run is an
error that says why, never a silent fallback.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from choreo.errors import EngineError
from engines.base import Engine
from engines.settings import EngineSettings, get_engine_settings

__all__ = ["BACKENDS", "Backend", "backend_status", "choose_backend", "load_engine"]


@dataclass(frozen=True)
class Backend:
    """A way to run the model.

    Parameters
    ----------
    name : the name used in settings and reports
    probe : returns None when the backend can run here, else the reason it cannot
    load : builds the engine from the ONNX model path and the settings
    """

    name: str
    probe: Callable[[], str | None]
    load: Callable[[Path, EngineSettings], Engine]


def _cuda_device_count() -> tuple[int, str]:
    """GPUs visible through the CUDA driver (cuda-python), with the reason when none."""
    try:
        from cuda.bindings import driver
    except ImportError:
        return 0, "cuda-python is not installed (pip install 'choreo[gpu]')"
    try:
        (err,) = driver.cuInit(0)
    except RuntimeError as exc:  # cuda-python without the NVIDIA driver library (libcuda)
        return 0, f"no CUDA driver: {exc}"
    if err != driver.CUresult.CUDA_SUCCESS:
        return 0, f"no usable CUDA driver ({err.name})"
    err, count = driver.cuDeviceGetCount()
    if err != driver.CUresult.CUDA_SUCCESS or count == 0:
        return 0, "no CUDA device found"
    return int(count), ""


def _probe_tensorrt() -> str | None:
    if importlib.util.find_spec("tensorrt") is None:
        return "TensorRT is not installed (pip install 'choreo[gpu]' on a machine with NVIDIA's index)"
    count, reason = _cuda_device_count()
    return None if count else reason


def _probe_torch_cuda() -> str | None:
    if importlib.util.find_spec("torch") is None:
        return "torch is not installed"
    import torch

    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    return None


def _probe_onnxruntime() -> str | None:
    return None if importlib.util.find_spec("onnxruntime") else "onnxruntime is not installed"


def _load_tensorrt(model_path: Path, settings: EngineSettings) -> Engine:
    from engines.tensorrt_engine import TensorRTEngine

    return TensorRTEngine.from_onnx(model_path, settings)


def _load_torch_cuda(model_path: Path, settings: EngineSettings) -> Engine:
    from engines.torch_engine import TorchEngine

    return TorchEngine(
        model_path,
        device=f"cuda:{settings.device}",
        dtype=settings.torch_dtype,
        cuda_graphs=settings.cuda_graphs,
        max_batch=settings.max_batch,
        compile_bodies=settings.torch_compile,
    )


def _load_onnxruntime(model_path: Path, settings: EngineSettings) -> Engine:
    from engines.onnxruntime_engine import OnnxRuntimeEngine

    return OnnxRuntimeEngine(model_path, threads=settings.resolved_ort_threads())


BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in (
        Backend("tensorrt", _probe_tensorrt, _load_tensorrt),
        Backend("torch-cuda", _probe_torch_cuda, _load_torch_cuda),
        Backend("onnxruntime", _probe_onnxruntime, _load_onnxruntime),
    )
}
"""Every backend, fastest first: the order ``auto`` tries them in."""


def backend_status() -> dict[str, str | None]:
    """Each backend's name and None if it can run here, else the reason it cannot."""
    return {name: backend.probe() for name, backend in BACKENDS.items()}


def choose_backend(settings: EngineSettings | None = None) -> str:
    """The backend to load: the configured one, or the fastest that can run here.

    Raises
    ------
    EngineError
        When the configured backend cannot run here (the reason is in the message).
    """
    settings = settings or get_engine_settings()
    if settings.backend != "auto":
        reason = BACKENDS[settings.backend].probe()
        if reason is not None:
            raise EngineError(f"engine backend {settings.backend!r} was asked for but cannot run: {reason}")
        return settings.backend
    for name, backend in BACKENDS.items():
        if backend.probe() is None:
            return name
    raise EngineError(f"no engine backend can run here: {backend_status()}")


def load_engine(model_path: Path | None = None, settings: EngineSettings | None = None) -> Engine:
    """Load the model with the chosen backend (see :func:`choose_backend`)."""
    settings = settings or get_engine_settings()
    path = Path(model_path) if model_path is not None else settings.resolved_model_path()
    if not path.is_file():
        raise EngineError(f"model file not found: {path}")
    return BACKENDS[choose_backend(settings)].load(path, settings)
