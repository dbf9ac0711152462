"""FBX time: ticks and the scene's time mode.

FBX measures time in ticks, 46 186 158 000 per second (a number divisible by
every common frame rate, so frame times are exact integers). The scene's
``TimeMode`` names its frame rate; rates without a named mode use the custom
mode with ``CustomFrameRate``.
"""

from __future__ import annotations

import numpy as np

from choreo.errors import ParameterError

__all__ = ["CUSTOM_TIME_MODE", "TICKS_PER_SECOND", "frame_ticks", "time_mode"]

TICKS_PER_SECOND = 46_186_158_000

CUSTOM_TIME_MODE = 14
"""``eCustom``: the frame rate is given by ``CustomFrameRate``."""

# FBX SDK's FbxTime::EMode values of the exact (non-drop-frame) rates.
_TIME_MODES = {120.0: 1, 100.0: 2, 60.0: 3, 50.0: 4, 48.0: 5, 30.0: 6, 25.0: 10, 24.0: 11, 96.0: 15, 72.0: 16}


def time_mode(fps: float) -> int:
    """The ``TimeMode`` enum value for ``fps`` (:data:`CUSTOM_TIME_MODE` when it has none)."""
    if not np.isfinite(fps) or fps <= 0:
        raise ParameterError(f"fps must be positive, got {fps}")
    return _TIME_MODES.get(float(fps), CUSTOM_TIME_MODE)


def frame_ticks(n_frames: int, fps: float) -> np.ndarray:
    """Time of frames ``0 .. n_frames-1`` in FBX ticks, int64, exact for integer rates."""
    frames = np.arange(n_frames, dtype=np.int64)
    if float(fps).is_integer() and TICKS_PER_SECOND % int(fps) == 0:
        return frames * (TICKS_PER_SECOND // int(fps))
    return np.rint(frames * (TICKS_PER_SECOND / fps)).astype(np.int64)
