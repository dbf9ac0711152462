"""A contact sheet of a dance: stick-figure poses at the music's beats, to look at."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from choreo.motion import Motion, joint_positions

__all__ = ["write_contact_sheet"]

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
