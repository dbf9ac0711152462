"""Kinematic beats: the moments a dancer's motion comes to a (near) stop.

Following Bailando's beat-alignment code, the mean joint speed is smoothed
with a Gaussian and its local minima are the kinematic beats. Speed sample
``i`` is the mean distance the joints travel from frame ``i`` to ``i + 1``,
so a beat at index ``i`` is frame ``i``.
"""

from __future__ import annotations

import numpy as np

from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion
from choreo.motion.stops import mean_joint_speeds, speed_minima

__all__ = ["kinematic_beats"]


def kinematic_beats(motion: Motion, *, sigma_frames: float = 5.0) -> np.ndarray:
    """Frame indices of the kinematic beats of ``motion``.

    Parameters
    ----------
    motion : the dance
    sigma_frames : width of the Gaussian smoothing, in frames of ``motion``
        (Bailando: 5 frames at 60 fps)

    Returns
    -------
    np.ndarray [shape=(beats,)], int frame indices, increasing
    """
    if motion.n_frames < 3:
        return np.zeros(0, dtype=int)
    return speed_minima(mean_joint_speeds(joint_positions(motion), motion.fps), sigma_frames)
