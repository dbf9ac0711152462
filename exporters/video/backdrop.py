"""What stays still behind the dancer: a sky, a floor disc with a grid, and the beat strip's ground."""

from __future__ import annotations

import numpy as np

from exporters.video.camera import STRIP_PX, Camera

__all__ = ["backdrop"]

_SKY_TOP, _SKY_BOTTOM = np.array([0.80, 0.85, 0.90]), np.array([0.93, 0.94, 0.95])
_FLOOR, _GRID = np.array([0.95, 0.94, 0.92]), np.array([0.78, 0.80, 0.82])
_STRIP = (0.16, 0.18, 0.2)


def backdrop(camera: Camera) -> np.ndarray:
    """Sky, a 4 m floor disc with a half-metre grid fading into the distance, and the strip's dark ground.

    Returns
    -------
    np.ndarray [shape=(H, W, 3), dtype=float32]
        RGB in 0..1, as ``camera`` sees it.
    """
    h, w = camera.height, camera.width
    share = np.linspace(0, 1, h)[:, None, None]
    image = np.broadcast_to(_SKY_TOP * (1 - share) + _SKY_BOTTOM * share, (h, w, 3)).copy()
    floor = camera.floor_points()
    radius = np.hypot(floor[..., 0], floor[..., 2])
    on_floor = radius < 4.0
    line = np.minimum(
        np.abs((floor[..., 0] + 0.25) % 0.5 - 0.25), np.abs((floor[..., 2] + 0.25) % 0.5 - 0.25)
    )
    grid = np.clip(1.0 - line / 0.012, 0, 1)[..., None] * np.clip(1.2 - radius / 3.5, 0, 1)[..., None]
    tile = _FLOOR * (1 - grid) + _GRID * grid
    edge = np.clip((4.0 - radius) / 0.25, 0, 1)[..., None]
    image = np.where(on_floor[..., None], tile * edge + image * (1 - edge), image)
    image[h - STRIP_PX :] = _STRIP
    return image.astype(np.float32)
