"""The ``Motion`` type: a dance on the SMPL skeleton, as arrays over frames."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from choreo.errors import ParameterError
from choreo.motion.skeleton import SMPL, Skeleton

__all__ = ["FRAME_SIZE", "Motion"]

FRAME_SIZE = 75
"""Numbers per frame: 24 joint rotations as axis-angle (72) then root translation (3)."""


@dataclass(frozen=True)
class Motion:
    """A motion sampled at ``fps`` on a skeleton.

    Parameters
    ----------
    fps : float > 0
    root_translation : np.ndarray [shape=(frames, 3)], metres, world position of the root
    rotations : np.ndarray [shape=(frames, joints, 3)], local joint rotations as
        axis-angle, radians; joint 0 is the root's global orientation
    skeleton : the skeleton the rotations apply to

    Frame ``k`` is the pose at time ``k / fps`` seconds.
    """

    fps: float
    root_translation: np.ndarray
    rotations: np.ndarray
    skeleton: Skeleton = field(default=SMPL)

    def __post_init__(self) -> None:
        if not np.isfinite(self.fps) or self.fps <= 0:
            raise ParameterError(f"fps must be positive, got {self.fps}")
        n = np.shape(self.root_translation)[0] if np.ndim(self.root_translation) else -1
        if np.shape(self.root_translation) != (n, 3):
            raise ParameterError(
                f"root_translation must be [frames, 3], got {np.shape(self.root_translation)}"
            )
        expected = (n, self.skeleton.n_joints, 3)
        if np.shape(self.rotations) != expected:
            raise ParameterError(f"rotations must be {expected}, got {np.shape(self.rotations)}")

    @property
    def n_frames(self) -> int:
        return int(self.root_translation.shape[0])

    @property
    def duration_s(self) -> float:
        """Time covered: ``n_frames / fps`` (the last frame lasts one frame time)."""
        return self.n_frames / self.fps

    def frame_to_time(self, frame: int | np.ndarray) -> float | np.ndarray:
        """Time in seconds at which frame ``frame`` is shown."""
        return np.asarray(frame) / self.fps

    def time_to_frame(self, time_s: float | np.ndarray) -> int | np.ndarray:
        """Index of the frame shown at ``time_s`` seconds (nearest frame)."""
        return np.rint(np.asarray(time_s) * self.fps).astype(int)

    def to_array(self) -> np.ndarray:
        """The motion as ``[frames, 75]``: 72 rotation numbers, then the root translation."""
        return np.concatenate([self.rotations.reshape(self.n_frames, -1), self.root_translation], axis=1)

    @classmethod
    def from_array(cls, frames: np.ndarray, fps: float) -> Motion:
        """Inverse of :meth:`to_array` for the SMPL skeleton."""
        arr = np.asarray(frames, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] != FRAME_SIZE:
            raise ParameterError(f"frames must be [frames, {FRAME_SIZE}], got {arr.shape}")
        n = arr.shape[0]
        return cls(
            fps=fps, root_translation=arr[:, 72:].copy(), rotations=arr[:, :72].reshape(n, 24, 3).copy()
        )

    def replace(self, **changes: object) -> Motion:
        """A new motion with some fields changed; the original is untouched."""
        values = {
            "fps": self.fps,
            "root_translation": self.root_translation,
            "rotations": self.rotations,
            "skeleton": self.skeleton,
        }
        values.update(changes)
        return Motion(**values)  # type: ignore[arg-type]
