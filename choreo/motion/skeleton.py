"""The SMPL 24-joint skeleton: names, parents and rest offsets.

Y is up, metres, the figure faces +Z and its left side is +X, as in SMPL. The
rest pose is a T-pose. The offsets are Choreo's own measurements of an
average adult body laid out on SMPL's topology (not SMPL's licensed model
data), chosen so that in the rest pose with the pelvis at
:data:`REST_PELVIS_HEIGHT_M` the toes touch the floor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.errors import ParameterError

__all__ = ["JOINT_NAMES", "REST_PELVIS_HEIGHT_M", "SMPL", "Skeleton"]

JOINT_NAMES: tuple[str, ...] = (
    "pelvis",
    "left_hip",
    "right_hip",
    "spine1",
    "left_knee",
    "right_knee",
    "spine2",
    "left_ankle",
    "right_ankle",
    "spine3",
    "left_foot",
    "right_foot",
    "neck",
    "left_collar",
    "right_collar",
    "head",
    "left_shoulder",
    "right_shoulder",
    "left_elbow",
    "right_elbow",
    "left_wrist",
    "right_wrist",
    "left_hand",
    "right_hand",
)

_PARENTS = (-1, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 12, 13, 14, 16, 17, 18, 19, 20, 21)

# Offset of each joint from its parent in the rest pose, metres (root: zero).
_OFFSETS_M = (
    (0.0, 0.0, 0.0),
    (0.07, -0.09, 0.0),
    (-0.07, -0.09, 0.0),
    (0.0, 0.11, -0.02),
    (0.035, -0.38, 0.0),
    (-0.035, -0.38, 0.0),
    (0.0, 0.135, 0.0),
    (-0.005, -0.40, -0.04),
    (0.005, -0.40, -0.04),
    (0.0, 0.055, 0.02),
    (0.03, -0.055, 0.12),
    (-0.03, -0.055, 0.12),
    (0.0, 0.215, -0.03),
    (0.08, 0.12, -0.005),
    (-0.08, 0.12, -0.005),
    (0.0, 0.09, 0.05),
    (0.12, 0.045, -0.01),
    (-0.12, 0.045, -0.01),
    (0.26, -0.01, -0.02),
    (-0.26, -0.01, -0.02),
    (0.25, 0.01, 0.0),
    (-0.25, 0.01, 0.0),
    (0.085, -0.01, -0.01),
    (-0.085, -0.01, -0.01),
)

REST_PELVIS_HEIGHT_M = 0.94
"""Pelvis height above the floor in the rest pose; toes then sit 1.5 cm up."""


@dataclass(frozen=True)
class Skeleton:
    """A joint tree held once, apart from any motion on it.

    Parameters
    ----------
    names : tuple of str, one per joint
    parents : tuple of int, parent index per joint, ``-1`` for the root;
        every parent comes before its children
    offsets : np.ndarray [shape=(joints, 3)], metres, child minus parent in the rest pose
    """

    names: tuple[str, ...]
    parents: tuple[int, ...]
    offsets: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.names)
        if len(self.parents) != n or np.shape(self.offsets) != (n, 3):
            raise ParameterError("skeleton names, parents and offsets disagree in length")
        for j, p in enumerate(self.parents):
            if p >= j or (p < 0 and j != 0):
                raise ParameterError(f"joint {self.names[j]!r} has parent {p}: parents must precede")

    @property
    def n_joints(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        """Index of the joint called ``name``."""
        try:
            return self.names.index(name)
        except ValueError:
            raise ParameterError(f"no joint called {name!r}") from None

    def children(self, joint: int) -> list[int]:
        """Indices of the joints whose parent is ``joint``."""
        return [j for j, p in enumerate(self.parents) if p == joint]

    def rest_positions(self) -> np.ndarray:
        """World positions ``[joints, 3]`` of the rest pose with the root at the origin."""
        pos = np.zeros((self.n_joints, 3))
        for j, p in enumerate(self.parents):
            if p >= 0:
                pos[j] = pos[p] + self.offsets[j]
        return pos

    def bone_lengths(self) -> np.ndarray:
        """Length of the bone ending at each joint, metres (0 for the root)."""
        return np.linalg.norm(self.offsets, axis=1)


SMPL = Skeleton(JOINT_NAMES, _PARENTS, np.array(_OFFSETS_M, dtype=np.float64))
SMPL.offsets.setflags(write=False)
