"""Where a locked limb's end joint is aimed in each frame: held through each contact, eased in and out.

Shared by the feet (:mod:`.foot_locking`) and the hands (:mod:`.hand_locking`). A
contact holds a point of the limb still (a heel or toe, a hand) from its first
frame to its last; the limb reaches it over ``ease`` frames before touch-down
and lets go of it over ``ease`` frames after lift-off, and between two contacts
closer than that it goes from the one lock to the other (no jump from lock to lock),
each with a smootherstep, so neither the speed nor the acceleration jumps; after a lift-off it rises
with the limb's own path where that rises faster (a kick-up).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.contracts.contacts import ContactTrack
from choreo.errors import ParameterError
from choreo.motion.contacts import UP_AXIS
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
    runs: list[tuple[int, int]],
    locks: list[Lock],
    ends: np.ndarray,
    own: np.ndarray,
    ease: int,
    max_step: float | None = None,
) -> Schedule:
    """The schedule of one limb held by ``locks`` over its contact ``runs`` (one lock a run).

    Parameters
    ----------
    runs : the contacts, as :func:`contact_runs` gives them
    locks : where each contact holds the limb
    ends : the end joint's own world positions ``[frames, 3]`` (the targets where nothing holds it)
    own : its own world rotations ``[frames, 3, 3]``
    ease : frames over which a lock is reached before touch-down and let go of after lift-off
    max_step : the most (metres a frame) an ease may move the end joint against its own path. Out
        of a contact the target then goes along with the path, offset by where the lock is from it
        at lift-off (or touch-down), and the offset fades over as many frames as that takes
        (``ease`` at least): the end joint moves no faster than its own path plus ``max_step``,
        however far from it the lock is. Where two contacts are too close for the one offset to
        turn into the other so, the move begins that much before lift-off, the held end joint
        following towards the next lock. None: the targets are the locks themselves, every ease
        ``ease`` frames.
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
        lifted = runs[before][1] if before is not None else 0  # the lift-off frame, and the touch-down's
        landed = runs[after][0] if after is not None else n
        early = 0  # how far before lift-off the move between two locks begins
        if before is not None and after is not None:
            early = _early(locks[before], locks[after], ends, own, runs[before], landed, max_step)
        leaving = None if before is None else _offset(locks[before], ends, own, lifted - early - 1)
        arriving = None if after is None else _offset(locks[after], ends, own, landed)
        release = ease if leaving is None else _ease_frames(float(np.linalg.norm(leaving)), ease, max_step)
        reach = ease if arriving is None else _ease_frames(float(np.linalg.norm(arriving)), ease, max_step)
        lo = lifted if before is not None else max(0, landed - reach)
        hi = landed if after is not None else min(n, lifted + release)
        first = lo - early
        frames = np.arange(first, hi)
        share = np.ones(frames.size)  # the frames before lift-off are held
        gap = frames >= lo
        if before is not None:
            share[gap] = 1.0 - (frames[gap] - lo + 1) / (release + 1)
        if after is not None:
            share[gap] = np.maximum(
                share[gap] if before is not None else 0.0, 1.0 - (hi - frames[gap]) / (reach + 1)
            )
        frames, share = frames[share > 0], smootherstep(np.clip(share[share > 0], 0.0, 1.0))
        if frames.size == 0:
            continue
        spots = [locks[i].at(own[frames]) for i in (before, after) if i is not None]
        way = (
            smootherstep((frames - first + 1) / (hi - first + 1))
            if len(spots) == 2
            else np.zeros(frames.size)
        )
        if max_step is None or len(spots) == 2:  # between two locks: from the one to the other
            targets[frames] = spots[0][0] + way[:, None] * (spots[-1][0] - spots[0][0])
            if leaving is not None and max_step is None:  # a bounded let-go keeps its own pace
                targets[frames, UP_AXIS] = _rising_with(
                    targets[frames, UP_AXIS], ends[frames, UP_AXIS], leaving, way
                )
        else:
            offsets = [o for o in (leaving, arriving) if o is not None]
            targets[frames] = ends[frames] + offsets[0] + way[:, None] * (offsets[-1] - offsets[0])
        turn_from[frames], turn_to[frames] = spots[0][1], spots[-1][1]
        towards[frames] = way
        weights[frames] = share
    return Schedule(targets, weights, turn_from, turn_to, towards)


def _rising_with(height: np.ndarray, own: np.ndarray, leaving: np.ndarray, way: np.ndarray) -> np.ndarray:
    """The target's height after a lift-off: where the limb's own path (offset by where the lock was
    from it at lift-off) rises faster than the way from lock to lock, it rises with the path, fading
    into that way as the next lock nears; never lower than the way itself.

    Held to the straight way, a foot thrown up at take-off lagged its dance through the release
    (breakdance's kick-ups: 0.42 m high against the dance's 0.67 m two frames before the beat) and the
    dance lost the beat there; following only the height keeps the lock-to-lock path along the floor,
    where following the whole path made a foot slide just after lift-off (modern skated 0.083
    against 0.064). Not with ``max_step`` (a low-impact workout's bounded let-go): there it left a frame
    of its held-out routines with neither foot down.
    """
    return np.maximum(height, (1.0 - way) * (own + leaving[UP_AXIS]) + way * height)


_PEAK_SLOPE = 1.875
"""The steepest slope of :func:`smootherstep`: an ease over ``k`` frames moves ``1.875 / (k + 1)`` of
its distance in its fastest frame."""


def _ease_frames(distance: float, ease: int, max_step: float | None) -> int:
    """How many frames an ease over ``distance`` metres lasts so that no frame moves more than
    ``max_step`` metres (``ease`` at least; ``ease`` where ``max_step`` is None)."""
    if max_step is None:
        return ease
    return max(ease, int(np.ceil(_PEAK_SLOPE * distance / max_step)) - 1)


def _offset(lock: Lock, ends: np.ndarray, own: np.ndarray, frame: int) -> np.ndarray:
    """Where ``lock`` puts the end joint in ``frame``, less where its own path ``ends`` has it ``[3]``."""
    return lock.at(own[frame : frame + 1])[0][0] - ends[frame]


def _early(
    before: Lock,
    after: Lock,
    ends: np.ndarray,
    own: np.ndarray,
    run: tuple[int, int],
    hi: int,
    max_step: float | None,
) -> int:
    """How many frames before lift-off (of ``run``) the move from lock ``before`` to lock ``after``
    (held from frame ``hi``) begins, so that it moves the end joint no more than ``max_step`` a frame
    against its own path ``ends``: by how far the one lock is from the path where the move begins
    and the other at touch-down (a step as long as the dance's own is no faster than the dance's).
    0 where the gap is long enough (or ``max_step`` is None), at most the whole contact but one frame."""
    start, stop = run
    if max_step is None:
        return 0
    arriving = _offset(after, ends, own, hi)
    early = 0
    for _ in range(4):  # the earlier it begins, the further the held lock may be from the path
        distance = float(np.linalg.norm(arriving - _offset(before, ends, own, stop - 1 - early)))
        wanted = int(np.clip(_ease_frames(distance, 0, max_step) - (hi - stop), 0, stop - start - 1))
        if wanted <= early:
            break
        early = wanted
    return early
