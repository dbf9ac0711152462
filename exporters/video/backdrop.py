"""What lies behind the dancer: a sky and a floor disc with a grid, drawn once for a whole excerpt.

The follow camera (:mod:`exporters.video.follow`) moves over the floor by whole-pixel shifts, so
:class:`FloorCanvas` draws the floor once, on a canvas that covers every frame's view, with its
encoder planes; each frame's picture above the beat strip is a crop of it.
"""

from __future__ import annotations

import numpy as np

from exporters.video.camera import STRIP_PX, Camera
from exporters.video.follow import CameraPath
from exporters.video.yuv import rgb_to_yuv420

__all__ = ["FLOOR_MARGIN_M", "FloorCanvas", "backdrop"]

_SKY_TOP, _SKY_BOTTOM = np.array([0.80, 0.85, 0.90]), np.array([0.93, 0.94, 0.95])
_FLOOR, _GRID = np.array([0.95, 0.94, 0.92]), np.array([0.78, 0.80, 0.82])

FLOOR_MARGIN_M = 4.0
"""How far the floor disc reaches beyond the followed path, metres."""


def backdrop(
    camera: Camera, *, floor_centre: np.ndarray, path_radius_m: float, sky_rows: tuple[int, int]
) -> np.ndarray:
    """Sky and a floor disc with a half-metre grid fading out beyond the path, as ``camera`` sees it.

    Parameters
    ----------
    camera : the view; every row of its picture is drawn
    floor_centre : np.ndarray [shape=(2,)], the disc's middle (world x, z), metres
    path_radius_m : the followed path's reach from ``floor_centre``; the disc is
        :data:`FLOOR_MARGIN_M` larger, and the grid fades out over 3.5 m beyond the path
    sky_rows : the rows (first, last) over which the sky's colour goes from its top to its bottom

    Returns
    -------
    np.ndarray [shape=(H, W, 3), dtype=float32]
        RGB in 0..1.
    """
    h, w = camera.height, camera.width
    first, last = sky_rows
    share = np.clip((np.arange(h) - first) / max(last - first, 1), 0, 1)[:, None, None]
    image = np.broadcast_to(_SKY_TOP * (1 - share) + _SKY_BOTTOM * share, (h, w, 3)).copy()
    floor = camera.floor_points()
    radius = np.hypot(floor[..., 0] - floor_centre[0], floor[..., 2] - floor_centre[1])
    floor_radius = path_radius_m + FLOOR_MARGIN_M
    on_floor = radius < floor_radius
    line = np.minimum(
        np.abs((floor[..., 0] + 0.25) % 0.5 - 0.25), np.abs((floor[..., 2] + 0.25) % 0.5 - 0.25)
    )
    beyond = np.maximum(radius - path_radius_m, 0.0)
    grid = np.clip(1.0 - line / 0.012, 0, 1)[..., None] * np.clip(1.2 - beyond / 3.5, 0, 1)[..., None]
    tile = _FLOOR * (1 - grid) + _GRID * grid
    edge = np.clip((floor_radius - radius) / 0.25, 0, 1)[..., None]
    image = np.where(on_floor[..., None], tile * edge + image * (1 - edge), image)
    return image.astype(np.float32)


class FloorCanvas:
    """The floor and sky under a whole camera path, drawn once, in RGB and in the encoder's planes.

    Frame ``i``'s picture above the beat strip is the canvas from :meth:`origin` ``(i)``, as large
    as the picture; :meth:`paint` copies it, RGB and planes, into a frame.

    Parameters
    ----------
    path : the follow camera of every frame
    """

    def __init__(self, path: CameraPath) -> None:
        base, shifts = path.base, path.shifts - path.shifts[0]
        left, top = (int(-shifts[:, k].min()) for k in (0, 1))
        right, bottom = (int(shifts[:, k].max()) for k in (0, 1))
        width, height = base.width + left + right, base.picture_height + top + bottom
        right += width % 2  # even, so that every crop's chroma exists at both parities
        bottom += height % 2
        canvas = base.padded(left, top, right, bottom - STRIP_PX)
        image = backdrop(
            canvas,
            floor_centre=path.floor_centre,
            path_radius_m=path.path_radius_m,
            sky_rows=(top, top + base.height - 1),
        )
        self.rgb = (np.clip(image, 0, 1) * 255).astype(np.uint8)
        self.origins = shifts[:, ::-1] + np.array([top, left])  # (row, column) of each frame's crop
        self.size = (base.picture_height, base.width)
        self.luma = rgb_to_yuv420(self.rgb)[0]
        # Chroma of the 2x2 blocks that start on odd rows or columns too, for crops at odd origins.
        self.chroma = {
            (row, col): rgb_to_yuv420(self.rgb[row : canvas.height - row, col : canvas.width - col])[1:]
            for row in (0, 1)
            for col in (0, 1)
        }

    def origin(self, frame: int) -> tuple[int, int]:
        """Where (row, column) frame ``frame``'s picture starts in the canvas."""
        row, col = self.origins[frame]
        return int(row), int(col)

    def paint(
        self,
        frame: int,
        rgb: np.ndarray,
        planes: tuple[np.ndarray, ...],
        box: tuple[int, int, int, int] | None = None,
    ) -> None:
        """Copy frame ``frame``'s floor into the top of the Y, U, V ``planes`` and of ``rgb`` ([H, W, 3]).

        ``box`` (y0, y1, x0, x1) limits the RGB copy to the part of the picture that will be drawn
        over and converted again; None copies the whole picture. The planes are copied whole.
        """
        h, w = self.size
        row, col = self.origin(frame)
        y0, y1, x0, x1 = (0, h, 0, w) if box is None else box
        rgb[y0:y1, x0:x1] = self.rgb[row + y0 : row + y1, col + x0 : col + x1]
        planes[0][:h] = self.luma[row : row + h, col : col + w]
        u, v = self.chroma[(row % 2, col % 2)]
        crow, ccol = row // 2, col // 2
        planes[1][: h // 2] = u[crow : crow + h // 2, ccol : ccol + w // 2]
        planes[2][: h // 2] = v[crow : crow + h // 2, ccol : ccol + w // 2]
