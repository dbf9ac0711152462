"""The contact sheet (png): poses of a dance as stick figures, one panel each, for a person to judge.

Every render writes one, at the song's beats; the training data's preparation writes one per mocap
clip, with side views and a strip of the heights. The panels are drawn with Pillow; matplotlib is
imported only for the height strip.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from choreo.motion import Motion, joint_positions

if TYPE_CHECKING:
    from PIL.Image import Image as Picture
    from PIL.ImageFont import FreeTypeFont, ImageFont

__all__ = ["contact_sheet_frames", "write_contact_sheet"]

_MAX_PANELS = 16
_COLUMNS = 8
_FLOOR = "#2da44e"  # a colour nothing else in a sheet has, so the floor marks each panel
_LEFT, _RIGHT, _CENTRE = "#0969da", "#cf222e", "#24292f"
# The horizontal axis of each view: the front seen from +Z (the figure's left, +X, on the right of the
# picture), the side seen from the figure's right, -X (+Z on the right).
_VIEWS = {"front": 0, "side": 2}
# Sheet geometry: each panel is a box of floor space in metres (the figure's 1.8 m wide, -0.1 to 2.2 m
# high view and its caption), drawn at a fixed scale.
_PANEL_M = (2.0, 3.0)
_FLOOR_M = 0.3  # the floor's height above the panel's bottom
_FIGURE_TOP_M = 2.25  # the caption's baseline above the floor
_INCH_PER_M = 0.8
_TITLE_IN, _MARGIN_IN, _STRIP_IN = 0.3, 0.05, 2.6
_DPI = 80
_PX_PER_M = _INCH_PER_M * _DPI
# line widths as matplotlib's points (1/72 inch) gave them; text at the height of its 8 and 9 point
# DejaVu Sans in Pillow's default face, which runs smaller at one size
_BONE_PX, _FLOOR_PX = 1.6 * _DPI / 72, 2.0 * _DPI / 72
_LABEL_PX, _TITLE_PX = 10.5, 11.5
_TEXT = "#000000"
_SUPERSAMPLE = 4


def _limb_colour(name: str) -> str:
    if name.startswith("left"):
        return _LEFT
    if name.startswith("right"):
        return _RIGHT
    return _CENTRE


def contact_sheet_frames(motion: Motion, times_s: np.ndarray, max_panels: int = _MAX_PANELS) -> np.ndarray:
    """The frames a contact sheet draws: one per time, at most ``max_panels``.

    More times than panels are thinned evenly over the song, so the sheet shows
    the whole dance, not its first seconds; no times at all give ``max_panels``
    frames evenly spaced over the motion.
    """
    times = np.asarray(times_s, dtype=float)
    if times.size == 0:
        times = np.linspace(0.0, motion.duration_s, max_panels, endpoint=False)
    if times.size > max_panels:
        times = times[np.linspace(0, times.size - 1, max_panels).round().astype(int)]
    return np.clip(motion.time_to_frame(times), 0, motion.n_frames - 1)


def write_contact_sheet(
    motion: Motion,
    path: Path,
    *,
    times_s: np.ndarray,
    title: str = "",
    max_panels: int = _MAX_PANELS,
    side_view: bool = False,
    height_plot: bool = False,
) -> Path:
    """Draw the poses at ``times_s`` (the beats, say) as stick figures into a PNG.

    A wrong dance or a retargeting error (a limb bent the wrong way, a figure
    lying down, feet under the floor) is obvious in a picture and invisible in
    a number. Each panel is one pose, centred on the pelvis, with the floor
    (y = 0) as a green line; left limbs are blue, right limbs red. Panels run
    in rows of up to eight.

    The panels are drawn with Pillow at a fixed scale (:data:`_INCH_PER_M` at
    :data:`_DPI`), four times larger and shrunk for smooth edges: importing
    matplotlib's figure machinery cost a cold render more CPU than all else
    of its export. Only the height strip, a plot with axes, is matplotlib's.

    Parameters
    ----------
    motion : the motion to draw
    path : the ``.png`` to write; its folder is created
    times_s : np.ndarray [shape=(K,)], seconds; see :func:`contact_sheet_frames`
    title : a line above the panels
    max_panels : int > 0, the most poses drawn
    side_view : under each front view (seen from +Z), add the side view seen
        from the figure's right
    height_plot : add a strip of the root's height and x, z and the lowest
        joint's height over the whole motion

    Returns
    -------
    Path
        ``path``.
    """
    frames = contact_sheet_frames(motion, times_s, max_panels)
    # the joints of the drawn frames only, unless the height strip needs every frame's
    drawn = (
        motion
        if height_plot
        else motion.replace(
            rotations=motion.rotations[frames], root_translation=motion.root_translation[frames]
        )
    )
    all_positions = joint_positions(drawn)
    positions = all_positions[frames] if height_plot else all_positions
    views = ("front", "side") if side_view else ("front",)
    cols = min(_COLUMNS, len(frames))
    pose_rows = int(np.ceil(len(frames) / cols)) * len(views)
    top_px = _px(_TITLE_IN if title else _MARGIN_IN)
    strip_px = _px(_STRIP_IN) if height_plot else 0
    poses_px = _px(pose_rows * _PANEL_M[1] * _INCH_PER_M)
    width_px = _px(cols * _PANEL_M[0] * _INCH_PER_M)
    sheet = _Canvas(width_px, top_px + poses_px)
    names, parents = motion.skeleton.names, motion.skeleton.parents
    bones = [(p, j) for j, p in enumerate(parents) if p >= 0]
    colours = [_limb_colour(names[j]) for _, j in bones]
    for k, frame in enumerate(frames):
        pose = positions[k]
        for v, view in enumerate(views):
            row, col = (k // cols) * len(views) + v, k % cols
            # the panel's origin (its pelvis above its floor, the floor _FLOOR_M above the panel's
            # bottom) in pixels, and the pose seen from the view, metres up and right from it
            x0 = (col + 0.5) * _PANEL_M[0] * _PX_PER_M
            y0 = top_px + ((row + 1) * _PANEL_M[1] - _FLOOR_M) * _PX_PER_M
            h = _VIEWS[view]
            flat = np.stack(
                [x0 + (pose[:, h] - pose[0, h]) * _PX_PER_M, y0 - pose[:, 1] * _PX_PER_M], axis=-1
            )
            for (parent, joint), colour in zip(bones, colours, strict=True):
                sheet.line(flat[parent], flat[joint], colour, _BONE_PX)
            sheet.line((x0 - 0.8 * _PX_PER_M, y0), (x0 + 0.8 * _PX_PER_M, y0), _FLOOR, _FLOOR_PX)  # on top
            label = f"{frame / motion.fps:.1f} s" + (f" {view}" if side_view else "")
            sheet.text((x0, y0 - _FIGURE_TOP_M * _PX_PER_M), label, _LABEL_PX, anchor="md")
    if title:
        sheet.text((width_px / 2, _px(0.08)), title, _TITLE_PX, anchor="ma")
    image = sheet.image()
    if height_plot:
        image = _with_heights(image, motion, all_positions, strip_px)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="PNG")
    return path


def _px(inches: float) -> int:
    return int(round(inches * _DPI))


class _Canvas:
    """A white picture drawn :data:`_SUPERSAMPLE` times larger and shrunk by averaging: smooth edges
    on lines and text that Pillow draws hard."""

    def __init__(self, width_px: int, height_px: int) -> None:
        from PIL import Image, ImageDraw

        self._big = Image.new("RGB", (width_px * _SUPERSAMPLE, height_px * _SUPERSAMPLE), "white")
        self._draw = ImageDraw.Draw(self._big)
        self._fonts: dict[float, ImageFont | FreeTypeFont] = {}

    def line(self, start: ArrayLike, end: ArrayLike, colour: str, width_px: float) -> None:
        """A straight line with square ends reaching half its width past both points (matplotlib's
        "projecting" cap style: joined bones leave no notch)."""
        a, b = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
        direction = b - a
        length = float(np.hypot(*direction))
        reach = direction / length * width_px / 2 if length > 0 else np.zeros(2)
        a, b = (a - reach) * _SUPERSAMPLE, (b + reach) * _SUPERSAMPLE
        self._draw.line([tuple(a), tuple(b)], fill=colour, width=max(1, round(width_px * _SUPERSAMPLE)))

    def text(self, at: tuple[float, float], text: str, size_px: float, anchor: str) -> None:
        from PIL import ImageFont

        if size_px not in self._fonts:
            self._fonts[size_px] = ImageFont.load_default(size=size_px * _SUPERSAMPLE)
        x, y = at
        where = (x * _SUPERSAMPLE, y * _SUPERSAMPLE)
        self._draw.text(where, text, fill=_TEXT, font=self._fonts[size_px], anchor=anchor)

    def image(self) -> Picture:
        """The picture at its size."""
        return self._big.reduce(_SUPERSAMPLE)


def _with_heights(poses: Picture, motion: Motion, positions: np.ndarray, strip_px: int) -> Picture:
    """``poses`` with a strip of the root's height and x, z and the lowest joint's height below it,
    drawn by matplotlib (a plot with axes and a legend; only the training data's sheets have it)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from PIL import Image

    strip_in = strip_px / _DPI
    fig = Figure(figsize=(poses.width / _DPI, strip_in), dpi=_DPI)
    ax = fig.add_axes((0.07, 0.45 / strip_in, 0.9, (strip_in - 0.7) / strip_in))
    _draw_heights(ax, motion, positions)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    strip = Image.fromarray(np.asarray(canvas.buffer_rgba())[..., :3])
    sheet = Image.new("RGB", (poses.width, poses.height + strip.height), "white")
    sheet.paste(poses, (0, 0))
    sheet.paste(strip, (0, poses.height))
    return sheet


def _draw_heights(ax, motion: Motion, positions: np.ndarray) -> None:
    """Plot the root's height, x and z and the lowest joint's height over time into ``ax``."""
    t = np.arange(motion.n_frames) / motion.fps
    ax.plot(t, motion.root_translation[:, 1], label="root height")
    ax.plot(t, positions[..., 1].min(axis=1), label="lowest joint")
    ax.plot(t, motion.root_translation[:, 0], label="root x", alpha=0.6)
    ax.plot(t, motion.root_translation[:, 2], label="root z", alpha=0.6)
    ax.axhline(0.0, color="0.6", lw=1)
    ax.set_xlabel("time (s)", fontsize=8)
    ax.set_ylabel("m", fontsize=8)
    ax.legend(fontsize=7, ncol=4, loc="upper right")
