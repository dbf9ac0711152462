"""Dot products and lengths of short vectors along the last axis, bit for bit numpy's own.

``np.sum(a * b, axis=-1)`` and ``np.linalg.norm(x, axis=-1)`` over an axis of three or four numbers
cost numpy more per number than adding the columns element-wise; numpy adds so short an axis in
order, left to right, so the column sums here give the very same bits (``tests/numeric``). The
post-processing takes them on a song's worth of frames and joints dozens of times a render.
"""

from __future__ import annotations

import numpy as np

__all__ = ["dot", "norm"]


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.sum(a * b, axis=-1)`` of two arrays that broadcast, their last axis of at most 7 numbers."""
    size = max(a.shape[-1], b.shape[-1])
    if size > 7:  # from 8 numbers on numpy sums pairwise, in another order
        raise ValueError(f"the last axis must hold at most 7 numbers, got {size}")
    total = a[..., 0] * b[..., 0]
    for i in range(1, size):
        total = total + a[..., i] * b[..., i]
    return total


def norm(x: np.ndarray, keepdims: bool = False) -> np.ndarray:
    """``np.linalg.norm(x, axis=-1, keepdims=keepdims)`` of real vectors (at most 7 numbers each)."""
    total = dot(x, x)
    return np.sqrt(total[..., None] if keepdims else total)
