"""Pictures of a dance for a person to judge: a contact sheet and a short animated clip."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from choreo.motion import Motion, joint_positions

__all__ = ["write_animation", "write_contact_sheet"]

_MAX_PANELS = 16


def write_contact_sheet(
    motion: Motion, beat_times: np.ndarray, path: Path, *, title: str = "", max_panels: int = _MAX_PANELS
) -> Path:
    """Draw the poses at (up to ``max_panels``) beats, front view, into a PNG.

    Beats are spread evenly over the song when there are more than panels,
    so the sheet shows the whole dance, not its first seconds.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    times = np.asarray(beat_times, dtype=float)
    if times.size == 0:
        times = np.linspace(0.0, motion.duration_s, max_panels, endpoint=False)
    if times.size > max_panels:
        times = times[np.linspace(0, times.size - 1, max_panels).round().astype(int)]
    frames = np.clip(np.rint(times * motion.fps).astype(int), 0, motion.n_frames - 1)
    positions = joint_positions(motion)[frames]

    cols = min(8, len(frames))
    rows = int(np.ceil(len(frames) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(1.6 * cols, 2.6 * rows), squeeze=False)
    for ax in axes.flat:
        ax.set_axis_off()
    parents = motion.skeleton.parents
    for ax, pose, frame in zip(axes.flat, positions, frames, strict=False):
        centre_x = pose[0, 0]
        for j, p in enumerate(parents):
            if p >= 0:
                ax.plot(
                    [pose[p, 0] - centre_x, pose[j, 0] - centre_x],
                    [pose[p, 1], pose[j, 1]],
                    color="#24292f",
                    lw=1.6,
                )
        ax.plot([-0.8, 0.8], [0.0, 0.0], color="#8c959f", lw=0.8)
        ax.set_xlim(-0.9, 0.9)
        ax.set_ylim(-0.1, 2.2)
        ax.set_aspect("equal")
        ax.set_title(f"{frame / motion.fps:.1f} s", fontsize=8)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def write_animation(
    motion: Motion,
    beat_times: np.ndarray,
    path: Path,
    *,
    excerpt_s: float = 20.0,
    preview_fps: int = 15,
) -> Path:
    """A short stick-figure clip (GIF, or MP4 where ffmpeg exists) with the beats flashed.

    Only the first ``excerpt_s`` seconds are drawn, at ``preview_fps``, so a
    person can judge the dance by eye in a file small enough to mail. The floor
    line turns red on each music beat, so beat-synchrony can be seen.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.animation import FFMpegWriter, FuncAnimation, PillowWriter

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
    writer = FFMpegWriter(fps=preview_fps) if path.suffix == ".mp4" else PillowWriter(fps=preview_fps)
    animation.save(str(path), writer=writer, dpi=72)
    plt.close(fig)
    return path
