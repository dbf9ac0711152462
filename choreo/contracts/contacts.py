"""``ContactTrack``: which body points touch the floor in which frames, for the clean-up and for game engines.

Six points: each foot's heel (its ankle joint) and toe, and each hand. The
post-processing detects them on the performed dance
(:func:`choreo.postprocess.contacts.detect_contacts`), locks the feet by them,
and the summary carries them as intervals in seconds (:meth:`ContactTrack.intervals_s`),
which is what a game engine needs for footstep events whatever the frame rate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.errors import ParameterError

__all__ = ["CONTACT_POINTS", "ContactTrack"]

CONTACT_POINTS: tuple[str, ...] = (
    "left_heel",
    "left_toe",
    "right_heel",
    "right_toe",
    "left_hand",
    "right_hand",
)
"""The tracked points, feet first (left before right, heel before toe), then the hands."""


@dataclass(frozen=True)
class ContactTrack:
    """Per frame and point, whether the point is on the floor.

    Parameters
    ----------
    fps : frames per second of the motion the track belongs to
    frames : np.ndarray [shape=(frames, 6)] bool, columns in :data:`CONTACT_POINTS` order
    """

    fps: float
    frames: np.ndarray

    def __post_init__(self) -> None:
        if not np.isfinite(self.fps) or self.fps <= 0:
            raise ParameterError(f"a contact track needs a positive fps, got {self.fps}")
        if self.frames.ndim != 2 or self.frames.shape[1] != len(CONTACT_POINTS):
            raise ParameterError(
                f"contact frames must be [frames, {len(CONTACT_POINTS)}], got shape {self.frames.shape}"
            )
        object.__setattr__(self, "frames", np.asarray(self.frames, dtype=bool))

    @property
    def n_frames(self) -> int:
        return int(self.frames.shape[0])

    @property
    def feet(self) -> np.ndarray:
        """``[frames, 2]`` bool: the left and the right foot, in contact where its heel or toe is."""
        return np.asarray(self.frames[:, :4].reshape(-1, 2, 2).any(axis=2))

    def resampled(self, fps: float, n_frames: int) -> ContactTrack:
        """The track at another frame rate: each new frame takes the contacts of the frame under way at its
        time (the last one that started at or before it), so intervals keep their times to a frame."""
        if n_frames < 0:
            raise ParameterError(f"n_frames must not be negative, got {n_frames}")
        if self.n_frames == 0:
            return ContactTrack(fps, np.zeros((n_frames, len(CONTACT_POINTS)), dtype=bool))
        source = np.floor(np.arange(n_frames) * self.fps / fps + 1e-9).astype(np.int64)
        source = np.clip(source, 0, self.n_frames - 1)
        return ContactTrack(fps, self.frames[source])

    def intervals_s(self) -> dict[str, list[tuple[float, float]]]:
        """Per point, its contacts as ``(touch-down, lift-off)`` seconds; lift-off is the first frame off
        the floor (or the track's end), so a contact of one frame lasts ``1 / fps``."""
        out: dict[str, list[tuple[float, float]]] = {}
        for column, name in enumerate(CONTACT_POINTS):
            edges = np.diff(np.concatenate([[0], self.frames[:, column].astype(np.int8), [0]]))
            starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
            out[name] = [
                (round(float(a) / self.fps, 4), round(float(b) / self.fps, 4))
                for a, b in zip(starts, stops, strict=True)
            ]
        return out

    def share(self) -> dict[str, float]:
        """Per point, the share of frames in contact."""
        if self.n_frames == 0:
            return dict.fromkeys(CONTACT_POINTS, 0.0)
        return {
            name: round(float(v), 4) for name, v in zip(CONTACT_POINTS, self.frames.mean(axis=0), strict=True)
        }
