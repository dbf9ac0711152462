"""A Butterworth low-pass as second-order sections, and its zero-phase (forward-backward) application.

The same filter and the same edge handling as ``scipy.signal.butter(..., output="sos")`` and
``sosfiltfilt`` (odd extension at both ends, each pass started in its steady state), to float noise:
the tests hold both to scipy's. The design follows the textbook recipe (the analog prototype's poles
on the left half circle, the cut-off pre-warped, the bilinear transform); the filter runs the sections'
recurrence block by block as matrix products, since a Python loop over samples costs far more than
the import it replaces.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["butter_lowpass_sos", "sos_filtfilt"]

_BLOCK = 64
"""Samples per block of the blocked recurrence: big enough that the loop over blocks is short, small
enough that a block's matrix stays cheap."""


def butter_lowpass_sos(order: int, normalized_cutoff: float) -> np.ndarray:
    """Second-order sections ``[sections, 6]`` (``b0 b1 b2 a0 a1 a2``) of a digital Butterworth low-pass.

    Parameters
    ----------
    order : int >= 1, the filter's order
    normalized_cutoff : float in (0, 1), the -3 dB frequency as a fraction of the Nyquist frequency

    Raises
    ------
    ValueError
        If ``order`` is below 1 or the cut-off lies outside (0, 1).
    """
    if int(order) != order or order < 1:
        raise ValueError(f"filter order must be a positive integer, got {order}")
    if not 0.0 < normalized_cutoff < 1.0:
        raise ValueError(f"normalized cut-off must lie in (0, 1), got {normalized_cutoff}")
    # analog prototype: poles evenly on the left unit half circle; scaled to the pre-warped cut-off
    # (sample rate 2: the Nyquist frequency is 1)
    m = np.arange(-order + 1, order, 2, dtype=np.float64)
    warped = 4.0 * np.tan(np.pi * normalized_cutoff / 2.0)
    poles = warped * -np.exp(1j * np.pi * m / (2 * order))
    # bilinear transform: every pole to (4 + p) / (4 - p), every zero (all at infinity) to -1
    digital = (4.0 + poles) / (4.0 - poles)
    gain = warped**order * np.real(1.0 / np.prod(4.0 - poles))
    # one section per conjugate pair (and one for the real pole of an odd order), ordered so that the
    # poles nearest the unit circle come last; the zeros (all at -1) two to a section from the first,
    # so an odd order's last section has one; the whole gain goes into the first section
    upper = digital[digital.imag > 0]
    pairs = upper[np.argsort(np.abs(upper))]
    denominators = [[1.0, -2.0 * p.real, p.real * p.real + p.imag * p.imag] for p in pairs]
    if order % 2:
        real_pole = digital[np.argmin(np.abs(digital.imag))].real
        denominators.insert(0, [1.0, -real_pole, 0.0])
    last_zeros = [1.0, 2.0, 1.0] if order % 2 == 0 else [1.0, 1.0, 0.0]
    numerators = [[1.0, 2.0, 1.0]] * (len(denominators) - 1) + [last_zeros]
    sos = np.array([b + a for b, a in zip(numerators, denominators, strict=True)])
    sos[0, :3] *= gain
    return sos


def sos_filtfilt(sos: np.ndarray, signal: np.ndarray, padlen: int) -> np.ndarray:
    """Filter ``signal`` along axis 0 forwards, then backwards: zero phase, the magnitude squared.

    Parameters
    ----------
    sos : np.ndarray [shape=(sections, 6)], with ``a0 == 1`` in every section
    signal : np.ndarray [shape=(samples, ...)]
    padlen : int in [0, samples), samples of odd extension at each end (``sosfiltfilt``'s default
        is ``3 * (2 * sections + 1)``)

    Returns
    -------
    np.ndarray
        The filtered signal, float64, of ``signal``'s shape.
    """
    x = np.asarray(signal, dtype=np.float64)
    if not 0 <= padlen < x.shape[0]:
        raise ValueError(f"padlen must lie in [0, {x.shape[0]}), got {padlen}")
    flat = x.reshape(x.shape[0], -1)
    if padlen:
        head = 2.0 * flat[0] - flat[padlen:0:-1]
        tail = 2.0 * flat[-1] - flat[-2 : -padlen - 2 : -1]
        flat = np.concatenate([head, flat, tail])
    zi = _steady_state(_as_key(sos))
    forward = _sosfilt(sos, flat, zi[:, None] * flat[0])
    backward = _sosfilt(sos, forward[::-1], zi[:, None] * forward[-1])[::-1]
    return backward[padlen : backward.shape[0] - padlen].reshape(x.shape)


def _as_key(sos: np.ndarray) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(float(c) for c in row) for row in np.asarray(sos, dtype=np.float64))


@lru_cache(maxsize=64)
def _steady_state(sos: tuple[tuple[float, ...], ...]) -> np.ndarray:
    """The sections' states ``[2 * sections]`` after a unit step has run for ever (the start of each
    pass, scaled by its first sample, so that a constant signal passes without a transient)."""
    states = []
    level = 1.0  # the steady output of the sections before this one
    for b0, b1, b2, _, a1, a2 in sos:
        gain = (b0 + b1 + b2) / (1.0 + a1 + a2)
        # direct form II transposed at rest: y = b0 x + z0, z1 = b2 x - a2 y
        states += [level * (gain - b0), level * (b2 - a2 * gain)]
        level *= gain
    return np.array(states)


def _step(sos: np.ndarray, x: np.ndarray, state: np.ndarray) -> np.ndarray:
    """One sample of the cascade (direct form II transposed), ``x`` and ``state[k]`` of one shape;
    ``state`` is updated in place and the cascade's output returned."""
    for s, (b0, b1, b2, _, a1, a2) in enumerate(sos):
        y = b0 * x + state[2 * s]
        state[2 * s] = b1 * x - a1 * y + state[2 * s + 1]
        state[2 * s + 1] = b2 * x - a2 * y
        x = y
    return x


@lru_cache(maxsize=64)
def _block_map(sos: tuple[tuple[float, ...], ...]) -> np.ndarray:
    """The linear map of one block: ``[block outputs; end state] = M @ [block inputs; start state]``,
    found by running the recurrence on every unit input and unit start state."""
    coeffs = np.array(sos)
    n_state = 2 * len(sos)
    width = _BLOCK + n_state
    inputs = np.eye(_BLOCK, width)
    state = np.eye(n_state, width, k=_BLOCK)
    outputs = np.empty((_BLOCK, width))
    for n in range(_BLOCK):
        outputs[n] = _step(coeffs, inputs[n], state)
    return np.concatenate([outputs, state])


def _sosfilt(sos: np.ndarray, x: np.ndarray, state: np.ndarray) -> np.ndarray:
    """The cascade run over ``x [samples, channels]`` from ``state [2 * sections, channels]``."""
    n, channels = x.shape
    blocks = -(-n // _BLOCK)
    key = _as_key(sos)
    block_map = _block_map(key)
    from_input, from_state = block_map[:, :_BLOCK], block_map[:, _BLOCK:]
    padded = np.zeros((blocks * _BLOCK, channels))
    padded[:n] = x  # zeros after the end change nothing before it: the filter is causal
    # every block's response to its own inputs at once, then the states carried block to block
    driven = np.matmul(from_input, padded.reshape(blocks, _BLOCK, channels))
    out = np.empty((blocks, _BLOCK, channels))
    for b in range(blocks):
        out[b] = driven[b, :_BLOCK] + from_state[:_BLOCK] @ state
        state = driven[b, _BLOCK:] + from_state[_BLOCK:] @ state
    return out.reshape(-1, channels)[:n]
