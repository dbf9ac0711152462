"""Warp a phrase's beats onto the song's beats: monotone, C1, pinned at both ends.

A phrase of ``n`` pulse beats danced over ``m`` song beats has beat ratio
``n / m`` (1, or 2 and 1/2 for double and half time): phrase beat ``i * n / m``
lands on song beat ``i`` wherever that is a whole phrase beat. PCHIP through
those pairs is monotone (both sequences increase) and continuously
differentiable, and passes exactly through every pair, so the phrase's first
and last frames land on the segment's first and last song beats and every
common beat lands on its song beat.

Unlike :mod:`choreo.mocap.timewarp` (which searches the best matching of free
ends), this is a closed-form map, cheap enough to run for every phrase of a song.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd

import numpy as np
from scipy.interpolate import PchipInterpolator

from choreo.errors import ParameterError

__all__ = ["BeatWarp", "beat_warp"]


@dataclass(frozen=True)
class BeatWarp:
    """Song time to phrase time for one segment of the plan."""

    song_s: np.ndarray
    """[points] song times of the pinned beats, increasing."""
    phrase_s: np.ndarray
    """[points] phrase times they map to, increasing (0 is the phrase's first frame)."""

    def __post_init__(self) -> None:
        if self.song_s.size < 2 or self.song_s.size != self.phrase_s.size:
            raise ParameterError("a warp needs two or more matching points")
        if np.any(np.diff(self.song_s) <= 0) or np.any(np.diff(self.phrase_s) <= 0):
            raise ParameterError("warp points must increase strictly")

    @property
    def stretch(self) -> float:
        """Song duration over phrase duration: above 1 the phrase is slowed down."""
        return float((self.song_s[-1] - self.song_s[0]) / (self.phrase_s[-1] - self.phrase_s[0]))

    def phrase_time(self, song_s: np.ndarray) -> np.ndarray:
        """Phrase time at each song time; linear with the end slopes outside the pinned span."""
        song_s = np.asarray(song_s, dtype=np.float64)
        if self.song_s.size == 2:
            rate = (self.phrase_s[1] - self.phrase_s[0]) / (self.song_s[1] - self.song_s[0])
            return self.phrase_s[0] + (song_s - self.song_s[0]) * rate
        f = PchipInterpolator(self.song_s, self.phrase_s, extrapolate=False)
        out = f(np.clip(song_s, self.song_s[0], self.song_s[-1]))
        d = f.derivative()
        lo, hi = song_s < self.song_s[0], song_s > self.song_s[-1]
        out[lo] = self.phrase_s[0] + (song_s[lo] - self.song_s[0]) * float(d(self.song_s[0]))
        out[hi] = self.phrase_s[-1] + (song_s[hi] - self.song_s[-1]) * float(d(self.song_s[-1]))
        return out


def beat_warp(phrase_beats_s: np.ndarray, song_beats_s: np.ndarray) -> BeatWarp:
    """The warp that puts ``phrase_beats_s`` (``n + 1`` times) onto ``song_beats_s`` (``m + 1`` times).

    Every ``n / g``-th phrase beat is pinned to every ``m / g``-th song beat,
    ``g = gcd(n, m)``; with ``n == m`` all beats are pinned.

    Raises
    ------
    ParameterError
        When either list has fewer than two times or does not increase.
    """
    phrase_beats_s = np.asarray(phrase_beats_s, dtype=np.float64)
    song_beats_s = np.asarray(song_beats_s, dtype=np.float64)
    n, m = phrase_beats_s.size - 1, song_beats_s.size - 1
    if n < 1 or m < 1:
        raise ParameterError("a warp needs at least two phrase beats and two song beats")
    g = gcd(n, m)
    return BeatWarp(song_s=song_beats_s[:: m // g].copy(), phrase_s=phrase_beats_s[:: n // g].copy())
