"""Transition costs between phrases, precomputed when the library is built.

Going from the end of one phrase (key ``a``) to the start of another (key
``b``) costs the mean squared difference of their poses and joint velocities
in the body's heading frame (:func:`choreo.choreography.phrases.cut_keys`):
what an inertialization has to hide. Continuing the same clip costs nothing.
A jump between floor work and standing is not a transition at all: a phrase
that gets up or goes down has to carry the body there.

Only the cheapest :data:`TRANSITIONS_PER_STYLE` keys of each style are kept per
key, which keeps the table small and the planner's candidate lists short.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TRANSITIONS_PER_STYLE", "transition_table"]

TRANSITIONS_PER_STYLE = 16

_BLOCK = 512


def transition_table(
    features: np.ndarray,
    key_style: np.ndarray,
    floor: np.ndarray,
    can_start: np.ndarray,
    *,
    n_styles: int,
    per_style: int = TRANSITIONS_PER_STYLE,
) -> tuple[np.ndarray, np.ndarray]:
    """The cheapest start keys of every style after each key.

    Parameters
    ----------
    features : np.ndarray [shape=(keys, D)], pose and velocity features per key
    key_style : np.ndarray [shape=(keys,)], style index of each key
    floor : np.ndarray [shape=(keys,)], bool, floor work at the key
    can_start : np.ndarray [shape=(keys,)], bool, some phrase starts at the key
    n_styles : number of styles
    per_style : continuations kept per key and style

    Returns
    -------
    next_key : np.ndarray [shape=(keys, n_styles, per_style)], int32, -1 where
        a style has fewer candidates
    next_cost : np.ndarray [shape=(keys, n_styles, per_style)], float16, m^2,
        increasing along the last axis (inf where ``next_key`` is -1)
    """
    features = np.asarray(features, dtype=np.float32)
    n = features.shape[0]
    next_key = np.full((n, n_styles, per_style), -1, dtype=np.int32)
    next_cost = np.full((n, n_styles, per_style), np.inf, dtype=np.float16)
    sq = np.sum(features**2, axis=1)
    for lo in range(0, n, _BLOCK):
        hi = min(n, lo + _BLOCK)
        cost = (sq[lo:hi, None] + sq[None, :] - 2.0 * features[lo:hi] @ features.T) / features.shape[1] * 3
        cost = np.maximum(cost, 0.0)
        rows = np.arange(hi - lo)
        cost[rows, lo + rows] = 0.0  # continuing from a key is free (the formula leaves rounding there)
        cost[floor[lo:hi, None] != floor[None, :]] = np.inf
        cost[:, ~can_start] = np.inf
        for s in range(n_styles):
            columns = np.nonzero((key_style == s) & can_start)[0]
            if columns.size == 0:
                continue
            sub = cost[:, columns]
            k = min(per_style, columns.size)
            part = np.argpartition(sub, k - 1, axis=1)[:, :k]
            order = np.take_along_axis(sub, part, axis=1).argsort(axis=1)
            best = np.take_along_axis(part, order, axis=1)
            next_key[lo:hi, s, :k] = columns[best]
            next_cost[lo:hi, s, :k] = np.take_along_axis(sub, best, axis=1)
    next_key[~np.isfinite(next_cost.astype(np.float32))] = -1
    return next_key, next_cost
