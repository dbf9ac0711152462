"""``SourceTake``: one take of a source skeleton's animation, as world transforms per joint and frame.

Every reader (our own BVH parser, Assimp for FBX and glTF) hands the
retargeter this one type, so that the retargeter and the rig detection never
know which format a take came from. A take keeps what the file states (its
joint names and tree, its units, its frame rate) with two things settled:
its world is Y up (a Z-up file is turned by its reader, from the file's own
axis settings), and its frames are on a uniform grid at ``fps`` (irregular
keys are resampled by the reader).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.errors import ParameterError
from choreo.motion.bvh_reader import BvhData, forward_kinematics

__all__ = ["SourceTake", "as_take", "take_from_bvh"]


@dataclass(frozen=True)
class SourceTake:
    """One animated skeleton of a source file.

    Parameters
    ----------
    source : the file, for messages
    take : the take's name in the file ("" for a file's only, unnamed take)
    names : tuple of str, one per joint, unique
    parents : tuple of int, parent index per joint (``-1`` for a root); parents precede children
    positions : np.ndarray [shape=(frames, joints, 3)], world positions, file units, Y up
    rotations : np.ndarray [shape=(frames, joints, 3, 3)], world orientations of the joints' frames
    end_sites : np.ndarray [shape=(joints, 3)], a joint's End Site offset in its own frame
        (zeros where it has none), file units
    rest_positions : np.ndarray [shape=(joints, 3)], world positions of the rest (bind) pose, file units
    fps : float > 0, frames per second of the uniform grid
    metres_per_unit : float or None, the file's unit when it states one (BVH does not)
    rest_rotations : np.ndarray [shape=(joints, 3, 3)] or None, world orientations of the joints'
        frames in the rest pose; None where they are the world's axes (BVH, whose all-zero pose is its rest)
    """

    source: str
    take: str
    names: tuple[str, ...]
    parents: tuple[int, ...]
    positions: np.ndarray
    rotations: np.ndarray
    end_sites: np.ndarray
    rest_positions: np.ndarray
    fps: float
    metres_per_unit: float | None = None
    rest_rotations: np.ndarray | None = None

    def __post_init__(self) -> None:
        n_frames, n_joints = np.shape(self.positions)[:2]
        if np.shape(self.positions) != (n_frames, n_joints, 3) or np.shape(self.rotations) != (
            n_frames,
            n_joints,
            3,
            3,
        ):
            raise ParameterError(f"{self.label}: positions and rotations disagree in shape")
        if len(self.names) != n_joints or len(self.parents) != n_joints:
            raise ParameterError(f"{self.label}: {len(self.names)} names for {n_joints} joints")
        if not np.isfinite(self.fps) or self.fps <= 0:
            raise ParameterError(f"{self.label}: frame rate must be positive, got {self.fps}")

    @property
    def label(self) -> str:
        """The file, and the take's name when it has one: what messages call this take."""
        return f"{self.source} (take {self.take!r})" if self.take else self.source

    @property
    def n_frames(self) -> int:
        return int(self.positions.shape[0])

    @property
    def duration_s(self) -> float:
        """Seconds from the first frame to the last."""
        return (self.n_frames - 1) / self.fps

    def index(self, name: str) -> int:
        """Index of the joint called ``name``."""
        try:
            return self.names.index(name)
        except ValueError:
            raise ParameterError(f"{self.label} has no joint called {name!r}") from None


def take_from_bvh(bvh: BvhData, source: str = "BVH") -> SourceTake:
    """A parsed BVH file as a take: its own forward kinematics and End Sites, its offsets the rest pose."""
    positions, rotations = forward_kinematics(bvh)
    rest = np.zeros_like(bvh.offsets)
    for j, p in enumerate(bvh.parents):
        rest[j] = bvh.offsets[j] if p < 0 else rest[p] + bvh.offsets[j]
    return SourceTake(
        source=source,
        take="",
        names=bvh.names,
        parents=bvh.parents,
        positions=positions,
        rotations=rotations,
        end_sites=bvh.end_sites,
        rest_positions=rest,
        fps=bvh.fps,
    )


def as_take(clip: SourceTake | BvhData, source: str = "BVH") -> SourceTake:
    """``clip`` as a take (a :class:`BvhData` through :func:`take_from_bvh`)."""
    return clip if isinstance(clip, SourceTake) else take_from_bvh(clip, source)
