"""Turn a dance to face the audience (+Z) on average.

The model is trained with random headings, so a raw dance may face any way.
Content teams place a camera in front of the character, so the whole dance
is turned about the vertical axis, root path included, until its mean
heading is +Z. The turn is one constant rotation: the dance itself is
unchanged.
"""

from __future__ import annotations

import numpy as np

from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_mat, mat_to_aa

__all__ = ["face_front", "mean_heading_rad"]


def mean_heading_rad(motion: Motion) -> float:
    """Mean heading of the body's forward axis about +Y, radians; 0 means facing +Z."""
    forward = aa_to_mat(motion.rotations[:, 0])[:, :, 2]
    return float(np.arctan2(forward[:, 0].sum(), forward[:, 2].sum()))


def face_front(motion: Motion) -> Motion:
    """The same dance turned about the vertical axis through its first root position to face +Z.

    Parameters
    ----------
    motion : the dance; left untouched

    Returns
    -------
    Motion
        A new motion whose mean heading (:func:`mean_heading_rad`) is 0.
    """
    if motion.n_frames == 0:
        return motion
    angle = -mean_heading_rad(motion)
    turn = aa_to_mat(np.array([0.0, angle, 0.0]))
    rotations = motion.rotations.copy()
    rotations[:, 0] = mat_to_aa(turn @ aa_to_mat(motion.rotations[:, 0]))
    pivot = motion.root_translation[0] * np.array([1.0, 0.0, 1.0])
    root = (motion.root_translation - pivot) @ turn.T + pivot
    return motion.replace(root_translation=root, rotations=rotations)
