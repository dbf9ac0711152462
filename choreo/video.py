"""A shaded preview video of a dance with its song: 1280x720 H.264 with the song's audio (AAC).

A small software rasterizer in numpy draws the mannequin of the GLB files (the capsules of
:func:`exporters.mannequin.mannequin_capsules`) lit by one light, with an ambient term, a rim and
a highlight, on a floor with a grid and a soft shadow, from a fixed three-quarter camera (orthographic, so a
capsule's outline is exactly a stadium and its depth and normal follow in closed form). A strip
along the bottom shows the excerpt's beats and bars with a play head, and a lamp flashes on each
beat, so beat-synchrony can be judged by eye and ear. Raw frames are piped into ffmpeg, which
cuts the song at the same start time and muxes it in, so picture and sound start together.

Each capsule is drawn over its own bounding box only, with a depth test, which keeps a 720p
frame at a few milliseconds; ``bench/video.py`` measures the whole write on one core.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from choreo.errors import ExportError, ParameterError
from choreo.motion import Motion, joint_positions
from exporters.mannequin import mannequin_capsules

__all__ = ["VideoOptions", "write_video"]

_BASE_255 = np.array([219, 189, 153], dtype=np.float32)  # light wood, as the GLB's mannequin
_SKY_TOP, _SKY_BOTTOM = np.array([0.80, 0.85, 0.90]), np.array([0.93, 0.94, 0.95])
_FLOOR, _GRID = np.array([0.95, 0.94, 0.92]), np.array([0.78, 0.80, 0.82])
_LIGHT = np.array([-0.45, 0.75, 0.5]) / np.linalg.norm([-0.45, 0.75, 0.5])  # camera space
_STRIP_PX = 34
_LAMP = (20, 52, 20, 52)  # y0, y1, x0, x1 of the beat lamp


@dataclass(frozen=True)
class VideoOptions:
    """What part of the song, and how big.

    ``duration_s`` of None renders to the end of the song; the default is the first 30 s.
    """

    start_s: float = 0.0
    duration_s: float | None = 30.0
    width: int = 1280
    height: int = 720
    fps: int = 24
    encoder_threads: int = 1

    def __post_init__(self) -> None:
        if self.width < 1280 or self.height < 720 or self.width % 2 or self.height % 2:
            raise ParameterError(f"video size {self.width}x{self.height}: at least 1280x720, even numbers")
        if not 1 <= self.fps <= 60:
            raise ParameterError(f"video fps {self.fps} must be 1 to 60")
        if self.start_s < 0 or (self.duration_s is not None and self.duration_s <= 0):
            raise ParameterError(
                f"excerpt start {self.start_s} s, length {self.duration_s} s: must be positive"
            )


def _to_yuv420(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """BT.601 limited-range Y, U, V planes (U and V at half size) of an even-sized uint8 RGB block."""
    f = rgb.astype(np.float32)
    y = 16.0 + f @ np.array([0.257, 0.504, 0.098], dtype=np.float32)
    quad = (f[0::2, 0::2] + f[1::2, 0::2] + f[0::2, 1::2] + f[1::2, 1::2]) * np.float32(0.25)
    u = 128.0 + quad @ np.array([-0.148, -0.291, 0.439], dtype=np.float32)
    v = 128.0 + quad @ np.array([0.439, -0.368, -0.071], dtype=np.float32)
    return tuple(np.clip(np.rint(p), 0, 255).astype(np.uint8) for p in (y, u, v))


class _Camera:
    """An orthographic three-quarter view: world metres to pixels and camera-space depth."""

    def __init__(self, width: int, height: int, *, yaw_deg: float = 28.0, pitch_deg: float = 14.0) -> None:
        yaw, pitch = np.radians(yaw_deg), np.radians(pitch_deg)
        self.floor_squash = float(np.sin(pitch))  # how much shorter the floor looks than it is wide
        turn = np.array([[np.cos(yaw), 0, -np.sin(yaw)], [0, 1, 0], [np.sin(yaw), 0, np.cos(yaw)]])
        tilt = np.array([[1, 0, 0], [0, np.cos(pitch), -np.sin(pitch)], [0, np.sin(pitch), np.cos(pitch)]])
        self.rotation = tilt @ turn  # world -> camera (x right, y up, z towards the viewer)
        self.scale = (height - _STRIP_PX) / 3.2  # pixels per metre: a 1.7 m figure fills half the height
        self.centre = np.array([width / 2, (height - _STRIP_PX) * 0.5])
        self.look_at = np.array([0.0, 1.0, 0.0])
        self.width, self.height = width, height

    def project(self, points: np.ndarray) -> np.ndarray:
        """World points ``[..., 3]`` to pixel x, pixel y (down) and depth in metres (nearer is larger)."""
        cam = (points - self.look_at) @ self.rotation.T
        return np.stack(
            [
                self.centre[0] + self.scale * cam[..., 0],
                self.centre[1] - self.scale * cam[..., 1],
                cam[..., 2],
            ],
            axis=-1,
        )

    def floor_points(self) -> np.ndarray:
        """The world point on the floor (y = 0) seen at each pixel, ``[H, W, 3]`` (far away near the top)."""
        ys, xs = np.mgrid[0 : self.height, 0 : self.width].astype(np.float64)
        cam_x = (xs - self.centre[0]) / self.scale
        cam_y = (self.centre[1] - ys) / self.scale
        inverse = self.rotation.T  # camera -> world
        # A world point is look_at + inverse @ (cam_x, cam_y, z); choose z so that its y is 0.
        world_y0 = self.look_at[1] + inverse[1, 0] * cam_x + inverse[1, 1] * cam_y
        z = -world_y0 / inverse[1, 2]
        cam = np.stack([cam_x, cam_y, z], axis=-1)
        return self.look_at + cam @ inverse.T


def _background(camera: _Camera) -> np.ndarray:
    """Sky, a floor disc with a half-metre grid fading into the distance: ``[H, W, 3]`` float32."""
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
    image[h - _STRIP_PX :] = (0.16, 0.18, 0.2)
    return image.astype(np.float32)


class _Painter:
    """Draws one frame: the background, the shadows, the capsules with a depth test, the beat strip.

    The frame is uint8 RGB, written in place; each frame first restores from the background only
    the box the previous frame drew into.
    """

    def __init__(
        self,
        camera: _Camera,
        parents: tuple[int, ...],
        beat_times: np.ndarray,
        bar_times: np.ndarray,
        span: tuple[float, float],
    ) -> None:
        self.camera = camera
        self.parents = parents
        self.pieces = mannequin_capsules()
        self.span = span
        self.beats = np.asarray(beat_times, dtype=np.float64)
        background = _background(camera)
        self._draw_strip_marks(background, np.asarray(bar_times, dtype=np.float64))
        self.background = (np.clip(background, 0, 1) * 255).astype(np.uint8)
        self.frame = self.background.copy()
        self.planes = _to_yuv420(self.frame)  # what goes to the encoder: only changed boxes are converted
        self.depth = np.full(self.frame.shape[:2], -np.inf, dtype=np.float32)
        self.frame_flat = self.frame.reshape(-1, 3)  # views, for writing pixel lists by flat index
        self.depth_flat = self.depth.reshape(-1)
        self.dirty = (0, 0, 0, 0)  # y0, y1, x0, x1 of what the last frame drew over the background
        self.xs = np.arange(camera.width, dtype=np.float32)
        self.ys = np.arange(camera.height, dtype=np.float32)
        half = _LIGHT + np.array([0.0, 0.0, 1.0])
        self.light = _LIGHT.astype(np.float32)
        self.half = (half / np.linalg.norm(half)).astype(np.float32)

    def _strip_x(self, t: np.ndarray | float) -> np.ndarray | float:
        start, end = self.span
        return 12 + (np.asarray(t) - start) / max(end - start, 1e-6) * (self.camera.width - 24)

    def _draw_strip_marks(self, background: np.ndarray, bars: np.ndarray) -> None:
        top = self.camera.height - _STRIP_PX
        start, end = self.span
        for times, colour, height in ((self.beats, (0.55, 0.58, 0.62), 10), (bars, (0.92, 0.92, 0.92), 22)):
            for x in np.asarray(self._strip_x(times[(times >= start) & (times <= end)])).astype(int):
                background[top + _STRIP_PX - 6 - height : top + _STRIP_PX - 6, x : x + 2] = colour

    def _box(self, u0: float, u1: float, v0: float, v1: float) -> tuple[int, int, int, int] | None:
        """The pixel box (y0, y1, x0, x1) of a span in pixels, clipped to the picture above the strip."""
        c = self.camera
        x0, x1 = max(int(u0), 0), min(int(u1) + 1, c.width)
        y0, y1 = max(int(v0), 0), min(int(v1) + 1, c.height - _STRIP_PX)
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

    def _capsule(self, a: np.ndarray, b: np.ndarray, radius_m: float) -> tuple[int, int, int, int] | None:
        """Rasterize the capsule between projected points ``a`` and ``b`` (pixel x, y, depth m).

        Works in the capsule's own frame: ``along`` the projected axis and ``across`` it, so the
        outline is ``across² + (along beyond the ends)² < r²``; depth and normal are those of the
        sphere swept along the axis at that point. Only pixels inside are shaded.
        """
        r = radius_m * self.camera.scale
        box = self._box(min(a[0], b[0]) - r, max(a[0], b[0]) + r, min(a[1], b[1]) - r, max(a[1], b[1]) + r)
        if box is None:
            return None
        y0, y1, x0, x1 = box
        axis = (b[:2] - a[:2]).astype(np.float32)
        length = float(np.hypot(*axis))
        ux, uy = (axis / length) if length > 1e-6 else (np.float32(1), np.float32(0))
        px, py = self.xs[x0:x1] - np.float32(a[0]), self.ys[y0:y1] - np.float32(a[1])
        along = (px * ux)[None, :] + (py * uy)[:, None]
        across = (py * ux)[:, None] - (px * uy)[None, :]
        beyond = along - np.minimum(np.maximum(along, 0), length)
        h2 = across * across + beyond * beyond
        inside = np.flatnonzero(h2 < r * r)
        if inside.size == 0:
            return None
        along, across, beyond, h2 = (
            along.ravel()[inside],
            across.ravel()[inside],
            beyond.ravel()[inside],
            h2.ravel()[inside],
        )
        width = x1 - x0
        pixels = (inside // width + y0) * self.camera.width + inside % width + x0  # flat index in the frame
        t = (along - beyond) / max(length, 1e-6)
        nz = np.sqrt(1.0 - h2 / np.float32(r * r))
        depth = np.float32(a[2]) + t * np.float32(b[2] - a[2]) + np.float32(radius_m) * nz
        nearer = depth > self.depth_flat[pixels]
        pixels, depth, nz = pixels[nearer], depth[nearer], nz[nearer]
        # The normal's picture-plane part points from the axis to the pixel: (along beyond, across) / r.
        beyond, across = beyond[nearer] / np.float32(r), across[nearer] / np.float32(r)
        nx = beyond * ux - across * uy
        ny = -(beyond * uy + across * ux)
        lit = np.maximum(nx * self.light[0] + ny * self.light[1] + nz * self.light[2], 0)
        gloss = np.maximum(nx * self.half[0] + ny * self.half[1] + nz * self.half[2], 0) ** 24
        shade = 0.3 + 0.8 * lit + 0.2 * (1.0 - nz) ** 3
        colour = _BASE_255[None, :] * shade[:, None] + (64.0 * gloss)[:, None]
        self.depth_flat[pixels] = depth
        self.frame_flat[pixels] = np.minimum(colour, 255).astype(np.uint8)
        return box

    def paint(self, joints: np.ndarray, t: float) -> np.ndarray:
        """The frame of the pose ``joints`` ([24, 3] world metres) at song time ``t``, uint8 RGB."""
        y0, y1, x0, x1 = self.dirty
        self.frame[y0:y1, x0:x1] = self.background[y0:y1, x0:x1]
        self.depth[y0:y1, x0:x1] = -np.inf
        boxes = []
        floor = np.array([1.0, 0.0, 1.0])
        self._shadow(joints[0] * floor, 0.42, 0.28)
        for foot in (10, 11):
            self._shadow(joints[foot] * floor, 0.14, 0.3 * float(joints[foot, 1] < 0.12))
        points = self.camera.project(joints)
        for piece in self.pieces:
            if piece.end >= 0:
                end = points[piece.end]
            else:
                direction = joints[piece.start] - joints[self.parents[piece.start]]
                direction /= max(float(np.linalg.norm(direction)), 1e-6)
                end = self.camera.project(joints[piece.start] + direction * piece.tip_length_m)
            boxes.append(self._capsule(points[piece.start], end, piece.radius_m))
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
        drawn = [box for box in boxes if box is not None]
        dirty = (
            min(b[0] for b in drawn),
            max(b[1] for b in drawn),
            min(b[2] for b in drawn),
            max(b[3] for b in drawn),
        )
        self._strip_head(t)
        for box in (
            _union(self.dirty, dirty),
            _LAMP,
            (self.camera.height - _STRIP_PX, self.camera.height, 0, self.camera.width),
        ):
            self._convert(box)
        self.dirty = dirty
        return self.frame

    def _convert(self, box: tuple[int, int, int, int]) -> None:
        """Bring the encoder's planes up to date with the RGB frame inside ``box`` (widened to even)."""
        y0, y1, x0, x1 = box[0] & ~1, (box[1] + 1) & ~1, box[2] & ~1, (box[3] + 1) & ~1
        if y0 >= y1 or x0 >= x1:
            return
        y, u, v = _to_yuv420(self.frame[y0:y1, x0:x1])
        self.planes[0][y0:y1, x0:x1] = y
        self.planes[1][y0 // 2 : y1 // 2, x0 // 2 : x1 // 2] = u
        self.planes[2][y0 // 2 : y1 // 2, x0 // 2 : x1 // 2] = v

    def _strip_head(self, t: float) -> None:
        """The play head on the strip and the beat lamp, bright on a beat and fading over 0.15 s."""
        c = self.camera
        top = c.height - _STRIP_PX
        self.frame[top:] = self.background[top:]
        x = int(self._strip_x(t))
        self.frame[top + 3 : c.height - 3, max(x - 1, 0) : x + 2] = (242, 76, 76)
        since = t - self.beats[self.beats <= t + 1e-6].max(initial=-np.inf)
        glow = float(np.clip(1.0 - since / 0.15, 0, 1))
        y0, y1, x0, x1 = _LAMP
        self.frame[y0:y1, x0:x1] = (int(90 + 150 * glow), int(80 - 30 * glow), int(80 - 30 * glow))


def _union(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    if a[0] >= a[1] or a[2] >= a[3]:
        return b
    return (min(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), max(a[3], b[3]))


def _joint_track(motion: Motion, times: np.ndarray) -> np.ndarray:
    """Joint positions at ``times`` (seconds), linearly between the motion's frames: ``[T, 24, 3]``."""
    positions = joint_positions(motion)
    where = np.clip(times * motion.fps, 0, motion.n_frames - 1)
    low = np.floor(where).astype(int)
    high = np.minimum(low + 1, motion.n_frames - 1)
    share = (where - low)[:, None, None]
    return positions[low] * (1 - share) + positions[high] * share


def write_video(
    motion: Motion,
    path: Path,
    *,
    audio_path: Path | None,
    beat_times: np.ndarray,
    downbeat_times: np.ndarray | None = None,
    options: VideoOptions = VideoOptions(),
) -> Path:
    """Write an MP4 of the dance from ``options.start_s`` for ``options.duration_s`` (or to the end).

    The song at ``audio_path`` is cut to the same span and muxed in (AAC); without one the
    video is silent. Raises :class:`ExportError` when ffmpeg is missing or fails, naming why.
    """
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise ExportError("mp4 needs ffmpeg on the PATH (apt-get install ffmpeg)")
    if options.start_s >= motion.duration_s:
        raise ParameterError(
            f"excerpt start {options.start_s} s is past the dance's end ({motion.duration_s:.1f} s)"
        )
    end_s = (
        motion.duration_s
        if options.duration_s is None
        else min(motion.duration_s, options.start_s + options.duration_s)
    )
    times = np.arange(options.start_s, end_s, 1.0 / options.fps)
    camera = _Camera(options.width, options.height)
    painter = _Painter(
        camera,
        motion.skeleton.parents,
        np.asarray(beat_times),
        np.asarray([] if downbeat_times is None else downbeat_times, dtype=float),
        (options.start_s, end_s),
    )
    track = _joint_track(motion, times)

    path = Path(path)
    command = [
        ffmpeg, "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "yuv420p",
        "-s", f"{options.width}x{options.height}", "-r", str(options.fps), "-i", "-",
    ]  # fmt: skip
    if audio_path is not None:
        command += [
            "-ss",
            f"{options.start_s:.3f}",
            "-t",
            f"{end_s - options.start_s:.3f}",
            "-i",
            str(audio_path),
        ]
        command += ["-map", "0:v", "-map", "1:a", "-c:a", "aac", "-b:a", "160k", "-shortest"]
    command += [
        "-c:v", "libx264", "-preset", "ultrafast", "-tune", "animation", "-crf", "23", "-pix_fmt", "yuv420p",
        "-threads", str(options.encoder_threads), "-movflags", "+faststart", str(path),
    ]  # fmt: skip
    encoder = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    assert encoder.stdin is not None and encoder.stderr is not None  # both are pipes
    try:
        for joints, t in zip(track, times, strict=True):
            painter.paint(joints, float(t))
            for plane in painter.planes:
                encoder.stdin.write(plane.data)
        encoder.stdin.close()
    except BrokenPipeError:
        pass  # ffmpeg stopped early; its message below says why
    error = encoder.stderr.read().decode(errors="replace").strip()
    if encoder.wait() != 0:
        path.unlink(missing_ok=True)
        raise ExportError(f"ffmpeg could not write {path.name}: {error[-400:] or 'no message'}")
    return path
