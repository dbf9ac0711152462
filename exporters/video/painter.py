"""The video's frames: the mannequin shaded by a small software rasterizer in numpy.

The figure is the mannequin of the GLB files (the capsules of
:func:`exporters.mannequin.mannequin_capsules`) lit by one light, with an ambient term, a rim and a
highlight, over the floor (:class:`exporters.video.backdrop.FloorCanvas`) with a soft shadow, as
the frame's follow camera (:mod:`exporters.video.follow`) sees it. A strip along the bottom shows
the excerpt's beats and bars with a play head, and a lamp flashes on each beat, so beat-synchrony
can be judged by eye and ear.

Each frame's encoder planes start as a crop of the floor canvas's, drawn once; only the box that
the figure and its shadow cover is drawn in RGB (the floor copied there, the depth buffer cleared
there, each capsule over its own bounding box with a depth test) and converted back to the planes,
and of the beat strip only the play head and the lamp are drawn and converted: everything else of
a frame is a copy, which keeps a 720p frame at a few milliseconds.
"""

from __future__ import annotations

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
        self.frame_flat = self.frame.reshape(-1, 3)  # views, for writing pixel lists by flat index
        self.depth_flat = self.depth.reshape(-1)
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

    def _shadow(self, centre: np.ndarray, radius_m: float, strength: float) -> None:
        """Darken the floor in a soft disc around ``centre`` (a world point on the floor)."""
        c = self.camera
        u, v, _ = c.project(centre)
        rx, ry = radius_m * c.scale, max(radius_m * c.scale * c.floor_squash, 2.0)
        box = self._box(u - rx, u + rx, v - ry, v + ry)
        if box is None or strength <= 0:
            return
        y0, y1, x0, x1 = box
        fx = ((self.xs[x0:x1] - u) / rx) ** 2
        fy = ((self.ys[y0:y1] - v) / ry) ** 2
        keep = 1.0 - strength * np.maximum(1.0 - (fx[None, :] + fy[:, None]), 0.0) ** 1.5
        region = self.frame[y0:y1, x0:x1]
        region[:] = region * keep[..., None]

    def _capsule_box(self, a: np.ndarray, b: np.ndarray, radius_m: float) -> tuple[int, int, int, int] | None:
        """The pixel box that the capsule between projected points ``a`` and ``b`` can cover."""
        r = radius_m * self.camera.scale
        return self._box(min(a[0], b[0]) - r, max(a[0], b[0]) + r, min(a[1], b[1]) - r, max(a[1], b[1]) + r)

    def _figure(
        self,
        capsules: list[tuple[np.ndarray, np.ndarray, float]],
        boxes: list[tuple[int, int, int, int] | None],
    ) -> None:
        """Rasterize every capsule (projected ends ``a`` and ``b``: pixel x, y, depth m) over its ``box``.

        Each capsule works in its own frame: ``along`` its projected axis and ``across`` it, so
        its outline is ``across² + (along beyond the ends)² < r²``; depth and normal are those of
        the sphere swept along the axis at that point. The outline is found capsule by capsule
        (over its box, as outer sums); the pixels inside all capsules then go through depth,
        depth test and shading as one array: the nearest capsule wins a pixel, the first one
        drawn on a tie, and only winning pixels are shaded.
        """
        table = [self._capsule_params(*capsule) for capsule in capsules]
        parts: list[tuple[np.ndarray, ...]] = []
        for k, (numbers, box) in enumerate(zip(table, boxes, strict=True)):
            if box is None:
                continue
            y0, y1, x0, x1 = box
            ax, ay, ux, uy, length, r2 = numbers[:6]
            px, py = self.xs[x0:x1] - ax, self.ys[y0:y1] - ay
            along = ((px * ux)[None, :] + (py * uy)[:, None]).ravel()
            across = ((py * ux)[:, None] - (px * uy)[None, :]).ravel()
            beyond = along - np.minimum(np.maximum(along, 0), length)
            h2 = across * across + beyond * beyond
            inside = np.flatnonzero(h2 < r2)
            width = x1 - x0
            pixels = (
                (inside // width + y0) * self.camera.width + inside % width + x0
            )  # flat index in the frame
            parts.append(
                (along[inside], across[inside], beyond[inside], h2[inside], pixels, np.full(inside.size, k))
            )
        if not parts:
            return
        along, across, beyond, h2, pixels, which = (
            np.concatenate(column) for column in zip(*parts, strict=True)
        )
        counts = np.bincount(which, minlength=len(capsules))  # which runs in order: repeat, not gather
        params = [np.repeat(row, counts) for row in np.array(table).T]
        t = (along - beyond) / params[6]
        nz = np.sqrt(1.0 - h2 / params[5])
        depth = params[7] + t * params[8] + params[9] * nz
        np.maximum.at(self.depth_flat, pixels, depth)
        # the winners, reversed: where capsules tie, the first drawn is written last
        won = np.flatnonzero(depth == self.depth_flat[pixels])[::-1]
        pixels, nz, r = pixels[won], nz[won], params[10][won]
        dx, dy = params[2][won], params[3][won]  # the unit axis
        # The normal's picture-plane part points from the axis to the pixel: (along beyond, across) / r.
        beyond, across = beyond[won] / r, across[won] / r
        nx = beyond * dx - across * dy
        ny = -(beyond * dy + across * dx)
        lit = np.maximum(nx * self.light[0] + ny * self.light[1] + nz * self.light[2], 0)
        facing = np.maximum(nx * self.half[0] + ny * self.half[1] + nz * self.half[2], 0)
        lifted = np.flatnonzero(facing)  # the power only where it is not 0
        gloss = np.zeros_like(facing)
        gloss[lifted] = facing[lifted] ** 24
        shade = 0.3 + 0.8 * lit + 0.2 * (1.0 - nz) ** 3
        flat = self.frame.reshape(-1)
        for channel in range(3):  # one plain scatter per channel: a scatter of rows is several times slower
            colour = _BASE_255[channel] * shade + 64.0 * gloss
            flat[pixels * 3 + channel] = np.minimum(colour, 255).astype(np.uint8)

    def _capsule_params(self, a: np.ndarray, b: np.ndarray, radius_m: float) -> list[np.float32]:
        """One capsule's numbers for :meth:`_figure`, in float32: a's x and y, the unit axis, its
        length, r², the length divided by, a's depth, the depth's change, the radius in metres, r."""
        r = radius_m * self.camera.scale
        axis = (b[:2] - a[:2]).astype(np.float32)
        length = float(np.hypot(*axis))
        ux, uy = (axis / length) if length > 1e-6 else (np.float32(1), np.float32(0))
        f = np.float32
        return [f(a[0]), f(a[1]), f(ux), f(uy), f(length), f(r * r), f(max(length, 1e-6)), f(a[2]),
                f(b[2] - a[2]), f(radius_m), f(r)]  # fmt: skip

    def paint(self, frame: int, joints: np.ndarray, t: float) -> None:
        """Frame ``frame`` of the path: the pose ``joints`` ([24, 3] world metres) at song time ``t``.

        The picture is left in :attr:`planes`, for the encoder.
        """
        self.camera = self.path.camera(frame)
        floor = np.array([1.0, 0.0, 1.0])
        points = self.camera.project(joints)
        capsules = []
        for piece in self.pieces:
            if piece.end >= 0:
                end = points[piece.end]
            else:
                direction = joints[piece.start] - joints[self.parents[piece.start]]
                direction /= max(float(np.linalg.norm(direction)), 1e-6)
                end = self.camera.project(joints[piece.start] + direction * piece.tip_length_m)
            capsules.append((points[piece.start], end, piece.radius_m))
        boxes = [self._capsule_box(*capsule) for capsule in capsules]
        shadow_reach = 0.45 * self.camera.scale
        ground = self.camera.project(joints[[0, 10, 11]] * floor)
        boxes.append(
            self._box(
                ground[:, 0].min() - shadow_reach,
                ground[:, 0].max() + shadow_reach,
                ground[:, 1].min() - shadow_reach,
                ground[:, 1].max() + shadow_reach,
            )
        )
        drawn = _even(_bounds(boxes))  # all the figure and its shadows draw in
        self.floor.paint(frame, self.frame, self.planes, drawn)
        y0, y1, x0, x1 = drawn
        self.depth[y0:y1, x0:x1] = -np.inf
        self._shadow(joints[0] * floor, 0.42, 0.28)
        for foot in (10, 11):
            self._shadow(joints[foot] * floor, 0.14, 0.3 * float(joints[foot, 1] < 0.12))
        self._figure(capsules, boxes[:-1])
        head = self._strip_head(t)
        for box in (drawn, _LAMP, head):
            self._convert(box)

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


def _bounds(boxes: list[tuple[int, int, int, int] | None]) -> tuple[int, int, int, int]:
    """The smallest box (y0, y1, x0, x1) holding every box given; empty when none is."""
    drawn = [box for box in boxes if box is not None]
    if not drawn:
        return (0, 0, 0, 0)
    y0, y1 = min(b[0] for b in drawn), max(b[1] for b in drawn)
    return (y0, y1, min(b[2] for b in drawn), max(b[3] for b in drawn))
