"""Constructed motions with known kinematic beats, for the beat and warp tests."""

from __future__ import annotations

import numpy as np

from choreo.motion.motion import Motion


def stopping_motion(beat_times_s: np.ndarray, duration_s: float, fps: float) -> Motion:
    """A figure that glides along +X and comes to a full stop exactly at each beat time.

    Between two beats the speed is ``sin^2`` of the phase, so it is zero at the
    beats and peaks half-way; the pose itself never changes.
    """
    t = np.arange(int(round(duration_s * fps)) + 1) / fps
    edges = np.concatenate([[0.0], np.asarray(beat_times_s, dtype=np.float64), [duration_s + 1.0]])
    seg = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, edges.size - 2)
    phase = (t - edges[seg]) / (edges[seg + 1] - edges[seg])
    speed = np.sin(np.pi * phase) ** 2
    x = np.concatenate([[0.0], np.cumsum(0.5 * (speed[1:] + speed[:-1]) / fps)])
    root = np.stack([x, np.full_like(x, 0.94), np.zeros_like(x)], axis=1)
    return Motion(fps=fps, root_translation=root, rotations=np.zeros((t.size, 24, 3)))
