"""The contact sheet (png): poses of a dance as stick figures, one panel each, for a person to judge.

Every render writes one, at the song's beats; the training data's preparation writes one per mocap
clip, with side views and a strip of the heights. matplotlib is imported when a sheet is drawn.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from choreo.motion import Motion, joint_positions

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

    All panels are drawn into one set of axes, one line collection for every
    bone and floor, at a fixed scale (:data:`_INCH_PER_M`): matplotlib's cost
    is per axes and per artist, and a sheet of sixteen axes and four hundred
    lines took most of a render's export.

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
    # a bare Figure (no pyplot: its import and backend machinery cost a cold render more than the drawing)
    from matplotlib.collections import LineCollection
    from matplotlib.figure import Figure

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
    top_in = _TITLE_IN if title else _MARGIN_IN
    strip_in = _STRIP_IN if height_plot else 0.0
    poses_in = pose_rows * _PANEL_M[1] * _INCH_PER_M
    width_in, height_in = cols * _PANEL_M[0] * _INCH_PER_M, poses_in + top_in + strip_in
    fig = Figure(figsize=(width_in, height_in))
    ax = fig.add_axes((0.0, strip_in / height_in, 1.0, poses_in / height_in))
    ax.set_axis_off()
    ax.set_xlim(0.0, cols * _PANEL_M[0])
    ax.set_ylim(-pose_rows * _PANEL_M[1], 0.0)
    names, parents = motion.skeleton.names, motion.skeleton.parents
    bones = np.array([(p, j) for j, p in enumerate(parents) if p >= 0])
    floor = np.array([[[-0.8, 0.0], [0.8, 0.0]]])
    segments = []
    for k, frame in enumerate(frames):
        pose = positions[k]
        for v, view in enumerate(views):
            row, col = (k // cols) * len(views) + v, k % cols
            # the panel's origin: its pelvis above its floor, the floor _FLOOR_M above the panel's bottom
            origin = np.array([(col + 0.5) * _PANEL_M[0], -(row + 1) * _PANEL_M[1] + _FLOOR_M])
            h = _VIEWS[view]
            flat = np.stack([pose[:, h] - pose[0, h], pose[:, 1]], axis=-1)
            segments.append(np.concatenate([flat[bones], floor]) + origin)  # bones, then the floor on top
            label = f"{frame / motion.fps:.1f} s" + (f" {view}" if side_view else "")
            ax.text(origin[0], origin[1] + _FIGURE_TOP_M, label, fontsize=8, ha="center", va="bottom")
    colours = [_limb_colour(names[j]) for _, j in bones] + [_FLOOR]
    widths = [1.6] * len(bones) + [2.0]
    ax.add_collection(
        LineCollection(
            list(np.concatenate(segments)),
            colors=colours * len(segments),
            linewidths=widths * len(segments),
            capstyle="projecting",
        )
    )
    if height_plot:
        strip = fig.add_axes((0.07, 0.45 / height_in, 0.9, (strip_in - 0.7) / height_in))
        _draw_heights(strip, motion, all_positions)
    if title:
        fig.suptitle(title, fontsize=9, y=1.0 - 0.08 / height_in, va="top")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    return path


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
