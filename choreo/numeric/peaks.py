"""Peaks and strict local minima of a 1-D curve, as ``scipy.signal.find_peaks`` (with ``height`` and
``distance``) and ``argrelextrema(x, np.less)`` find them; the tests hold both to scipy's on random and
real curves."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["find_peaks", "strict_local_minima"]


def strict_local_minima(x: np.ndarray) -> np.ndarray:
    """Indices of the samples below both neighbours, increasing; the two ends never count."""
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {x.shape}")
    inner = x[1:-1]
    return np.flatnonzero((inner < x[:-2]) & (inner < x[2:])) + 1


def find_peaks(x: np.ndarray, *, height: float | None = None, distance: float | None = None) -> np.ndarray:
    """Indices of the local maxima of ``x``, increasing.

    A maximum is a sample, or a flat run of equal samples, with a lower sample on each side; a flat
    run counts once, at its middle (the left of the two middles of an even run). The ends never
    count.

    Parameters
    ----------
    x : np.ndarray [shape=(samples,)]
    height : keep only maxima at least this high
    distance : float >= 1, samples between kept maxima at least (rounded up): of two maxima closer
        than this the higher is kept, the highest first (ties in the order of numpy's ``argsort``,
        as in scipy)

    Raises
    ------
    ValueError
        If ``x`` is not 1-D or ``distance`` is below 1.
    """
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {x.shape}")
    peaks = _local_maxima(x)
    if height is not None:
        peaks = peaks[x[peaks] >= height]
    if distance is not None:
        if distance < 1:
            raise ValueError(f"distance must be >= 1, got {distance}")
        peaks = peaks[_apart(peaks, x[peaks], math.ceil(distance))]
    return peaks


def _local_maxima(x: np.ndarray) -> np.ndarray:
    """The middles of the runs of equal samples that have a lower sample on both sides."""
    if x.size < 3:
        return np.zeros(0, dtype=np.intp)
    starts = np.flatnonzero(np.concatenate([[True], x[1:] != x[:-1]]))
    ends = np.concatenate([starts[1:], [x.size]]) - 1
    inside = (starts > 0) & (ends < x.size - 1)
    starts, ends = starts[inside], ends[inside]
    rising = x[starts - 1] < x[starts]
    falling = x[ends + 1] < x[ends]
    keep = rising & falling
    return (starts[keep] + ends[keep]) // 2


def _apart(peaks: np.ndarray, priority: np.ndarray, distance: int) -> np.ndarray:
    """Which peaks stay when, highest priority first, each kept peak drops its neighbours nearer
    than ``distance``."""
    keep = np.ones(peaks.size, dtype=bool)
    for j in np.argsort(priority)[::-1]:
        if not keep[j]:
            continue
        near = np.abs(peaks - peaks[j]) < distance
        near[j] = False
        keep &= ~near
    return keep
