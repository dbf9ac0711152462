"""The gif preview: a short silent stick-figure clip of a dance, front and side, with the beats flashed.

The shaded video with the song is :mod:`exporters.video`. matplotlib is imported when a clip is drawn.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from choreo.motion import Motion, joint_positions

__all__ = ["write_gif"]


def write_gif(
    motion: Motion,
    path: Path,
    *,
    beat_times: np.ndarray,
    excerpt_s: float = 20.0,
    preview_fps: int = 15,
) -> Path:
    """Write a stick-figure GIF of the dance's start, front and side.

    Only the first ``excerpt_s`` seconds are drawn, at ``preview_fps``, so a
    person can judge the dance by eye in a file small enough to mail. The floor
    line turns red on each music beat, so beat-synchrony can be seen.

    Parameters
    ----------
    motion : the dance
    path : the ``.gif`` to write
    beat_times : np.ndarray [shape=(K,)], song seconds of the beats
    excerpt_s : float > 0, seconds from the start drawn
    preview_fps : int > 0, the clip's frames per second

    Returns
    -------
    Path
        ``path``, written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation, PillowWriter

    path = Path(path)
    times = np.arange(0.0, min(excerpt_s, motion.duration_s), 1.0 / preview_fps)
    frames = np.clip(motion.time_to_frame(times), 0, motion.n_frames - 1)
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
