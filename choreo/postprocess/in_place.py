"""In-place motion for game engines that drive root motion themselves."""

from __future__ import annotations

from choreo.motion.contacts import HORIZONTAL_AXES
from choreo.motion.motion import Motion

__all__ = ["in_place"]


def in_place(motion: Motion) -> Motion:
    """Remove the horizontal root motion: the root stays over the origin, its height kept.

    Parameters
    ----------
    motion : the motion; left untouched

    Returns
    -------
    Motion
        A new motion whose root x and z are 0 in every frame; the root height,
        the root orientation and every joint rotation are unchanged.
    """
    root = motion.root_translation.copy()
    root[:, list(HORIZONTAL_AXES)] = 0.0
    return motion.replace(root_translation=root, rotations=motion.rotations.copy())
