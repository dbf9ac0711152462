"""Mirror a motion left to right, which doubles the training data.

The reflection is x -> -x (SMPL's left is +X). A rotation matrix ``R`` under
the reflection ``M = diag(-1, 1, 1)`` becomes ``M R M``, which for an
axis-angle vector ``(x, y, z)`` is ``(x, -y, -z)``; left and right joints then
swap places. SMPL's rest offsets are symmetric, so the mirrored motion's joint
positions are exactly the reflected positions.
"""

from __future__ import annotations

import numpy as np

from choreo.motion.motion import Motion

__all__ = ["mirror", "mirror_permutation"]


def mirror_permutation(names: tuple[str, ...]) -> np.ndarray:
    """Index of each joint's mirror twin (left and right swapped, the spine and head their own)."""
    index = {n: i for i, n in enumerate(names)}
    perm = []
    for n in names:
        if n.startswith("left_"):
            perm.append(index["right_" + n[5:]])
        elif n.startswith("right_"):
            perm.append(index["left_" + n[6:]])
        else:
            perm.append(index[n])
    return np.array(perm)


def mirror(motion: Motion) -> Motion:
    """The left-right mirror image of ``motion`` (mirroring twice gives it back)."""
    perm = mirror_permutation(motion.skeleton.names)
    rot = motion.rotations[:, perm] * np.array([1.0, -1.0, -1.0])
    root = motion.root_translation * np.array([-1.0, 1.0, 1.0])
    return motion.replace(rotations=rot, root_translation=root)
