"""A mocap clip's pulse: a regular beat grid with its period and phase.

Kinematic beats (speed minima) come about once a second with an interval
spread of 30 to 60 per cent, so they are not beats themselves. The pulse
period is the lag of the strongest autocorrelation of the joint-speed curve
between :data:`MIN_PERIOD_S` and :data:`MAX_PERIOD_S`, weighted towards
:data:`PREFERRED_PERIOD_S` (a log-normal prior, as tempo estimators use), and
the phase is the circular mean of the kinematic beats on that period.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import gaussian_filter1d

from choreo.errors import ParameterError

__all__ = ["MAX_PERIOD_S", "MIN_PERIOD_S", "PREFERRED_PERIOD_S", "Pulse", "estimate_pulse"]

MIN_PERIOD_S = 0.36
MAX_PERIOD_S = 1.2
PREFERRED_PERIOD_S = 0.6
_PRIOR_OCTAVES = 0.9


@dataclass(frozen=True)
class Pulse:
    """A beat grid: beat ``k`` falls at ``phase_s + k * period_s`` seconds."""

    period_s: float
    phase_s: float
    strength: float
    """Autocorrelation at the period, 0..1: how clearly the clip has a pulse."""

    def grid_s(self, duration_s: float) -> np.ndarray:
        """Beat times within ``[0, duration_s]``, seconds, increasing."""
        first = self.phase_s % self.period_s
        return np.arange(first, duration_s + 1e-9, self.period_s)


def estimate_pulse(speed: np.ndarray, fps: float, beat_frames: np.ndarray) -> Pulse:
    """The pulse of a clip from its mean joint speed and its kinematic beats.

    Parameters
    ----------
    speed : np.ndarray [shape=(samples,)], mean joint speed per frame step, m/s
    fps : float > 0, samples per second of ``speed``
    beat_frames : np.ndarray [shape=(beats,)], kinematic beat frame indices

    Raises
    ------
    ParameterError
        If the clip is shorter than two of the longest periods.
    """
    speed = np.asarray(speed, dtype=np.float64)
    max_lag = int(round(MAX_PERIOD_S * fps))
    if speed.size < 2 * max_lag:
        raise ParameterError(
            f"a clip of {speed.size / fps:.2f} s is too short for a pulse (needs {2 * MAX_PERIOD_S:.1f} s)"
        )
    x = gaussian_filter1d(speed, 0.04 * fps)
    x = x - x.mean()
    energy = float(np.dot(x, x)) or 1.0
    lags = np.arange(int(round(MIN_PERIOD_S * fps)), max_lag + 1)
    acf = np.array([np.dot(x[:-lag], x[lag:]) / energy * speed.size / (speed.size - lag) for lag in lags])
    prior = np.exp(-0.5 * (np.log2(lags / (PREFERRED_PERIOD_S * fps)) / _PRIOR_OCTAVES) ** 2)
    best = int(np.argmax(np.maximum(acf, 0.0) * prior + 1e-6 * prior))
    lag = float(lags[best])
    if 0 < best < lags.size - 1:  # parabolic refinement between lag samples
        a, b, c = acf[best - 1], acf[best], acf[best + 1]
        denom = a - 2 * b + c
        if denom < 0:
            lag += float(np.clip(0.5 * (a - c) / denom, -0.5, 0.5))
    period_s = lag / fps
    beats_s = np.asarray(beat_frames, dtype=np.float64) / fps
    if beats_s.size:
        angle = 2 * np.pi * beats_s / period_s
        phase_s = float(np.angle(np.exp(1j * angle).mean()) / (2 * np.pi) * period_s) % period_s
    else:
        phase_s = 0.0
    return Pulse(period_s=period_s, phase_s=phase_s, strength=float(np.clip(acf[best], 0.0, 1.0)))
