"""Which backends this machine can run, and loading the one to use.

Backends are tried in order of speed: TensorRT, then torch on CUDA, then ONNX
Runtime on the CPU, which is always there. ``CHOREO_ENGINE_BACKEND`` picks one
by name instead of ``auto``; asking for a backend the machine cannot run is an
error that says why, never a silent fallback. The TensorRT backend runs
TensorRT 11 or TensorRT-RTX (:mod:`engines.tensorrt_flavour`); its status names
the one loaded and, when it cannot run, why (no GPU, or a GPU that flavour does
not serve).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from choreo.contracts.model_spec import ModelSpec
from choreo.errors import EngineError
from engines.base import Engine
from engines.settings import EngineSettings, get_engine_settings
from engines.tensorrt_flavour import Flavour, get_flavour, gpu_reason

__all__ = [
    "BACKENDS",
    "Backend",
    "backend_status",
    "choose_backend",
    "cuda_gpu",
    "load_engine",
    "model_spec",
    "tensorrt_build_reason",
    "tensorrt_flavour_line",
]


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


def cuda_gpu(device: int = 0) -> tuple[str, tuple[int, int]] | str:
    """The GPU's name and compute capability through the CUDA driver (cuda-python), else why none."""
    try:
        from cuda.bindings import driver
    except ImportError:
        return "cuda-python is not installed (pip install 'choreo[gpu]' or 'choreo[rtx]')"
    try:
        (err,) = driver.cuInit(0)
    except Exception as exc:  # cuda-python raises when the driver library itself is missing
        return f"no CUDA driver ({type(exc).__name__})"
    if err != driver.CUresult.CUDA_SUCCESS:
        return f"no usable CUDA driver ({err.name})"
    err, count = driver.cuDeviceGetCount()
    if err != driver.CUresult.CUDA_SUCCESS or count == 0:
        return "no CUDA device found"
    if device >= count:
        return f"CUDA device {device} asked for, {count} found"
    _, handle = driver.cuDeviceGet(device)
    _, raw = driver.cuDeviceGetName(64, handle)
    attr = driver.CUdevice_attribute
    _, major = driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle)
    _, minor = driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle)
    name = raw.decode(errors="replace").strip("\x00 ") if isinstance(raw, bytes) else str(raw)
    return name, (int(major), int(minor))


def _flavour() -> Flavour | str:
    """The TensorRT flavour the settings resolve to, or why there is none."""
    try:
        return get_flavour()
    except EngineError as exc:
        return str(exc)


def tensorrt_flavour_line() -> str:
    """One line on the TensorRT flavour this process would load, for ``choreo engines list``."""
    settings = get_engine_settings()
    flavour = _flavour()
    if isinstance(flavour, str):
        return f"tensorrt flavour ({settings.tensorrt_flavour}): none: {flavour}"
    builds = "builds engines without a GPU" if flavour.builds_without_gpu else "builds on the target GPU"
    targets = f", targets compute capability {', '.join(settings.rtx_targets)}" if flavour.is_rtx else ""
    return f"tensorrt flavour ({settings.tensorrt_flavour}): {flavour.label} ({builds}{targets})"


def tensorrt_build_reason() -> str | None:
    """None when a TensorRT engine can be built here, else why not.

    TensorRT-RTX builds on any machine; TensorRT 11 needs the GPU it builds for.
    """
    flavour = _flavour()
    if isinstance(flavour, str):
        return flavour
    if flavour.builds_without_gpu:
        return None
    gpu = cuda_gpu(get_engine_settings().device)
    return f"{flavour.label} builds on the GPU it targets: {gpu}" if isinstance(gpu, str) else None


def _probe_tensorrt() -> str | None:
    settings = get_engine_settings()
    flavour = _flavour()
    if isinstance(flavour, str):
        return flavour
    gpu = cuda_gpu(settings.device)
    if isinstance(gpu, str):
        builds = " (it builds engines here; running one needs a GPU)" if flavour.builds_without_gpu else ""
        return f"{flavour.label}: {gpu}{builds}"
    name, cc = gpu
    reason = gpu_reason(flavour.name, cc, settings.rtx_targets)
    return None if reason is None else f"{flavour.label} on {name}: {reason}"


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
        compile_step=settings.torch_compile,
        max_batch=settings.max_batch,
    )


def _load_onnxruntime(model_path: Path, settings: EngineSettings) -> Engine:
    from engines.onnxruntime_engine import OnnxRuntimeEngine

    return OnnxRuntimeEngine(model_path, threads=settings.threads)


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


@lru_cache(maxsize=8)
def _spec_of(path: Path) -> ModelSpec:
    import onnx

    if not path.is_file():
        raise EngineError(f"model file not found: {path}")
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as exc:  # onnx raises DecodeError and others for a file that is not a model
        raise EngineError(f"cannot read model {path}: {exc}") from exc
    return ModelSpec.from_metadata({p.key: p.value for p in model.metadata_props})


def model_spec(model_path: Path) -> ModelSpec:
    """What a model file is (native fps, inputs, styles), read from its metadata alone (cached per file)."""
    return _spec_of(Path(model_path).resolve())


def load_engine(model_path: Path, settings: EngineSettings | None = None) -> Engine:
    """Load the model with the chosen backend (see :func:`choose_backend`)."""
    settings = settings or get_engine_settings()
    path = Path(model_path)
    if not path.is_file():
        raise EngineError(f"model file not found: {path}")
    return BACKENDS[choose_backend(settings)].load(path, settings)
