"""Shepperd's matrix-to-quaternion pick as a linear map, shared by the ONNX graph and the torch network."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["quat_pick_matrix"]


def quat_pick_matrix() -> tuple[np.ndarray, np.ndarray]:
    """Linear map from a row-major rotation matrix ``[9]`` to the 4x4 matrix ``K`` (flattened ``[16]``).

    Row ``k`` of ``K`` equals ``4 q_k (w, x, y, z)``; the row with the largest
    diagonal entry gives the quaternion with the best conditioning
    (Shepperd's method). Returns ``(A [9, 16], c [16])`` with ``K = R @ A + c``.
    """
    a = np.zeros((9, 16))
    c = np.zeros(16)

    def r(i: int, j: int) -> int:
        return 3 * i + j

    def put(row: int, col: int, terms: Sequence[tuple[int, float]], const: float = 0.0) -> None:
        for idx, sign in terms:
            a[idx, 4 * row + col] += sign
        c[4 * row + col] += const

    diag = {
        0: [(r(0, 0), 1), (r(1, 1), 1), (r(2, 2), 1)],
        1: [(r(0, 0), 1), (r(1, 1), -1), (r(2, 2), -1)],
        2: [(r(0, 0), -1), (r(1, 1), 1), (r(2, 2), -1)],
        3: [(r(0, 0), -1), (r(1, 1), -1), (r(2, 2), 1)],
    }
    off = {
        (0, 1): [(r(2, 1), 1), (r(1, 2), -1)],
        (0, 2): [(r(0, 2), 1), (r(2, 0), -1)],
        (0, 3): [(r(1, 0), 1), (r(0, 1), -1)],
        (1, 2): [(r(0, 1), 1), (r(1, 0), 1)],
        (1, 3): [(r(0, 2), 1), (r(2, 0), 1)],
        (2, 3): [(r(1, 2), 1), (r(2, 1), 1)],
    }
    for k, terms in diag.items():
        put(k, k, terms, 1.0)
    for (i, j), terms in off.items():
        put(i, j, terms)
        put(j, i, terms)
    return a.astype(np.float32), c.astype(np.float32)
