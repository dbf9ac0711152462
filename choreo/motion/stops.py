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

__all__ = ["SPEED_SIGMA_FRAMES", "speed_minima"]

SPEED_SIGMA_FRAMES = 5.0
"""Standard deviation of the smoothing, in frames, as Bailando's beat alignment uses at 60 fps."""


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
