"""Which phrases put their big moves on the bar's downbeats (issue 20: big moves on downbeats).

Junctions fall on bar starts, so a phrase danced over one bar ends on the next
bar's downbeat, and one danced over two bars has a downbeat at its middle key
too (in 4/4 an 8-beat phrase at one phrase beat a song beat, a 4-beat phrase in
half time; in 3/4 a 6-beat one). Its first key's downbeat is hit by the phrase
before it, which ends there. A key's *hit* is how hard the body stops on it
(:func:`choreo.motion.stops.hit_strengths`, the measure of
:mod:`choreo.metrics.downbeat_hits` on the phrase's own clock). A phrase's
*downbeat share* is the mean hit of its downbeat keys over that plus the mean
of its other inner keys': 0.5 where the downbeats are hit like any beat,
towards 1 where its big moves stop on them. The planner prefers phrases whose
share is high (``PlannerWeights.downbeat``).
"""

from __future__ import annotations

import numpy as np

from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion
from choreo.motion.stops import hit_strengths, smoothed_speed

__all__ = ["key_hits", "phrase_downbeat_share"]


def key_hits(
    rotations: np.ndarray, root: np.ndarray, key_frame: np.ndarray, key_clip: np.ndarray, *, fps: float
) -> np.ndarray:
    """[keys] the hit on each key (m/s), its beat the frames since the clip's key before (for a
    clip's first key, to the key after).

    ``rotations`` ``[F, 24, 3]`` and ``root`` ``[F, 3]`` are the library's frames, ``key_frame`` and
    ``key_clip`` each key's frame index and clip.
    """
    positions = joint_positions(Motion(fps, np.asarray(root, np.float64), np.asarray(rotations, np.float64)))
    frames = np.asarray(key_frame, dtype=np.int64)
    clip = np.asarray(key_clip)
    gap = np.diff(frames).astype(np.float64)
    before = np.concatenate([[np.nan], gap])
    first = np.concatenate([[True], clip[1:] != clip[:-1]])
    after = np.concatenate([gap, [np.nan]])
    beat = np.where(first, after, before)
    beat = np.where(np.isfinite(beat) & (beat > 0), beat, 1.0)
    return hit_strengths(smoothed_speed(positions, fps), frames, beat)


def phrase_downbeat_share(hits: np.ndarray, phrase_key: np.ndarray, phrase_beats: np.ndarray) -> np.ndarray:
    """[2, P] each phrase's downbeat share danced over one bar (row 0: its last key is the downbeat)
    and over two (row 1: its middle key too, for an even number of beats).

    ``hits`` is :func:`key_hits` per key, ``phrase_key`` and ``phrase_beats`` each phrase's first key
    and length. A phrase without other inner keys (two beats over two bars) scores 0.5.
    """
    key = np.asarray(phrase_key, dtype=np.int64)
    beats = np.asarray(phrase_beats, dtype=np.int64)
    out = np.full((2, key.size), 0.5)
    for n in np.unique(beats).tolist():
        rows = np.flatnonzero(beats == n)
        hit = hits[key[rows, None] + np.arange(1, n + 1)]  # [rows, n]: keys 1..n
        for row, downbeats in enumerate(({n}, {n // 2, n} if n % 2 == 0 else {n})):
            on = [i - 1 for i in sorted(downbeats)]
            off = [i - 1 for i in range(1, n + 1) if i not in downbeats]
            if not off:
                continue
            down, other = hit[:, on].mean(axis=1), hit[:, off].mean(axis=1)
            total = down + other
            out[row, rows] = np.where(total > 0, down / np.where(total > 0, total, 1.0), 0.5)
    return out
