"""Where a locked limb's end joint is aimed in each frame: held through each contact, eased in and out.

Shared by the feet (:mod:`.foot_locking`) and the hands (:mod:`.hand_locking`). A
contact holds a point of the limb still (a heel or toe, a hand) from its first
frame to its last; the limb reaches it over ``ease`` frames before touch-down
and lets go of it over ``ease`` frames after lift-off, and between two contacts
closer than that it goes from the one lock to the other (no jump from lock to lock),
each with a smootherstep, so neither the speed nor the acceleration jumps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.contracts.contacts import ContactTrack
from choreo.errors import ParameterError
from choreo.motion.motion import Motion

__all__ = [
    "Lock",
    "Schedule",
    "contact_runs",
    "require_matching_contacts",
    "schedule_locks",
    "smoothstep",
    "smootherstep",
]


def require_matching_contacts(motion: Motion, contacts: ContactTrack) -> None:
    """Refuse a contact track made for other frames: a lock read from it would hold the wrong frames.

    Raises
    ------
    ParameterError
        If the contacts' frame count or fps differ from the motion's.
    """
    if contacts.n_frames != motion.n_frames or contacts.fps != motion.fps:
        raise ParameterError(
            f"contacts ({contacts.n_frames} frames at {contacts.fps} fps) do not match "
            f"the motion ({motion.n_frames} frames at {motion.fps} fps)"
        )


@dataclass(frozen=True)
class Lock:
    """Where one contact holds its limb: with ``held`` (a world rotation) the end joint at ``point``
    and turned so; without (``held`` None) the point ``offset`` from the end joint in its frame (the
    toe from the ankle, the hand from the wrist) at ``point``, the end joint keeping its own rotation."""

    point: np.ndarray
    offset: np.ndarray
    held: np.ndarray | None

    def at(self, own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """End-joint targets ``[frames, 3]`` and rotations ``[frames, 3, 3]``, given the end joint's
        own world rotations in those frames ``[frames, 3, 3]``."""
        if self.held is not None:
            return np.broadcast_to(self.point, (own.shape[0], 3)), np.broadcast_to(self.held, own.shape)
        return self.point - own @ self.offset, own


@dataclass(frozen=True)
class Schedule:
    """One limb's end-joint targets ``[frames, 3]`` and weights ``[frames]`` (1 while held), and the world
    rotation it turns towards by its weight: ``towards [frames]`` of the way from ``turn_from`` to
    ``turn_to`` (each ``[frames, 3, 3]``), where it goes from one lock to the next."""

    targets: np.ndarray
    weights: np.ndarray
    turn_from: np.ndarray
    turn_to: np.ndarray
    towards: np.ndarray


def contact_runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """The ``(first, past-the-last)`` frames of each run of ``True`` in ``mask``."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist(), strict=True))


def smoothstep(t: np.ndarray) -> np.ndarray:
    """0 to 1 with no jump in speed at either end."""
    return t * t * (3.0 - 2.0 * t)


def smootherstep(t: np.ndarray) -> np.ndarray:
    """0 to 1 with no jump in speed or acceleration at either end (a smoothstep's acceleration jumps)."""
    return t * t * t * (t * (6.0 * t - 15.0) + 10.0)


def schedule_locks(
    runs: list[tuple[int, int]], locks: list[Lock], ends: np.ndarray, own: np.ndarray, ease: int
) -> Schedule:
    """The schedule of one limb held by ``locks`` over its contact ``runs`` (one lock a run).

    Parameters
    ----------
    runs : the contacts, as :func:`contact_runs` gives them
    locks : where each contact holds the limb
    ends : the end joint's own world positions ``[frames, 3]`` (the targets where nothing holds it)
    own : its own world rotations ``[frames, 3, 3]``
    ease : frames over which a lock is reached before touch-down and let go of after lift-off
    """
    n = ends.shape[0]
    targets = ends.copy()
    weights = np.zeros(n)
    turn_from, turn_to, towards = own.copy(), own.copy(), np.zeros(n)
    for (start, stop), lock in zip(runs, locks, strict=True):
        targets[start:stop], turn_from[start:stop] = lock.at(own[start:stop])
        weights[start:stop] = 1.0
    for before, after in zip([None, *range(len(runs))], [*range(len(runs)), None], strict=True):
        if not runs:
            break
        lo = runs[before][1] if before is not None else max(0, runs[0][0] - ease)
        hi = runs[after][0] if after is not None else min(n, runs[-1][1] + ease)
        frames = np.arange(lo, hi)
        share = np.zeros(frames.size)
        if before is not None:
            share = np.maximum(share, 1.0 - (frames - lo + 1) / (ease + 1))
        if after is not None:
            share = np.maximum(share, 1.0 - (hi - frames) / (ease + 1))
        frames, share = frames[share > 0], smootherstep(np.clip(share[share > 0], 0.0, 1.0))
        if frames.size == 0:
            continue
        spots = [locks[i].at(own[frames]) for i in (before, after) if i is not None]
        way = smootherstep((frames - lo + 1) / (hi - lo + 1)) if len(spots) == 2 else np.zeros(frames.size)
        targets[frames] = spots[0][0] + way[:, None] * (spots[-1][0] - spots[0][0])
        turn_from[frames], turn_to[frames] = spots[0][1], spots[-1][1]
        towards[frames] = way
        weights[frames] = share
    return Schedule(targets, weights, turn_from, turn_to, towards)
