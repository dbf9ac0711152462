"""The column-wise dot products and lengths give numpy's own reductions to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.numeric.vectors import dot, norm


@pytest.mark.parametrize("size", [1, 2, 3, 4, 7])
def test_dot_and_norm_are_numpys_bit_for_bit(size: int) -> None:
    rng = np.random.default_rng(size)
    # Magnitudes over many decades, so any other order of the adds would round differently somewhere.
    a = rng.normal(size=(20000, 5, size)) * 10.0 ** rng.integers(-8, 8, size=(20000, 5, size))
    b = rng.normal(size=(20000, 5, size))
    assert np.array_equal(dot(a, b), np.sum(a * b, axis=-1))
    assert np.array_equal(norm(a), np.linalg.norm(a, axis=-1))
    assert np.array_equal(norm(a, keepdims=True), np.linalg.norm(a, axis=-1, keepdims=True))


def test_dot_broadcasts_and_reads_strided_views() -> None:
    rng = np.random.default_rng(0)
    quat = rng.normal(size=(300, 23, 4))
    axes = rng.normal(size=(23, 3))
    assert np.array_equal(dot(quat[..., :3], axes), np.sum(quat[..., :3] * axes, axis=-1))
    assert np.array_equal(dot(quat[:, 4], quat[:, 7]), np.sum(quat[:, 4] * quat[:, 7], axis=-1))


def test_a_longer_axis_is_refused() -> None:
    """numpy adds 8 numbers or more pairwise, in another order: the column sums would differ."""
    with pytest.raises(ValueError, match="at most 7"):
        dot(np.ones((2, 8)), np.ones((2, 8)))
