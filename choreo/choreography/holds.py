"""Holds: the dancer freezes over a break in the music and comes back in where the music does.

Over each of the plan's breaks (:attr:`choreo.contracts.plan.Plan.breaks_s`,
found by :func:`choreo.audio.structure.find_breaks`) the guide's poses are
replaced by one held pose. The dancer eases into it: over the
:data:`HOLD_EASE_S` before the break's start the motion is played ever slower,
its playback speed falling linearly from 1 to 0, so the body decelerates into
the pose it has reached at the break's start (the last accent) instead of
stopping dead. At the break's end the dance goes on where the plan has it at
that time (the phrases' beats stay on the song's beats after the break); the
difference between the held pose and that motion is hidden by
inertialization from the held pose at rest, and the root's path on the floor
after the break is moved to start where the dancer stands, so it does not
slide there.

Freezing the guide, rather than planning a still phrase over the break,
keeps the plan's junctions where they were (on bar starts) and works for a
one-beat stop inside a bar, which no phrase boundary falls on.
"""

from __future__ import annotations

import numpy as np

from choreo.choreography.inertialize import inertialize
from choreo.motion.rotations import quat_slerp

__all__ = ["HOLD_EASE_S", "MIN_HOLD_S", "hold_breaks"]

HOLD_EASE_S = 0.15
"""The body decelerates into the held pose over this long before the break's start."""

MIN_HOLD_S = 0.2
"""A break shorter than this (at the frame rate, a few frames) is not held."""


def hold_breaks(
    quats: np.ndarray, root: np.ndarray, breaks_s: np.ndarray, fps: float
) -> tuple[np.ndarray, np.ndarray]:
    """``quats`` ``[F, J, 4]`` and ``root`` ``[F, 3]`` with each break of ``breaks_s`` ``[B, 2]`` held.

    Frame ``k`` is at ``k / fps`` s. Breaks that overlap the song's first or last frames are clipped to
    them; one shorter than :data:`MIN_HOLD_S` there is left alone. Returns new arrays.
    """
    quats, root = quats.copy(), root.copy()
    n = quats.shape[0]
    ease = max(1, round(HOLD_EASE_S * fps))
    for start_s, end_s in np.asarray(breaks_s, dtype=np.float64).reshape(-1, 2):
        a = int(np.ceil(start_s * fps - 1e-9))
        b = min(int(np.ceil(end_s * fps - 1e-9)), n)
        if a < ease or b - a < MIN_HOLD_S * fps:
            continue
        # playback slows from 1 to 0 over the ease: frame a - ease + k plays source time k - k^2 / (2 ease)
        k = np.arange(ease + 1, dtype=np.float64)
        played = (a - ease) + k - k * k / (2 * ease)
        lo = np.floor(played).astype(int)
        t = played - lo
        hi = np.minimum(lo + 1, n - 1)
        eased_q = quat_slerp(quats[lo], quats[hi], t[:, None])
        eased_root = root[lo] * (1 - t)[:, None] + root[hi] * t[:, None]
        held_q, held_root = eased_q[-1], eased_root[-1]
        quats[a - ease : a + 1] = eased_q
        root[a - ease : a + 1] = eased_root
        quats[a:b] = held_q
        root[a:b] = held_root
        if b >= n - 1:
            continue
        root[b:, [0, 2]] += held_root[[0, 2]] - root[b, [0, 2]]
        quats[b:], root[b:] = inertialize(
            quats[b:], root[b:], np.stack([held_q, held_q]), np.stack([held_root, held_root]), fps
        )
    return quats, root
