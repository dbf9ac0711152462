"""RGB pictures to the YUV 4:2:0 planes the H.264 encoder takes."""

from __future__ import annotations

import numpy as np

__all__ = ["rgb_to_yuv420"]


def rgb_to_yuv420(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """BT.601 limited-range Y, U, V planes (U and V at half size) of an even-sized uint8 RGB block.

    Parameters
    ----------
    rgb : np.ndarray [shape=(H, W, 3), dtype=uint8], H and W even

    Returns
    -------
    tuple of np.ndarray [dtype=uint8]
        Y ``(H, W)``, U ``(H/2, W/2)`` and V ``(H/2, W/2)``.
    """
    f = rgb.astype(np.float32)
    y = 16.0 + f @ np.array([0.257, 0.504, 0.098], dtype=np.float32)
    # Each 2x2 block's mean: sums of whole numbers up to 1020 are exact, in integers as in floats.
    rows = rgb[0::2].astype(np.uint16) + rgb[1::2]
    quad = (rows[:, 0::2] + rows[:, 1::2]) * np.float32(0.25)
    u = 128.0 + quad @ np.array([-0.148, -0.291, 0.439], dtype=np.float32)
    v = 128.0 + quad @ np.array([0.439, -0.368, -0.071], dtype=np.float32)
    y8, u8, v8 = (np.clip(np.rint(p), 0, 255).astype(np.uint8) for p in (y, u, v))
    return y8, u8, v8
