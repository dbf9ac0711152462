"""Row operations on engine state, for batching many songs into one engine call.

Every state tensor is batch-first: row ``i`` of each tensor belongs to sequence
``i``. The batcher keeps one pool of rows (a slot per song in flight) and, for
every engine call, takes the rows of the songs it runs and puts the new state
back. These helpers do that for any backend's state without moving it off its
device: numpy arrays (ONNX Runtime), torch tensors (torch-cuda) and objects
that provide ``take_rows`` / ``put_rows`` / ``zero_rows`` themselves (the
TensorRT backend's device buffers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from choreo.errors import EngineError

__all__ = ["concat_states", "put_rows", "state_batch", "take_rows", "zero_rows"]

State = Mapping[str, Any]


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


def _contiguous(rows: np.ndarray) -> slice | None:
    """``rows`` as a slice when it is an increasing run ``a, a+1, ...``."""
    if rows.size and np.array_equal(rows, np.arange(rows[0], rows[0] + rows.size)):
        return slice(int(rows[0]), int(rows[0]) + rows.size)
    return None


class _Indexer:
    """Row indices in the form each tensor wants, made once per device for one call."""

    def __init__(self, rows: np.ndarray) -> None:
        self.rows = rows
        self._by_device: dict[Any, Any] = {}

    def __call__(self, x: Any) -> Any:
        if not _is_torch(x):
            return self.rows
        if x.device not in self._by_device:
            import torch

            self._by_device[x.device] = torch.as_tensor(self.rows, dtype=torch.long).to(x.device)
        return self._by_device[x.device]


def state_batch(state: State) -> int:
    """Number of sequences (rows) in a state; raises when tensors disagree."""
    sizes = {name: int(value.shape[0]) for name, value in state.items()}
    if len(set(sizes.values())) > 1:
        raise EngineError(f"state tensors disagree on the batch size: {sizes}")
    return next(iter(sizes.values()), 0)


def take_rows(state: State, rows: Sequence[int] | np.ndarray) -> dict[str, Any]:
    """The state of the sequences at ``rows``, in that order, on the same device.

    A contiguous run of rows is returned as a view (no copy): treat the result
    as read-only, which every backend's ``run`` does.
    """
    idx = np.asarray(rows, dtype=np.int64)
    span = _contiguous(idx)
    index = _Indexer(idx)
    out: dict[str, Any] = {}
    for name, value in state.items():
        if hasattr(value, "take_rows"):
            out[name] = value.take_rows(idx)
        elif span is not None:
            out[name] = value[span]
        else:
            out[name] = value[index(value)]
    return out


def put_rows(dst: State, rows: Sequence[int] | np.ndarray, src: State) -> None:
    """Write ``src``'s rows into ``dst`` at ``rows`` (in place, on the device)."""
    idx = np.asarray(rows, dtype=np.int64)
    span = _contiguous(idx)
    index = _Indexer(idx)
    for name, value in dst.items():
        if name not in src:
            raise EngineError(f"state {name!r} missing from the engine's output state")
        if hasattr(value, "put_rows"):
            value.put_rows(idx, src[name])
        elif span is not None:
            value[span] = src[name]
        else:
            value[index(value)] = src[name]


def zero_rows(state: State, rows: Sequence[int] | np.ndarray) -> None:
    """Reset the sequences at ``rows`` to the start of a dance (zeros), in place."""
    idx = np.asarray(rows, dtype=np.int64)
    index = _Indexer(idx)
    for value in state.values():
        if hasattr(value, "zero_rows"):
            value.zero_rows(idx)
        else:
            value[index(value)] = 0


def concat_states(states: Sequence[State]) -> dict[str, Any]:
    """Stack several states along the batch axis (same backend, same names)."""
    if not states:
        raise EngineError("no states to concatenate")
    first = states[0]
    out: dict[str, Any] = {}
    for name, value in first.items():
        parts = [s[name] for s in states]
        if _is_torch(value):
            import torch

            out[name] = torch.cat(parts, dim=0)
        elif hasattr(value, "concat"):
            out[name] = type(value).concat(parts)
        else:
            out[name] = np.concatenate(parts, axis=0)
    return out
