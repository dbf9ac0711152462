"""Contact sheets: a clip drawn as stick figures, front and side, for checking by eye.

A retargeting error (a limb bent the wrong way, a twisted pelvis, a figure
lying down, feet under the floor) is obvious in a picture and invisible in a
loss curve, so every retargeted clip gets one.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from choreo.motion.kinematics import joint_positions  # noqa: E402
from choreo.motion.motion import Motion  # noqa: E402

__all__ = ["write_contact_sheet"]

_LEFT = "tab:blue"
_RIGHT = "tab:red"
_CENTRE = "black"


def _colour(name: str) -> str:
    if name.startswith("left"):
        return _LEFT
    if name.startswith("right"):
        return _RIGHT
    return _CENTRE


def write_contact_sheet(motion: Motion, path: str | Path, *, title: str = "", n_poses: int = 10) -> Path:
    """Draw ``n_poses`` evenly spaced frames of ``motion`` to a PNG at ``path``.

    Row 1 is the front view (seen from +Z: the figure's left, +X, on the
    right of the picture), row 2 the side view seen from the figure's right
    (+Z to the right); left limbs are blue, right
    red, the floor y = 0 a grey line. A third row plots the root height and
    the lowest joint height over the whole clip.
    """
    pos = joint_positions(motion)
    names = motion.skeleton.names
    parents = motion.skeleton.parents
    frames = np.linspace(0, motion.n_frames - 1, n_poses).round().astype(int)
    fig, axes = plt.subplots(3, n_poses, figsize=(2.0 * n_poses, 7.0))
    for col, f in enumerate(frames):
        p = pos[f]
        for row, (h_axis, sign) in enumerate(((0, 1.0), (2, 1.0))):
            ax = axes[row, col]
            centre = p[0, h_axis]
            for j, parent in enumerate(parents):
                if parent < 0:
                    continue
                ax.plot(
                    sign * (p[[parent, j], h_axis] - centre),
                    p[[parent, j], 1],
                    color=_colour(names[j]),
                    lw=2,
                )
            ax.plot(sign * (p[15, h_axis] - centre), p[15, 1], "o", color=_CENTRE, ms=6)
            ax.axhline(0.0, color="0.6", lw=1)
            ax.set_xlim(-1.0, 1.0)
            ax.set_ylim(-0.1, 2.1)
            ax.set_aspect("equal")
            ax.set_xticks([])
            ax.set_yticks([] if col else [0, 1, 2])
            if row == 0:
                ax.set_title(f"{f / motion.fps:.1f}s", fontsize=9)
        axes[0, 0].set_ylabel("front (m)")
        axes[1, 0].set_ylabel("side, +Z right (m)")
    gs = axes[2, 0].get_gridspec()
    for ax in axes[2]:
        ax.remove()
    ax = fig.add_subplot(gs[2, :])
    t = np.arange(motion.n_frames) / motion.fps
    ax.plot(t, motion.root_translation[:, 1], label="root height")
    ax.plot(t, pos[..., 1].min(axis=1), label="lowest joint")
    ax.plot(t, motion.root_translation[:, 0], label="root x", alpha=0.6)
    ax.plot(t, motion.root_translation[:, 2], label="root z", alpha=0.6)
    ax.axhline(0.0, color="0.6", lw=1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("m")
    ax.legend(fontsize=7, ncol=4, loc="upper right")
    fig.suptitle(title)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=70)
    plt.close(fig)
    return path
