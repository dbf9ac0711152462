"""Row operations on engine state, for batching many songs into one engine call.

Every engine's state is batch-first: row ``i`` of each tensor belongs to
sequence ``i`` (the contract, :class:`engines.base.Engine`). The batcher keeps
one pool of rows (a slot per song in flight) and, for every engine call, takes
the rows of the songs it runs and puts the new state back, through the
engine's ``state_rows``, without moving the state off its device:

* :data:`NUMPY_ROWS` for numpy arrays (ONNX Runtime);
* :data:`TORCH_ROWS` for torch tensors on any device (torch-cuda);
* :data:`DEVICE_ROWS` for :class:`~engines.cuda_memory.DeviceRows` (TensorRT),
  which copy rows on the GPU themselves.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from choreo.errors import EngineError

__all__ = ["DEVICE_ROWS", "NUMPY_ROWS", "TORCH_ROWS", "StateRows"]

State = Mapping[str, Any]
Rows = Sequence[int] | np.ndarray


def _contiguous(rows: np.ndarray) -> slice | None:
    """``rows`` as a slice when it is an increasing run ``a, a+1, ...``."""
    if rows.size and np.array_equal(rows, np.arange(rows[0], rows[0] + rows.size)):
        return slice(int(rows[0]), int(rows[0]) + rows.size)
    return None


def _check_names(dst: State, src: State) -> None:
    for name in dst:
        if name not in src:
            raise EngineError(f"state {name!r} missing from the engine's output state")


class StateRows:
    """Take, put and zero rows of array-like state tensors that index like numpy arrays.

    A contiguous run of rows is taken as a view (no copy): treat the result as
    read-only, which every backend's ``run`` does.
    """

    def _indexer(self, rows: np.ndarray) -> Any:
        """Row indices in the form the tensors want (made once per call)."""
        return lambda value: rows

    def take(self, state: State, rows: Rows) -> dict[str, Any]:
        """The state of the sequences at ``rows``, in that order, on the same device."""
        idx = np.asarray(rows, dtype=np.int64)
        span, index = _contiguous(idx), self._indexer(idx)
        return {
            name: value[span] if span is not None else value[index(value)] for name, value in state.items()
        }

    def put(self, dst: State, rows: Rows, src: State) -> None:
        """Write ``src``'s rows into ``dst`` at ``rows`` (in place, on the device)."""
        _check_names(dst, src)
        idx = np.asarray(rows, dtype=np.int64)
        span, index = _contiguous(idx), self._indexer(idx)
        for name, value in dst.items():
            value[span if span is not None else index(value)] = src[name]

    def zero(self, state: State, rows: Rows) -> None:
        """Reset the sequences at ``rows`` to the start of a dance (zeros), in place."""
        index = self._indexer(np.asarray(rows, dtype=np.int64))
        for value in state.values():
            value[index(value)] = 0


class _TorchRows(StateRows):
    """Torch tensors: the row indices go to each tensor's device once per call.

    To a GPU they go from page-locked memory without blocking: a blocking copy (or pinning fresh
    memory, which may synchronize the device) would wait for everything queued on the stream, the
    chunk the batcher launched last, and its pipeline would stall on every take, put or zero of
    rows that are not one contiguous run. The page-locked buffers are a ring made once: a buffer
    is written again only after the copy from it is done (an event says so; it long is, by then).
    """

    _RING = 16

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buffers: list[Any] = []
        self._copied: list[Any] = []
        self._next = 0

    def _indexer(self, rows: np.ndarray) -> Any:
        import torch

        by_device: dict[Any, Any] = {}

        def index(value: Any) -> Any:
            if value.device not in by_device:
                if value.device.type == "cuda":
                    by_device[value.device] = self._to_gpu(rows, value.device)
                else:
                    by_device[value.device] = torch.as_tensor(rows, dtype=torch.long)
            return by_device[value.device]

        return index

    def _to_gpu(self, rows: np.ndarray, device: Any) -> Any:
        import torch

        with self._lock:
            if not self._buffers:
                self._buffers = [
                    torch.zeros(1024, dtype=torch.long, pin_memory=True) for _ in range(self._RING)
                ]
                self._copied = [None] * self._RING
            k, self._next = self._next, (self._next + 1) % self._RING
            if self._copied[k] is not None:
                self._copied[k].synchronize()
            if rows.size > self._buffers[k].numel():
                self._buffers[k] = torch.zeros(rows.size, dtype=torch.long, pin_memory=True)
            host = self._buffers[k][: rows.size]
            host.numpy()[...] = rows
            on_device = host.to(device, non_blocking=True)
            self._copied[k] = torch.cuda.Event()
            self._copied[k].record(torch.cuda.current_stream(device))
            return on_device


class _DeviceRows(StateRows):
    """:class:`~engines.cuda_memory.DeviceRows`: each tensor copies its own rows on the GPU."""

    def take(self, state: State, rows: Rows) -> dict[str, Any]:
        idx = np.asarray(rows, dtype=np.int64)
        return {name: value.take_rows(idx) for name, value in state.items()}

    def put(self, dst: State, rows: Rows, src: State) -> None:
        _check_names(dst, src)
        idx = np.asarray(rows, dtype=np.int64)
        for name, value in dst.items():
            value.put_rows(idx, src[name])

    def zero(self, state: State, rows: Rows) -> None:
        idx = np.asarray(rows, dtype=np.int64)
        for value in state.values():
            value.zero_rows(idx)


NUMPY_ROWS = StateRows()
TORCH_ROWS: StateRows = _TorchRows()
DEVICE_ROWS: StateRows = _DeviceRows()
