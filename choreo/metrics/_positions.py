"""Input checks shared by the measures: joint positions and frame rates."""

from __future__ import annotations

import numpy as np

from choreo.errors import ParameterError

__all__ = ["check_fps", "check_positions"]


def check_positions(positions: np.ndarray, *, min_frames: int = 1) -> np.ndarray:
    """``positions`` as float64 ``[frames, joints, 3]``, finite and at least ``min_frames`` long.

    Raises
    ------
    ParameterError
        Naming what is wrong with the array.
    """
    arr = np.asarray(positions, dtype=np.float64)
    if arr.ndim != 3 or arr.shape[2] != 3:
        raise ParameterError(f"joint positions must be [frames, joints, 3], got shape {arr.shape}")
    if arr.shape[0] < min_frames:
        raise ParameterError(f"this measure needs at least {min_frames} frames, got {arr.shape[0]}")
    if not np.all(np.isfinite(arr)):
        raise ParameterError("joint positions contain NaN or infinite values")
    return arr


def check_fps(fps: float) -> float:
    """``fps`` as a positive float."""
    if not np.isfinite(fps) or fps <= 0:
        raise ParameterError(f"fps must be positive, got {fps}")
    return float(fps)
