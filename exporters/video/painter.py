"""The video's frames: the mannequin shaded by a small software rasterizer in numpy.

The figure is the mannequin of the GLB files (the capsules of
:func:`exporters.mannequin.mannequin_capsules`) lit by one light, with an ambient term, a rim and a
highlight, over the floor (:class:`exporters.video.backdrop.FloorCanvas`) with a soft shadow, as
the frame's follow camera (:mod:`exporters.video.follow`) sees it. A strip along the bottom shows
the excerpt's beats and bars with a play head, and a lamp flashes on each beat, so beat-synchrony
can be judged by eye and ear.

Each frame's encoder planes start as a crop of the floor canvas's, drawn once; only the box that
the figure and its shadow cover is drawn in RGB (the floor copied there, the depth buffer cleared
there, each capsule over its own bounding box with a depth test), and only what changed in it is
converted back to the planes (the shadows' boxes and the 2x2 blocks of the figure's pixels); of
the beat strip only the play head and the lamp are drawn and converted: everything else of a
frame is a copy, which keeps a 720p frame at a few milliseconds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from exporters.mannequin import mannequin_capsules
from exporters.video.backdrop import FloorCanvas
from exporters.video.camera import STRIP_PX, Camera
from exporters.video.follow import CameraPath
from exporters.video.yuv import rgb_to_yuv420

__all__ = ["FramePainter"]

_BASE_255 = np.array([219, 189, 153], dtype=np.float32)  # light wood, as the GLB's mannequin
_LIGHT = np.array([-0.45, 0.75, 0.5]) / np.linalg.norm([-0.45, 0.75, 0.5])  # camera space
_LAMP = (20, 52, 20, 52)  # y0, y1, x0, x1 of the beat lamp
_STRIP = (0.16, 0.18, 0.2)


class FramePainter:
    """Draws one frame: the floor, the shadows, the capsules with a depth test, the beat strip.

    :attr:`planes` are the frame's Y, U, V planes for the encoder: each frame starts from its crop
    of the floor canvas's planes and the strip's, and the boxes drawn in the uint8 RGB
    :attr:`frame` are converted into them. Outside those boxes :attr:`frame` is stale.

    Parameters
    ----------
    path : the follow camera of each frame (the view and the picture's size)
    parents : the skeleton's parent of each joint (-1 for the root), for the end capsules' direction
    beat_times, bar_times : np.ndarray [shape=(K,)], song seconds of the beats and the bars' downbeats
    span : (start, end) song seconds of the excerpt, the beat strip's extent
    """

    def __init__(
        self,
        path: CameraPath,
        parents: tuple[int, ...],
        beat_times: np.ndarray,
        bar_times: np.ndarray,
        span: tuple[float, float],
    ) -> None:
        self.path = path
        self.camera: Camera = path.base  # the current frame's (:meth:`paint`)
        self.parents = parents
        self.pieces = mannequin_capsules()
        self.starts = [piece.start for piece in self.pieces]
        self.bones = [k for k, piece in enumerate(self.pieces) if piece.end >= 0]
        self.bone_ends = [self.pieces[k].end for k in self.bones]
        self.tips = [k for k, piece in enumerate(self.pieces) if piece.end < 0]
        self.radii = np.array([piece.radius_m for piece in self.pieces])
        self.span = span
        self.beats = np.asarray(beat_times, dtype=np.float64)
        self.floor = FloorCanvas(path)
        width = self.camera.width
        strip = np.broadcast_to(np.array(_STRIP), (STRIP_PX, width, 3)).copy()
        self._draw_strip_marks(strip, np.asarray(bar_times, dtype=np.float64))
        self.strip = (np.clip(strip, 0, 1) * 255).astype(np.uint8)
        self.frame = np.zeros((self.camera.height, width, 3), dtype=np.uint8)
        self.frame[self.camera.picture_height :] = self.strip
        self.planes = rgb_to_yuv420(self.frame)  # what goes to the encoder: only changed boxes are converted
        top = self.camera.picture_height  # even, so the strip's chroma rows are its own
        self.strip_planes = tuple(
            p[rows:].copy() for p, rows in zip(self.planes, (top, top // 2, top // 2), strict=True)
        )
        self.depth = np.full(self.frame.shape[:2], -np.inf, dtype=np.float32)
        # A view of the frame with each pixel one 3-byte item: gathers and scatters of whole pixels
        # by flat index are plain copies.
        self.pixels = self.frame.reshape(-1).view(np.dtype((np.void, 3)))
        self.depth_flat = self.depth.reshape(-1)
        # one mark per 2x2 chroma block, set while a frame's drawn blocks are gathered
        self.block_marks = np.zeros(self.camera.height // 2 * (width // 2), dtype=bool)
        self.xs = np.arange(width, dtype=np.float32)
        self.ys = np.arange(self.camera.height, dtype=np.float32)
        half = _LIGHT + np.array([0.0, 0.0, 1.0])
        self.light = _LIGHT.astype(np.float32)
        self.half = (half / np.linalg.norm(half)).astype(np.float32)

    def _strip_x(self, t: np.ndarray | float) -> np.ndarray | float:
        start, end = self.span
        return 12 + (np.asarray(t) - start) / max(end - start, 1e-6) * (self.camera.width - 24)

    def _draw_strip_marks(self, strip: np.ndarray, bars: np.ndarray) -> None:
        """Mark the excerpt's beats (short) and bars (tall) on the strip's picture ``strip``."""
        start, end = self.span
        for times, colour, height in ((self.beats, (0.55, 0.58, 0.62), 10), (bars, (0.92, 0.92, 0.92), 22)):
            for x in np.asarray(self._strip_x(times[(times >= start) & (times <= end)])).astype(int):
                strip[STRIP_PX - 6 - height : STRIP_PX - 6, x : x + 2] = colour

    def _box(self, u0: float, u1: float, v0: float, v1: float) -> tuple[int, int, int, int] | None:
        """The pixel box (y0, y1, x0, x1) of a span in pixels, clipped to the picture above the strip."""
        c = self.camera
        x0, x1 = max(int(u0), 0), min(int(u1) + 1, c.width)
        y0, y1 = max(int(v0), 0), min(int(v1) + 1, c.height - STRIP_PX)
        return (y0, y1, x0, x1) if x0 < x1 and y0 < y1 else None

    def _shadow(
        self, centre: np.ndarray, radius_m: float, strength: float
    ) -> tuple[int, int, int, int] | None:
        """Darken the floor in a soft disc around ``centre`` (a world point on the floor); returns
        the box drawn in, None when none was."""
        c = self.camera
        u, v, _ = c.project(centre)
        rx, ry = radius_m * c.scale, max(radius_m * c.scale * c.floor_squash, 2.0)
        box = self._box(u - rx, u + rx, v - ry, v + ry)
        if box is None or strength <= 0:
            return None
        y0, y1, x0, x1 = box
        fx = ((self.xs[x0:x1] - u) / rx) ** 2
        fy = ((self.ys[y0:y1] - v) / ry) ** 2
        keep = 1.0 - strength * np.maximum(1.0 - (fx[None, :] + fy[:, None]), 0.0) ** 1.5
        region = self.frame[y0:y1, x0:x1]
        region[:] = region * keep[..., None]
        return box

    def _capsules(self, joints: np.ndarray) -> np.ndarray:
        """Every capsule's projected ends as rows ``[K, 2, 3]`` (a, b: pixel x, y, depth m) in this
        frame's camera; a tip's far end lies ``tip_length_m`` along its incoming bone."""
        points = self.camera.project(joints)
        ends = np.empty((len(self.pieces), 2, 3))
        ends[:, 0] = points[self.starts]
        ends[self.bones, 1] = points[self.bone_ends]
        for k in self.tips:
            piece = self.pieces[k]
            direction = joints[piece.start] - joints[self.parents[piece.start]]
            direction /= max(float(np.linalg.norm(direction)), 1e-6)
            ends[k, 1] = self.camera.project(joints[piece.start] + direction * piece.tip_length_m)
        return ends

    def _capsule_boxes(self, ends: np.ndarray) -> np.ndarray:
        """The pixel box (y0, y1, x0, x1) that each capsule can cover, clipped as :meth:`_box`
        clips; rows ``[K, 4]``, empty ones with ``y0 >= y1`` or ``x0 >= x1``."""
        c = self.camera
        r = self.radii * c.scale
        low, high = ends[:, :, :2].min(axis=1) - r[:, None], ends[:, :, :2].max(axis=1) + r[:, None]
        x0, y0 = (np.maximum(low[:, k].astype(int), 0) for k in (0, 1))
        x1 = np.minimum(high[:, 0].astype(int) + 1, c.width)
        y1 = np.minimum(high[:, 1].astype(int) + 1, c.height - STRIP_PX)
        return np.stack([y0, y1, x0, x1], axis=1)

    def _figure(self, ends: np.ndarray, boxes: np.ndarray) -> np.ndarray:
        """Rasterize every capsule (``ends`` as from :meth:`_capsules`) over its box in ``boxes``.

        Each capsule works in its own frame: ``along`` its projected axis and ``across`` it, so
        its outline is ``across² + (along beyond the ends)² < r²``; depth and normal are those of
        the sphere swept along the axis at that point. The pixels of all the capsules' boxes are
        tested as one array (box after box, so a few dozen numpy calls a frame, not a few dozen a
        capsule); the pixels inside then go through depth, depth test and shading as one array:
        the nearest capsule wins a pixel, the first one drawn on a tie, and only winning pixels
        are shaded.

        Returns the flat frame index of every pixel drawn.
        """
        table = self._capsule_params(ends)
        drawn = np.flatnonzero((boxes[:, 0] < boxes[:, 1]) & (boxes[:, 2] < boxes[:, 3]))
        if not len(drawn):
            return np.zeros(0, dtype=np.intp)
        y0, y1, x0, x1 = boxes[drawn].T
        heights, widths = y1 - y0, x1 - x0
        areas = heights * widths
        # Every box's pixels in one array, box after box, each in raster order: first its rows,
        # then the pixels of each row.
        box_of_row = np.repeat(np.arange(len(drawn)), heights)
        row_y = np.arange(int(heights.sum())) - np.repeat(np.cumsum(heights) - heights - y0, heights)
        row_width = widths[box_of_row]
        row_start = np.cumsum(row_width) - row_width - x0[box_of_row]
        rows = np.repeat(row_y, row_width)
        cols = np.arange(len(rows)) - np.repeat(row_start, row_width)
        ax, ay, ux, uy, length, r2 = (np.repeat(table[row, drawn], areas) for row in range(6))
        px, py = cols.astype(np.float32) - ax, rows.astype(np.float32) - ay
        along = px * ux + py * uy
        across = py * ux - px * uy
        beyond = np.clip(along, 0, length)
        np.subtract(along, beyond, out=beyond)
        h2 = across * across
        h2 += beyond * beyond
        inside = np.flatnonzero(h2 < r2)
        rows, cols = rows[inside], cols[inside]
        rows *= self.camera.width
        rows += cols
        pixels = rows  # the flat index in the frame
        # inside runs box after box: its counts per box, and the boxes' numbers repeated, not gathered
        counts = np.diff(np.searchsorted(inside, np.cumsum(areas) - areas, side="left"), append=len(inside))
        which = np.repeat(drawn, counts)
        along, across, beyond, h2 = along[inside], across[inside], beyond[inside], h2[inside]
        lengths, r2s, depths, rises, radii = (np.repeat(table[row, drawn], counts) for row in (6, 5, 7, 8, 9))
        t = (along - beyond) / lengths
        nz = np.sqrt(1.0 - h2 / r2s)
        depth = depths + t * rises + radii * nz
        np.maximum.at(self.depth_flat, pixels, depth)
        # the winners, reversed: where capsules tie, the first drawn is written last
        won = np.flatnonzero(depth == self.depth_flat[pixels])[::-1]
        pixels, nz, owner = pixels[won], nz[won], which[won]
        r = table[10, owner]
        dx, dy = table[2, owner], table[3, owner]  # the unit axis
        # The normal's picture-plane part points from the axis to the pixel: (along beyond, across) / r.
        beyond, across = beyond[won] / r, across[won] / r
        nx = beyond * dx - across * dy
        ny = -(beyond * dy + across * dx)
        lit = np.maximum(nx * self.light[0] + ny * self.light[1] + nz * self.light[2], 0)
        facing = np.maximum(nx * self.half[0] + ny * self.half[1] + nz * self.half[2], 0)
        lifted = np.flatnonzero(facing)  # the power only where it is not 0
        gloss = np.zeros_like(facing)
        gloss[lifted] = facing[lifted] ** 24
        gloss *= 64.0
        shade = 0.3 + 0.8 * lit + 0.2 * (1.0 - nz) ** 3
        colour = np.empty((len(pixels), 3), dtype=np.uint8)
        for channel in range(3):  # truncated to uint8 as it is stored
            colour[:, channel] = np.minimum(_BASE_255[channel] * shade + gloss, 255)
        self.pixels[pixels] = colour.reshape(-1).view(self.pixels.dtype)
        return pixels

    def _capsule_params(self, ends: np.ndarray) -> np.ndarray:
        """Every capsule's numbers for :meth:`_figure`, rows of ``[11, K]`` float32: a's x and y, the
        unit axis, its length, r², the length divided by, a's depth, the depth's change, the radius
        in metres, r."""
        a, b = ends[:, 0], ends[:, 1]
        r = self.radii * self.camera.scale
        axis = (b[:, :2] - a[:, :2]).astype(np.float32)
        length = np.hypot(axis[:, 0], axis[:, 1])
        unit = np.divide(axis, length[:, None], out=np.zeros_like(axis), where=length[:, None] > 1e-6)
        unit[length.astype(np.float64) <= 1e-6] = (1, 0)
        rows = (a[:, 0], a[:, 1], unit[:, 0], unit[:, 1], length, r * r, np.maximum(length, np.float32(1e-6)),
                a[:, 2], b[:, 2] - a[:, 2], self.radii, r)  # fmt: skip
        return np.stack([np.asarray(row, dtype=np.float32) for row in rows])

    def paint(self, frame: int, joints: np.ndarray, t: float) -> None:
        """Frame ``frame`` of the path: the pose ``joints`` ([24, 3] world metres) at song time ``t``.

        The picture is left in :attr:`planes`, for the encoder.
        """
        self.camera = self.path.camera(frame)
        floor = np.array([1.0, 0.0, 1.0])
        ends = self._capsules(joints)
        boxes = self._capsule_boxes(ends)
        shadow_reach = 0.45 * self.camera.scale
        ground = self.camera.project(joints[[0, 10, 11]] * floor)
        shadow_box = self._box(
            ground[:, 0].min() - shadow_reach,
            ground[:, 0].max() + shadow_reach,
            ground[:, 1].min() - shadow_reach,
            ground[:, 1].max() + shadow_reach,
        )
        shown = boxes[(boxes[:, 0] < boxes[:, 1]) & (boxes[:, 2] < boxes[:, 3])]
        covered = [(y0, y1, x0, x1) for y0, y1, x0, x1 in shown.tolist()]
        drawn = _even(_bounds([*covered, shadow_box]))  # all the figure and its shadows draw in
        self.floor.paint(frame, self.frame, self.planes, drawn)
        y0, y1, x0, x1 = drawn
        self.depth[y0:y1, x0:x1] = -np.inf
        shaded = [self._shadow(joints[0] * floor, 0.42, 0.28)]
        for foot in (10, 11):
            shaded.append(self._shadow(joints[foot] * floor, 0.14, 0.3 * float(joints[foot, 1] < 0.12)))
        pixels = self._figure(ends, boxes)
        head = self._strip_head(t)
        for box in (*(box for box in shaded if box is not None), _LAMP, head):
            self._convert(box)
        self._convert_pixels(pixels)

    def _convert_pixels(self, pixels: np.ndarray) -> None:
        """Bring the encoder's planes up to date with the RGB frame at the flat indices ``pixels``
        (and the rest of their 2x2 chroma blocks)."""
        if not len(pixels):
            return
        width = self.camera.width
        rows, cols = np.divmod(pixels, width)
        rows >>= 1
        cols >>= 1
        rows *= width // 2
        rows += cols  # each pixel's chroma block, as a flat index in the chroma planes
        low, high = int(rows.min()), int(rows.max()) + 1
        marks = self.block_marks[low:high]
        marks[rows - low] = True
        blocks = np.flatnonzero(marks)
        marks[blocks] = False
        blocks += low
        block_rows, block_cols = np.divmod(blocks, width // 2)
        top = 2 * (block_rows * width + block_cols)  # each block's top left pixel
        quads = (top[None, :, None] + np.array([[[0, 1]], [[width, width + 1]]])).reshape(-1)
        y, u, v = rgb_to_yuv420(self.pixels[quads].view(np.uint8).reshape(2, -1, 3))
        self.planes[0].reshape(-1)[quads] = y.reshape(-1)
        self.planes[1].reshape(-1)[blocks] = u.reshape(-1)
        self.planes[2].reshape(-1)[blocks] = v.reshape(-1)

    def _convert(self, box: tuple[int, int, int, int]) -> None:
        """Bring the encoder's planes up to date with the RGB frame inside ``box`` (widened to even)."""
        y0, y1, x0, x1 = _even(box)
        if y0 >= y1 or x0 >= x1:
            return
        y, u, v = rgb_to_yuv420(self.frame[y0:y1, x0:x1])
        self.planes[0][y0:y1, x0:x1] = y
        self.planes[1][y0 // 2 : y1 // 2, x0 // 2 : x1 // 2] = u
        self.planes[2][y0 // 2 : y1 // 2, x0 // 2 : x1 // 2] = v

    def _strip_head(self, t: float) -> tuple[int, int, int, int]:
        """The play head on the strip and the beat lamp, bright on a beat and fading over 0.15 s.

        The strip's RGB and planes are restored from their copies; returns the play head's box.
        """
        c = self.camera
        top = c.picture_height
        self.frame[top:] = self.strip
        for plane, rows, strip in zip(self.planes, (top, top // 2, top // 2), self.strip_planes, strict=True):
            plane[rows:] = strip
        x = int(self._strip_x(t))
        head = (top + 3, c.height - 3, max(x - 1, 0), min(x + 2, c.width))
        self.frame[head[0] : head[1], head[2] : head[3]] = (242, 76, 76)
        since = t - self.beats[self.beats <= t + 1e-6].max(initial=-np.inf)
        glow = float(np.clip(1.0 - since / 0.15, 0, 1))
        y0, y1, x0, x1 = _LAMP
        self.frame[y0:y1, x0:x1] = (int(90 + 150 * glow), int(80 - 30 * glow), int(80 - 30 * glow))
        return head


def _even(box: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """``box`` (y0, y1, x0, x1) widened to even edges, so that it holds whole 2x2 chroma blocks."""
    return box[0] & ~1, (box[1] + 1) & ~1, box[2] & ~1, (box[3] + 1) & ~1


def _bounds(boxes: Sequence[tuple[int, int, int, int] | None]) -> tuple[int, int, int, int]:
    """The smallest box (y0, y1, x0, x1) holding every box given; empty when none is."""
    drawn = [box for box in boxes if box is not None]
    if not drawn:
        return (0, 0, 0, 0)
    y0, y1 = min(b[0] for b in drawn), max(b[1] for b in drawn)
    return (y0, y1, min(b[2] for b in drawn), max(b[3] for b in drawn))
