"""Pictures of a dance for a person to judge: a contact sheet and a short animated clip."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from choreo.motion import Motion, joint_positions

__all__ = ["contact_sheet_frames", "write_animation", "write_contact_sheet"]

_MAX_PANELS = 16
_COLUMNS = 8
_FLOOR = "#2da44e"  # a colour nothing else in a sheet has, so the floor marks each panel
_LEFT, _RIGHT, _CENTRE = "#0969da", "#cf222e", "#24292f"
# The horizontal axis of each view: the front seen from +Z (the figure's left, +X, on the right of the
# picture), the side seen from the figure's right, -X (+Z on the right).
_VIEWS = {"front": 0, "side": 2}


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
    return np.clip(np.rint(times * motion.fps).astype(int), 0, motion.n_frames - 1)


def write_contact_sheet(
    motion: Motion,
    times_s: np.ndarray,
    path: Path,
    *,
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

    Parameters
    ----------
    motion : the motion to draw
    times_s : np.ndarray [shape=(K,)], seconds; see :func:`contact_sheet_frames`
    path : the ``.png`` to write; its folder is created
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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frames = contact_sheet_frames(motion, times_s, max_panels)
    positions = joint_positions(motion)
    views = ("front", "side") if side_view else ("front",)
    cols = min(_COLUMNS, len(frames))
    pose_rows = int(np.ceil(len(frames) / cols)) * len(views)
    rows = pose_rows + int(height_plot)
    fig, axes = plt.subplots(rows, cols, figsize=(1.6 * cols, 2.6 * rows), squeeze=False)
    for ax in axes.flat:
        ax.set_axis_off()
    names, parents = motion.skeleton.names, motion.skeleton.parents
    for k, frame in enumerate(frames):
        pose = positions[frame]
        for v, view in enumerate(views):
            ax = axes[(k // cols) * len(views) + v, k % cols]
            h = _VIEWS[view]
            centre = pose[0, h]
            for j, p in enumerate(parents):
                if p >= 0:
                    ax.plot(pose[[p, j], h] - centre, pose[[p, j], 1], color=_limb_colour(names[j]), lw=1.6)
            ax.plot([-0.8, 0.8], [0.0, 0.0], color=_FLOOR, lw=2.0)
            ax.set_xlim(-0.9, 0.9)
            ax.set_ylim(-0.1, 2.2)
            ax.set_aspect("equal")
            ax.set_title(f"{frame / motion.fps:.1f} s" + (f" {view}" if side_view else ""), fontsize=8)
    if height_plot:
        _draw_heights(fig, axes[pose_rows], motion, positions)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def _draw_heights(fig, row: np.ndarray, motion: Motion, positions: np.ndarray) -> None:
    """Replace the axes of ``row`` by one plot of root and lowest-joint heights over time."""
    grid = row[0].get_gridspec()
    for ax in row:
        ax.remove()
    ax = fig.add_subplot(grid[grid.nrows - 1, :])
    t = np.arange(motion.n_frames) / motion.fps
    ax.plot(t, motion.root_translation[:, 1], label="root height")
    ax.plot(t, positions[..., 1].min(axis=1), label="lowest joint")
    ax.plot(t, motion.root_translation[:, 0], label="root x", alpha=0.6)
    ax.plot(t, motion.root_translation[:, 2], label="root z", alpha=0.6)
    ax.axhline(0.0, color="0.6", lw=1)
    ax.set_xlabel("time (s)", fontsize=8)
    ax.set_ylabel("m", fontsize=8)
    ax.legend(fontsize=7, ncol=4, loc="upper right")


def write_animation(
    motion: Motion,
    beat_times: np.ndarray,
    path: Path,
    *,
    excerpt_s: float = 20.0,
    preview_fps: int = 15,
) -> Path:
    """A short stick-figure GIF with the beats flashed (the shaded video with sound is :mod:`choreo.video`).

    Only the first ``excerpt_s`` seconds are drawn, at ``preview_fps``, so a
    person can judge the dance by eye in a file small enough to mail. The floor
    line turns red on each music beat, so beat-synchrony can be seen.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation, PillowWriter

    path = Path(path)
    times = np.arange(0.0, min(excerpt_s, motion.duration_s), 1.0 / preview_fps)
    frames = np.clip(np.rint(times * motion.fps).astype(int), 0, motion.n_frames - 1)
    positions = joint_positions(motion)[frames]
    beats = np.asarray(beat_times, dtype=float)
    on_beat = np.array([np.any(np.abs(beats - t) < 0.5 / preview_fps) for t in times])
    bones = [(p, j) for j, p in enumerate(motion.skeleton.parents) if p >= 0]

    fig, (front, side) = plt.subplots(1, 2, figsize=(5.0, 3.2))
    lines = []
    floors = []
    for ax, label in ((front, "front"), (side, "side")):
        ax.set_xlim(-1.5, 1.5)
        ax.set_ylim(-0.1, 2.2)
        ax.set_aspect("equal")
        ax.set_axis_off()
        ax.set_title(label, fontsize=8)
        floors.append(ax.plot([-1.5, 1.5], [0, 0], color="#8c959f", lw=2)[0])
        lines.append([ax.plot([], [], color="#24292f", lw=1.8)[0] for _ in bones])
    clock = fig.text(0.5, 0.02, "", ha="center", fontsize=8)

    def draw(i: int) -> list:
        pose = positions[i]
        for axis, ax_lines in zip((0, 2), lines, strict=True):
            for line, (p, j) in zip(ax_lines, bones, strict=True):
                line.set_data([pose[p, axis], pose[j, axis]], [pose[p, 1], pose[j, 1]])
        for floor in floors:
            floor.set_color("#cf222e" if on_beat[i] else "#8c959f")
        clock.set_text(f"{times[i]:.1f} s")
        return [*floors, clock, *(line for ax_lines in lines for line in ax_lines)]

    animation = FuncAnimation(fig, draw, frames=len(frames), blit=True)
    animation.save(str(path), writer=PillowWriter(fps=preview_fps), dpi=72)
    plt.close(fig)
    return path
