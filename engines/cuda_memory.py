"""Device memory through cuda-python, for the TensorRT backend.

One checker for every CUDA call (:func:`cuda_call`), and owned buffers that are
freed deterministically: :class:`DeviceRows` (batch-first float32 rows on the
GPU: the recurrent state, which never leaves the device between chunks),
:class:`PinnedBuffer` (page-locked host memory for asynchronous copies) and
:class:`Stream`.

Row copies run on CUDA's legacy default stream, which is ordered with every
(blocking) stream an execution context uses, so a state taken, run and put
back is always consistent without host synchronisation.
"""

from __future__ import annotations

import ctypes
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from choreo.errors import EngineError

__all__ = [
    "DeviceBuffer",
    "DeviceRows",
    "PinnedBuffer",
    "Stream",
    "cuda_call",
    "gpu_name",
]

_DEFAULT_STREAM = 0


def _rt() -> Any:
    try:
        from cuda.bindings import runtime
    except ImportError as exc:  # pragma: no cover - only where cuda-python is missing
        raise EngineError("cuda-python is not installed (pip install 'choreo[gpu]')") from exc
    return runtime


def cuda_call(result: Any) -> Any:
    """Unpack a cuda-python ``(err, *values)`` result; raise :class:`EngineError` on failure."""
    rt = _rt()
    err, *values = result if isinstance(result, tuple) else (result,)
    if err != rt.cudaError_t.cudaSuccess:
        _, text = rt.cudaGetErrorString(err)
        raise EngineError(f"CUDA call failed: {err.name}: {text.decode(errors='replace')}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def gpu_name(device: int = 0) -> str:
    """The GPU's marketing name, e.g. ``"NVIDIA H200"``."""
    props = cuda_call(_rt().cudaGetDeviceProperties(device))
    name = props.name
    return (name.decode(errors="replace") if isinstance(name, bytes) else str(name)).strip("\x00 ")


class Stream:
    """An owned CUDA stream."""

    def __init__(self) -> None:
        rt = _rt()
        self.handle = cuda_call(rt.cudaStreamCreate())
        self._finalizer = weakref.finalize(self, rt.cudaStreamDestroy, self.handle)

    def __int__(self) -> int:
        return int(self.handle)

    def synchronize(self) -> None:
        cuda_call(_rt().cudaStreamSynchronize(self.handle))


class DeviceBuffer:
    """An owned block of device memory of ``nbytes``."""

    def __init__(self, nbytes: int, stream: Any = _DEFAULT_STREAM) -> None:
        rt = _rt()
        self.nbytes = int(nbytes)
        self.ptr = int(cuda_call(rt.cudaMallocAsync(max(self.nbytes, 1), stream)))
        self._finalizer = weakref.finalize(self, rt.cudaFreeAsync, self.ptr, _DEFAULT_STREAM)

    def free(self) -> None:
        """Give the memory back now (also done when the object is collected)."""
        self._finalizer()


class PinnedBuffer:
    """Page-locked host memory seen as a flat float32 numpy array."""

    def __init__(self, n_floats: int) -> None:
        rt = _rt()
        self.nbytes = int(n_floats) * 4
        self.ptr = int(cuda_call(rt.cudaMallocHost(max(self.nbytes, 4))))
        self._finalizer = weakref.finalize(self, rt.cudaFreeHost, self.ptr)
        self.array = np.ctypeslib.as_array(
            ctypes.cast(self.ptr, ctypes.POINTER(ctypes.c_float)), shape=(n_floats,)
        )


def _runs(rows: np.ndarray) -> list[tuple[int, int, int]]:
    """``(position in rows, first row, count)`` for each run of consecutive row numbers."""
    out = []
    start = 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or rows[i] != rows[i - 1] + 1:
            out.append((start, int(rows[start]), i - start))
            start = i
    return out


class DeviceRows:
    """Batch-first float32 rows in device memory: one state tensor of ``batch`` sequences.

    Takes, puts and zeroes rows (``take_rows``, ``put_rows``, ``zero_rows``, used
    by :data:`engines.state.DEVICE_ROWS`) with device-to-device copies, so the
    batcher moves state between songs without touching the host.
    """

    def __init__(self, batch: int, row_shape: Sequence[int]) -> None:
        self.row_shape = tuple(int(v) for v in row_shape)
        self.row_bytes = 4 * int(np.prod(self.row_shape, dtype=np.int64))
        self.batch = int(batch)
        self.buffer = DeviceBuffer(self.batch * self.row_bytes)
        self.ptr = self.buffer.ptr

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.batch, *self.row_shape)

    @classmethod
    def zeros(cls, batch: int, row_shape: Sequence[int]) -> DeviceRows:
        rows = cls(batch, row_shape)
        rows.zero_rows(np.arange(batch))
        return rows

    @classmethod
    def from_host(cls, array: np.ndarray) -> DeviceRows:
        host = np.ascontiguousarray(array, dtype=np.float32)
        rows = cls(host.shape[0], host.shape[1:])
        rt = _rt()
        kind = rt.cudaMemcpyKind.cudaMemcpyHostToDevice
        cuda_call(rt.cudaMemcpy(rows.ptr, host.ctypes.data, host.nbytes, kind))
        return rows

    def to_host(self) -> np.ndarray:
        rt = _rt()
        host = np.empty(self.shape, dtype=np.float32)
        kind = rt.cudaMemcpyKind.cudaMemcpyDeviceToHost
        cuda_call(rt.cudaMemcpy(host.ctypes.data, self.ptr, host.nbytes, kind))
        return host

    def _copy(self, dst: int, src: int, nbytes: int) -> None:
        rt = _rt()
        kind = rt.cudaMemcpyKind.cudaMemcpyDeviceToDevice
        cuda_call(rt.cudaMemcpyAsync(dst, src, nbytes, kind, _DEFAULT_STREAM))

    def _check(self, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        checked = np.asarray(rows, dtype=np.int64).reshape(-1)
        if checked.size and (checked.min() < 0 or checked.max() >= self.batch):
            raise EngineError(f"rows {checked.tolist()} out of range for a state of {self.batch} sequences")
        return checked

    def take_rows(self, rows: Sequence[int] | np.ndarray) -> DeviceRows:
        """A new state holding the given rows, in that order."""
        picked = self._check(rows)
        out = DeviceRows(len(picked), self.row_shape)
        for pos, first, count in _runs(picked):
            self._copy(
                out.ptr + pos * self.row_bytes, self.ptr + first * self.row_bytes, count * self.row_bytes
            )
        return out

    def put_rows(self, rows: Sequence[int] | np.ndarray, src: DeviceRows) -> None:
        """Write ``src``'s rows (in order) into this state at ``rows``."""
        picked = self._check(rows)
        if src.row_shape != self.row_shape or src.batch != len(picked):
            raise EngineError(f"cannot put {src.shape} into rows {picked.tolist()} of {self.shape}")
        for pos, first, count in _runs(picked):
            self._copy(
                self.ptr + first * self.row_bytes, src.ptr + pos * self.row_bytes, count * self.row_bytes
            )

    def zero_rows(self, rows: Sequence[int] | np.ndarray) -> None:
        """Reset the given rows to zeros."""
        rt = _rt()
        for _, first, count in _runs(self._check(rows)):
            cuda_call(
                rt.cudaMemsetAsync(
                    self.ptr + first * self.row_bytes, 0, count * self.row_bytes, _DEFAULT_STREAM
                )
            )
