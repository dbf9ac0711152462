"""One vector describing a stretch of motion: what style separability and structure consistency compare.

Per joint, in the pelvis heading frame (so that where the dancer faces does not
count): the mean and the standard deviation of its position relative to the
pelvis (the poses held and how far they move), and the kinetic features of
:func:`~choreo.metrics.diversity.kinetic_features` (how fast and how hard they
move); then the mean pelvis height (standing or floor work). 24 joints give
217 numbers.
"""

from __future__ import annotations

import numpy as np

from choreo.metrics._positions import check_fps, check_positions
from choreo.metrics.diversity import kinetic_features
from choreo.metrics.spread import heading_frame_offsets
from choreo.motion.contacts import UP_AXIS
from choreo.motion.skeleton import SMPL, Skeleton

__all__ = ["motion_descriptor", "windowed_descriptors"]


def motion_descriptor(positions: np.ndarray, *, fps: float, skeleton: Skeleton = SMPL) -> np.ndarray:
    """The descriptor of one stretch of motion, ``[joints * 9 + 1]``.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames >= 3, joints, 3)], metres, Y up, floor at y = 0
    fps : frame rate of ``positions``
    skeleton : names the pelvis and hips
    """
    pos = check_positions(positions, min_frames=3)
    offsets = heading_frame_offsets(pos, skeleton=skeleton)
    pelvis_height = pos[:, skeleton.index("pelvis"), UP_AXIS].mean()
    return np.concatenate(
        [
            offsets.mean(axis=0).reshape(-1),
            offsets.std(axis=0).reshape(-1),
            kinetic_features(pos, fps=fps),
            [pelvis_height],
        ]
    )


def windowed_descriptors(
    positions: np.ndarray, *, fps: float, window_s: float, skeleton: Skeleton = SMPL
) -> np.ndarray:
    """Descriptors of consecutive non-overlapping windows of ``window_s``, ``[windows, dims]``.

    A last window shorter than ``window_s`` is dropped; a motion shorter than one
    window has no windows (``[0, dims]``).
    """
    fps = check_fps(fps)
    pos = check_positions(positions)
    length = max(3, round(window_s * fps))
    count = pos.shape[0] // length
    dims = pos.shape[1] * 9 + 1
    if count == 0:
        return np.zeros((0, dims))
    return np.stack(
        [
            motion_descriptor(pos[k * length : (k + 1) * length], fps=fps, skeleton=skeleton)
            for k in range(count)
        ]
    )
