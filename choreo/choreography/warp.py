"""Warp a phrase's beats onto the song's beats: monotone, C1, pinned at both ends.

A phrase of ``n`` pulse beats danced over ``m`` song beats has beat ratio
``n / m`` (1, or 2 and 1/2 for double and half time): phrase beat ``i * n / m``
lands on song beat ``i`` wherever that is a whole phrase beat. PCHIP
(Fritsch-Carlson, written out here: SciPy's constructor costs more than the
rest of a phrase's guide) through those pairs is monotone (both sequences
increase) and continuously differentiable, and passes exactly through every
pair, so the phrase's first
and last frames land on the segment's first and last song beats and every
common beat lands on its song beat.

Unlike :mod:`choreo.mocap.timewarp` (which searches the best matching of free
ends), this is a closed-form map, cheap enough to run for every phrase of a song.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd

import numpy as np

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
        if (np.diff(self.song_s) <= 0).any() or (np.diff(self.phrase_s) <= 0).any():
            raise ParameterError("warp points must increase strictly")

    @property
    def stretch(self) -> float:
        """Song duration over phrase duration: above 1 the phrase is slowed down."""
        return float((self.song_s[-1] - self.song_s[0]) / (self.phrase_s[-1] - self.phrase_s[0]))

    def phrase_time(self, song_s: np.ndarray) -> np.ndarray:
        """Phrase time at each song time; linear with the end slopes outside the pinned span."""
        song_s = np.asarray(song_s, dtype=np.float64)
        x, y = self.song_s, self.phrase_s
        d = _pchip_slopes(x, y)
        i = np.clip(np.searchsorted(x, song_s, side="right") - 1, 0, x.size - 2)
        h = x[i + 1] - x[i]
        t = (np.clip(song_s, x[0], x[-1]) - x[i]) / h
        t2, t3 = t * t, t * t * t
        out = (
            (2 * t3 - 3 * t2 + 1) * y[i]
            + (t3 - 2 * t2 + t) * h * d[i]
            + (-2 * t3 + 3 * t2) * y[i + 1]
            + (t3 - t2) * h * d[i + 1]
        )
        lo, hi = song_s < x[0], song_s > x[-1]
        out[lo] = y[0] + (song_s[lo] - x[0]) * d[0]
        out[hi] = y[-1] + (song_s[hi] - x[-1]) * d[-1]
        return out


def _pchip_slopes(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Fritsch-Carlson derivatives at the knots: monotone data gives a monotone, C1 interpolant.

    Interior knots take the weighted harmonic mean of the neighbouring secants
    (zero where they differ in sign); the ends take the one-sided three-point
    estimate, clipped to keep monotonicity (as SciPy's ``PchipInterpolator`` does).
    """
    h = np.diff(x)
    delta = np.diff(y) / h
    d = np.zeros_like(y)
    if x.size == 2:
        return np.full(2, delta[0])
    w1, w2 = 2 * h[1:] + h[:-1], h[1:] + 2 * h[:-1]
    same = np.sign(delta[1:]) * np.sign(delta[:-1]) > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        harmonic = (w1 + w2) / (w1 / delta[:-1] + w2 / delta[1:])
    d[1:-1] = np.where(same, harmonic, 0.0)
    d[0] = _end_slope(h[0], h[1], delta[0], delta[1])
    d[-1] = _end_slope(h[-1], h[-2], delta[-1], delta[-2])
    return d


def _end_slope(h0: float, h1: float, m0: float, m1: float) -> float:
    d = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
    if np.sign(d) != np.sign(m0):
        return 0.0
    if np.sign(m0) != np.sign(m1) and abs(d) > abs(3 * m0):
        return 3 * m0
    return float(d)


def beat_warp(
    phrase_beats_s: np.ndarray, song_beats_s: np.ndarray, *, pinned: np.ndarray | None = None
) -> BeatWarp:
    """The warp that puts ``phrase_beats_s`` (``n + 1`` times) onto ``song_beats_s`` (``m + 1`` times).

    Every ``n / g``-th phrase beat is pinned to every ``m / g``-th song beat,
    ``g = gcd(n, m)``; with ``n == m`` all beats are pinned. ``pinned``
    (``[n + 1]`` bool) keeps only the marked phrase beats among those, and
    always both ends.

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
    song, phrase = song_beats_s[:: m // g], phrase_beats_s[:: n // g]
    if pinned is not None:
        keep = np.asarray(pinned, dtype=bool)[:: n // g].copy()
        keep[[0, -1]] = True
        song, phrase = song[keep], phrase[keep]
    return BeatWarp(song_s=song.copy(), phrase_s=phrase.copy())
