"""TensorRT 11 or TensorRT-RTX: which one this process uses, and every place their APIs differ.

Two NVIDIA libraries build and run our engines through nearly the same Python
API (``tensorrt`` 11.x and ``tensorrt_rtx`` 1.7). The builder
(:mod:`engines.tensorrt_build`) and the runtime (:mod:`engines.tensorrt_engine`)
are written once against that common API and ask a :class:`Flavour` for the rest:

================================  ==============================  ===================================
                                  TensorRT 11 (``tensorrt``)      TensorRT-RTX (``tensorrt_rtx``)
================================  ==============================  ===================================
GPUs that run its engines         every NVIDIA GPU from Turing    compute capability 8.0, 8.6, 8.9,
                                  (7.5) on, H100/H200 included    12.0, 12.1 (7.5 when targeted);
                                                                  not Hopper (9.0) nor Volta
building                          on the target GPU (autotunes)   on any machine, GPU or not (AOT)
an engine is specific to          the GPU model it was built on   its target compute capabilities
cache key's ``target``            the GPU's name                  the target compute capabilities
build-time cache                  timing cache, one per GPU       none (its timing cache is a no-op)
run-time cache                    none                            the runtime cache of the kernels it
                                                                  compiles just in time, per engine
                                                                  and GPU
execution context                 ``create_execution_context()``  from a runtime config holding the
                                                                  runtime cache
================================  ==============================  ===================================

Both build strongly typed networks only: the precision is in the ONNX graph
(:mod:`engines.precision`), never in builder flags.

The flavour is chosen once per process (``CHOREO_ENGINE_TENSORRT_FLAVOUR``):
``auto`` takes TensorRT 11 where it is installed, else TensorRT-RTX; naming one
forces it.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from types import ModuleType
from typing import Any

from choreo.errors import EngineError
from engines.settings import RTX_DEFAULT_TARGETS, RTX_TARGETS, get_engine_settings

__all__ = [
    "FLAVOUR_CHOICES",
    "Flavour",
    "build_target",
    "choose_flavour",
    "get_flavour",
    "gpu_reason",
    "install_hint",
    "load_flavour",
]

FLAVOUR_CHOICES = ("auto", "tensorrt", "tensorrt-rtx")
_MODULES = {"tensorrt": "tensorrt", "tensorrt-rtx": "tensorrt_rtx"}
_LABELS = {"tensorrt": "TensorRT", "tensorrt-rtx": "TensorRT-RTX"}

TENSORRT_MIN_CC = (7, 5)
"""TensorRT 11 runs on Turing and later."""


def install_hint(name: str) -> str:
    """How to install a flavour (``tensorrt`` or ``tensorrt-rtx``)."""
    if name == "tensorrt":
        return "pip install 'choreo[gpu]' (TensorRT 11, from NVIDIA's package index)"
    return "pip install 'choreo[rtx]' (TensorRT-RTX, from PyPI)"


def _installed(name: str) -> bool:
    return importlib.util.find_spec(_MODULES[name]) is not None


def choose_flavour(choice: str = "auto") -> str | None:
    """The flavour ``choice`` resolves to here, or None when none is installed (nothing is imported).

    Raises
    ------
    EngineError
        When ``choice`` is not one of :data:`FLAVOUR_CHOICES`.
    """
    if choice not in FLAVOUR_CHOICES:
        raise EngineError(f"TensorRT flavour must be one of {FLAVOUR_CHOICES}, got {choice!r}")
    if choice != "auto":
        return choice if _installed(choice) else None
    return next((name for name in ("tensorrt", "tensorrt-rtx") if _installed(name)), None)


def gpu_reason(flavour: str, compute_capability: tuple[int, int], targets: Sequence[str] = ()) -> str | None:
    """None when ``flavour``'s engines run on a GPU of ``compute_capability``, else why not.

    ``targets`` are TensorRT-RTX's build targets (``"8.6"``...; default
    :data:`RTX_DEFAULT_TARGETS`); TensorRT 11 builds on the GPU itself.
    """
    major, minor = compute_capability
    cc = f"{major}.{minor}"
    if flavour == "tensorrt":
        if (major, minor) < TENSORRT_MIN_CC:
            return f"this GPU's compute capability {cc} is older than Turing (7.5), which TensorRT needs"
        return None
    targets = tuple(targets) or RTX_DEFAULT_TARGETS
    if cc in targets:
        return None
    if cc in RTX_TARGETS:
        return (
            f"this GPU's compute capability {cc} is not among the engine targets {', '.join(targets)} "
            f"(set CHOREO_ENGINE_RTX_TARGETS)"
        )
    return (
        f"this GPU's compute capability {cc} is not supported by TensorRT-RTX "
        f"(it serves {', '.join(RTX_TARGETS)}); install TensorRT: {install_hint('tensorrt')}"
    )


def build_target(flavour: str, *, gpu: str | None, targets: Sequence[str]) -> str:
    """What a plan is specific to, for the engine cache key.

    TensorRT 11: the GPU's name (``gpu``). TensorRT-RTX: its target compute capabilities.

    Raises
    ------
    EngineError
        For TensorRT 11 without a GPU.
    """
    if flavour == "tensorrt-rtx":
        return "cc " + ",".join(sorted(targets, key=lambda t: tuple(int(x) for x in t.split("."))))
    if not gpu:
        raise EngineError("TensorRT 11 builds on the GPU it targets, and none is visible")
    return gpu


class _ErrorLog(threading.local):
    """Per-thread list of the errors TensorRT logs while a :meth:`Flavour.capture` block runs."""

    def __init__(self) -> None:
        self.stack: list[list[str]] = []


@dataclass(frozen=True)
class Flavour:
    """One TensorRT library, and the operations where it differs from the other.

    Parameters
    ----------
    name : ``"tensorrt"`` or ``"tensorrt-rtx"``
    trt : the imported module (``tensorrt`` or ``tensorrt_rtx``)
    """

    name: str
    trt: ModuleType
    _errors: _ErrorLog = field(default_factory=_ErrorLog, repr=False, compare=False)

    @property
    def is_rtx(self) -> bool:
        """Whether this is TensorRT-RTX."""
        return self.name == "tensorrt-rtx"

    @property
    def version(self) -> str:
        """The library's version, e.g. ``"1.7.1.116"``."""
        return str(self.trt.__version__)

    @property
    def label(self) -> str:
        """A name for people, e.g. ``"TensorRT-RTX 1.7.1.116"``."""
        return f"{_LABELS[self.name]} {self.version}"

    @property
    def builds_without_gpu(self) -> bool:
        """TensorRT-RTX compiles ahead of time on any machine; TensorRT 11 autotunes on the GPU."""
        return self.is_rtx

    # -- logging ------------------------------------------------------------------------------
    @cached_property
    def logger(self) -> Any:
        """The process's one logger for this library.

        TensorRT-RTX keeps the first logger it is given for every later builder
        and runtime and ignores the others, so a logger per build would lose its
        errors; this one files them with the thread's :meth:`capture` block.
        """
        trt, errors = self.trt, self._errors

        class _Logger(trt.ILogger):  # type: ignore[name-defined]
            def __init__(self) -> None:
                trt.ILogger.__init__(self)

            def log(self, severity: Any, msg: str) -> None:
                bad = (trt.ILogger.Severity.ERROR, trt.ILogger.Severity.INTERNAL_ERROR)
                if severity in bad and errors.stack:
                    errors.stack[-1].append(msg)

        return _Logger()

    @contextmanager
    def capture(self) -> Iterator[list[str]]:
        """Collect the errors this thread's TensorRT calls log inside the block."""
        self._errors.stack.append([])
        try:
            yield self._errors.stack[-1]
        finally:
            self._errors.stack.pop()

    # -- building -----------------------------------------------------------------------------
    def configure_build(self, config: Any, *, targets: Sequence[str], timing_cache: bytes | None) -> None:
        """Set what differs on the builder config: RTX targets, or TensorRT 11's timing cache."""
        trt = self.trt
        if self.is_rtx:
            unknown = [t for t in targets if t not in RTX_TARGETS]
            if unknown or not targets:
                raise EngineError(
                    f"TensorRT-RTX targets must be among {sorted(RTX_TARGETS)}, got {list(targets)}"
                )
            config.num_compute_capabilities = len(targets)
            for i, target in enumerate(targets):
                config.set_compute_capability(getattr(trt.ComputeCapability, RTX_TARGETS[target]), i)
            return
        cache = config.create_timing_cache(timing_cache or b"")
        config.set_timing_cache(cache, ignore_mismatch=False)

    def timing_cache_bytes(self, config: Any) -> bytes | None:
        """TensorRT 11's timing cache after a build, to keep; None for TensorRT-RTX (it has none)."""
        if self.is_rtx:
            return None
        return bytes(config.get_timing_cache().serialize())

    # -- running ------------------------------------------------------------------------------
    def engine_invalid_reason(self, runtime: Any, plan: bytes) -> str | None:
        """TensorRT-RTX: why a serialized engine cannot run here, read from its header; else None."""
        if not self.is_rtx:
            return None
        trt = self.trt
        validity, diagnostics = runtime.get_engine_validity(plan)
        if validity != trt.EngineValidity.INVALID:
            return None
        names = [
            name
            for name, flag in trt.EngineInvalidityDiagnostics.__members__.items()
            if int(diagnostics) & int(flag)
        ]
        why = ", ".join(n.lower().replace("_", " ") for n in names) or "no usable GPU"
        return f"{self.label} says the engine cannot run here ({why})"

    def runtime_cache(self, engine: Any, blob: bytes | None) -> tuple[Any, bool]:
        """TensorRT-RTX: a runtime cache for ``engine``, loaded from ``blob``; TensorRT 11: ``(None, False)``.

        Returns the cache and whether ``blob`` was loaded (TensorRT-RTX refuses a
        blob made by another version or GPU; the cache then starts empty).
        """
        if not self.is_rtx:
            return None, False
        config = engine.create_runtime_config()
        cache = config.create_runtime_cache()
        loaded = bool(blob) and bool(cache.deserialize(blob))
        return cache, loaded

    def create_context(self, engine: Any, runtime_cache: Any) -> Any:
        """An execution context; TensorRT-RTX's shares the engine's runtime cache."""
        if not self.is_rtx:
            return engine.create_execution_context()
        config = engine.create_runtime_config()
        config.set_runtime_cache(runtime_cache)
        return engine.create_execution_context(config)


@lru_cache
def load_flavour(name: str) -> Flavour:
    """Import the named flavour (``tensorrt`` or ``tensorrt-rtx``); one object per process.

    Raises
    ------
    EngineError
        When it is not installed (the message says how to install it).
    """
    if name not in _MODULES:
        raise EngineError(f"unknown TensorRT flavour {name!r}; known: {sorted(_MODULES)}")
    try:
        module = importlib.import_module(_MODULES[name])
    except ImportError as exc:
        raise EngineError(f"{_LABELS[name]} is not installed: {install_hint(name)}") from exc
    return Flavour(name, module)


def get_flavour() -> Flavour:
    """The flavour this process uses (``CHOREO_ENGINE_TENSORRT_FLAVOUR``, default ``auto``).

    Raises
    ------
    EngineError
        When no TensorRT (or not the one asked for) is installed.
    """
    choice = get_engine_settings().tensorrt_flavour
    name = choose_flavour(choice)
    if name is None:
        wanted = ("tensorrt", "tensorrt-rtx") if choice == "auto" else (choice,)
        raise EngineError(
            "no TensorRT is installed: " + "; or ".join(f"{_LABELS[w]}: {install_hint(w)}" for w in wanted)
        )
    return load_flavour(name)
