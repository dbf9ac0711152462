"""A dancer's stops: the local minima of a smoothed speed curve.

The moments the dancer pauses or turns are where the mean joint speed has a
local minimum after Gaussian smoothing. The beat alignment measure calls these
kinematic beats (:mod:`choreo.metrics.beat_align`), the mocap pairing and the
phrase library find a clip's stops with the same rule.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import gaussian_filter1d

from choreo.errors import ParameterError
from choreo.numeric.peaks import strict_local_minima

__all__ = [
    "HIT_SIGMA_S",
    "SPEED_SIGMA_FRAMES",
    "hit_strengths",
    "mean_joint_speeds",
    "smoothed_speed",
    "speed_minima",
]

SPEED_SIGMA_FRAMES = 5.0
"""Standard deviation of the smoothing, in frames, as Bailando's beat alignment uses at 60 fps."""


HIT_SIGMA_S = 0.05
"""Smoothing of the speed curve hits are read on, seconds: a little against mocap jitter, not so much
that the moves either side of a stop fill it in (the stop smoothing of :data:`SPEED_SIGMA_FRAMES`
would, at a beat of 0.6 s)."""


def mean_joint_speeds(positions: np.ndarray, fps: float) -> np.ndarray:
    """[frames - 1] mean over joints of each joint's speed (m/s) from frame ``k`` to ``k + 1`` of
    ``positions`` ``[frames, joints, 3]``: the speed curve every stop, hit and trim is read on."""
    return np.linalg.norm(np.diff(positions, axis=0), axis=-1).mean(axis=1) * fps


def smoothed_speed(positions: np.ndarray, fps: float) -> np.ndarray:
    """:func:`mean_joint_speeds` Gaussian-smoothed with :data:`HIT_SIGMA_S`."""
    return gaussian_filter1d(mean_joint_speeds(positions, fps), HIT_SIGMA_S * fps)


def hit_strengths(speed: np.ndarray, frames: np.ndarray, beat_frames: np.ndarray) -> np.ndarray:
    """How hard the body hits each of ``frames``: the top speed over the half beat before it less the
    lowest speed within a quarter beat of it (0 where it does not slow down there).

    A big move that stops on the frame scores its speed; a move that carries on through it, or a
    body that stands still, scores about 0. ``speed`` is :func:`smoothed_speed`, ``beat_frames`` the
    length of each frame's beat (the time since the beat before), in frames.
    """
    last = speed.size - 1
    out = np.zeros(np.size(frames))
    pairs = zip(np.asarray(frames).tolist(), np.asarray(beat_frames).tolist(), strict=True)
    for i, (frame, beat) in enumerate(pairs):
        at = min(max(int(round(frame)), 0), last)
        before = max(int(round(frame - beat / 2)), 0)
        quarter = max(int(round(beat / 4)), 1)
        peak = speed[min(before, at) : at + 1].max()
        low = speed[max(at - quarter, 0) : min(at + quarter, last) + 1].min()
        out[i] = max(peak - low, 0.0)
    return out


def speed_minima(speed: np.ndarray, sigma_frames: float) -> np.ndarray:
    """Indices of the local minima of ``speed`` after Gaussian smoothing with ``sigma_frames``.

    Parameters
    ----------
    speed : np.ndarray [shape=(samples,)], a speed curve in any unit (minima do not depend on it)
    sigma_frames : float >= 0, standard deviation of the Gaussian smoothing, in samples; 0 smooths nothing

    Returns
    -------
    np.ndarray [shape=(minima,)], int
        Indices of the strict local minima, increasing.

    Raises
    ------
    ParameterError
        If ``speed`` is not 1-D or ``sigma_frames`` is negative.
    """
    speed = np.asarray(speed, dtype=np.float64)
    if speed.ndim != 1:
        raise ParameterError(f"speed must be 1-D, got shape {speed.shape}")
    if sigma_frames < 0:
        raise ParameterError(f"sigma_frames must be >= 0, got {sigma_frames}")
    smooth = gaussian_filter1d(speed, sigma_frames) if sigma_frames > 0 else speed
    return strict_local_minima(smooth)
