"""Warp a phrase's beats onto the song's beats: monotone, C1, pinned at both ends.

A phrase of ``n`` pulse beats danced over ``m`` song beats has beat ratio
``n / m`` (1, or 2 and 1/2 for double and half time): phrase beat ``i * n / m``
lands on song beat ``i`` wherever that is a whole phrase beat. A monotone cubic
Hermite map through those pairs (written out here: SciPy's constructor costs
more than the rest of a phrase's guide) is continuously differentiable and
passes exactly through every pair, so the phrase's first and last frames land
on the segment's first and last song beats and every pinned beat lands on its
song beat.

A dance hits the beats when its slowest moments (the kinematic beats the
beat-alignment measure counts) fall on them and not between them. Real dancers'
stops are shallow (the joint speed dips by a few per cent in salsa and modern),
so how fast the warp plays the motion around a beat decides where the slowest
moment lands: a beat pinned between a fast and a slow stretch slides several
frames towards the slow one. An eased warp (``eased=True``, what the guide asks
for) therefore pins every phrase beat where the stretch on both sides stays
within :data:`STOP_STRETCH_TOLERANCE` of the segment's, and eases into each: it
plays the motion there at :data:`HIT_EASE` times the slower of the speeds of the
stretches beside it (a local minimum of the playback speed, a held accent), so
the dancer slows on the song's beat whether or not the source dancer stopped
there, and a stop of the source lands on it. Other beats follow the map between
the pinned ones. On fast songs (beats closer than :data:`FAST_BEAT_S`) a stop on
every beat is too brief to show, so the warp hits every other song beat, harder
(:data:`FAST_HIT_EASE`), and plays through the pinned beats between.

Unlike :mod:`choreo.mocap.timewarp` (which searches the best matching of free
ends), this is a closed-form map, cheap enough to run for every phrase of a song.

A stretched flight looks like floating: where the body is in the air
:func:`limit_airborne_stretch` keeps the local stretch within
:data:`AIRBORNE_STRETCH` and moves the rest of the stretch into the ground
contact of the same stretch between pins, keeping the pins, monotonicity and C1.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd

import numpy as np

from choreo.errors import ParameterError

__all__ = [
    "AIRBORNE_STRETCH",
    "FAST_BEAT_S",
    "FAST_HIT_EASE",
    "HIT_EASE",
    "STOP_STRETCH_TOLERANCE",
    "BeatWarp",
    "beat_warp",
    "limit_airborne_stretch",
]

HIT_EASE = 0.5
"""Playback speed at a pinned beat of an eased warp, relative to the slower of the stretches beside it.

Easing only the source's stops at 0.7 (issue 11) put a quarter of the dance's kinematic
beats on song beats; easing every pinned beat at 0.7, 0.5 and 0.4 raised the on-beat minus
half-beat contrast of the blend on five held-out songs (two seeds) from 0.13 to 0.20, 0.26
and 0.28 (``docs/choreography.md``); 0.5 keeps the playback between beats within about
1.5 times the segment's."""

FAST_BEAT_S = 0.48
"""Where the beats it may pin come closer than this (above 125 BPM) an eased warp hits every other one.

The spacing is that of the song beats the warp can pin: every song beat at beat ratios 1 and 2,
every other one in half time (which, at 0.73 s on a 163 BPM song, is eased as a slower song is:
easing those at :data:`FAST_HIT_EASE` made the held-out warzone track stall twice as long).

Eased on every beat at :data:`HIT_EASE`, a 140 BPM dance slows every 0.43 s, too often
for a stop to show: its speed smoothed over a fifth of a second (the kinematic beats)
barely dips on the beats, and its slowest moments fall where the source motion puts them
(forest: on-beat minus half-beat 0.05 to 0.08). A dancer at such tempi hits every other
beat and moves through the beats between. So the song beats at even places of the segment
(which starts on a bar: beats 1 and 3 of a 4/4 bar) are eased at :data:`FAST_HIT_EASE`,
and those between stay pinned (the timing holds) at the warp's own slope, which keeps the
playback between hits within about 1.3 times the stretch's, as easing every beat at 0.5 does.
On tuning songs (``docs/choreography.md``) it beat easing every beat harder (at 0.3) at 128
to 150 BPM but not at 120, hence the bound."""

FAST_HIT_EASE = 0.15
"""Playback speed at a hit of a fast song's eased warp (every other beat, :data:`FAST_BEAT_S`),
relative to the slower of the stretches beside it."""

STOP_STRETCH_TOLERANCE = 1.2
"""A beat is pinned when the stretch on either side of it is within this ratio of the segment's."""

AIRBORNE_STRETCH = (0.9, 1.1)
"""Bounds of the local stretch (song time over phrase time) where the body is in the air."""

_RAMP_FRAMES = 3
"""Ground frames over which the extra stretch fades in next to a flight or a pin."""

_MAX_GROUND_SCALE = 2.0
"""The ground's stretch may be scaled by up to this (or its inverse) to spare a flight."""


@dataclass(frozen=True)
class BeatWarp:
    """Song time to phrase time for one segment of the plan."""

    song_s: np.ndarray
    """[points] song times of the pinned beats, increasing."""
    phrase_s: np.ndarray
    """[points] phrase times they map to, increasing (0 is the phrase's first frame)."""
    slopes: np.ndarray | None = None
    """[points] phrase seconds per song second at the points; None: PCHIP's (Fritsch-Carlson)."""

    def __post_init__(self) -> None:
        if self.song_s.size < 2 or self.song_s.size != self.phrase_s.size:
            raise ParameterError("a warp needs two or more matching points")
        if (np.diff(self.song_s) <= 0).any() or (np.diff(self.phrase_s) <= 0).any():
            raise ParameterError("warp points must increase strictly")
        if self.slopes is not None and (self.slopes.shape != self.song_s.shape or (self.slopes <= 0).any()):
            raise ParameterError("warp slopes must be positive, one per point")

    @property
    def stretch(self) -> float:
        """Song duration over phrase duration: above 1 the phrase is slowed down."""
        return float((self.song_s[-1] - self.song_s[0]) / (self.phrase_s[-1] - self.phrase_s[0]))

    def phrase_time(self, song_s: np.ndarray) -> np.ndarray:
        """Phrase time at each song time; linear with the end slopes outside the pinned span."""
        d = _pchip_slopes(self.song_s, self.phrase_s) if self.slopes is None else self.slopes
        return _hermite(self.song_s, self.phrase_s, d, np.asarray(song_s, dtype=np.float64))


def _hermite(x: np.ndarray, y: np.ndarray, d: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The cubic Hermite interpolant through ``(x, y)`` with slopes ``d``, at ``q``; linear outside."""
    i = np.clip(np.searchsorted(x, q, side="right") - 1, 0, x.size - 2)
    h = x[i + 1] - x[i]
    t = (np.clip(q, x[0], x[-1]) - x[i]) / h
    t2, t3 = t * t, t * t * t
    out = (
        (2 * t3 - 3 * t2 + 1) * y[i]
        + (t3 - 2 * t2 + t) * h * d[i]
        + (-2 * t3 + 3 * t2) * y[i + 1]
        + (t3 - t2) * h * d[i + 1]
    )
    lo, hi = q < x[0], q > x[-1]
    out[lo] = y[0] + (q[lo] - x[0]) * d[0]
    out[hi] = y[-1] + (q[hi] - x[-1]) * d[-1]
    return out


def _hermite_slope(x: np.ndarray, y: np.ndarray, d: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The derivative of :func:`_hermite` at ``q`` (inside ``x[0] .. x[-1]``)."""
    i = np.clip(np.searchsorted(x, q, side="right") - 1, 0, x.size - 2)
    h = x[i + 1] - x[i]
    t = (np.clip(q, x[0], x[-1]) - x[i]) / h
    secant = (y[i + 1] - y[i]) / h
    return d[i] * (1 - 4 * t + 3 * t * t) + d[i + 1] * (3 * t * t - 2 * t) + 6 * secant * (t - t * t)


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


def beat_warp(phrase_beats_s: np.ndarray, song_beats_s: np.ndarray, *, eased: bool = False) -> BeatWarp:
    """The warp that puts ``phrase_beats_s`` (``n + 1`` times) onto ``song_beats_s`` (``m + 1`` times).

    Every ``n / g``-th phrase beat is pinned to every ``m / g``-th song beat,
    ``g = gcd(n, m)``; with ``n == m`` all beats are pinned. ``eased`` keeps,
    besides both ends, only those beats whose stretch on both sides stays within
    :data:`STOP_STRETCH_TOLERANCE` of the segment's (the most regular first), and
    eases into every pinned beat, ends included (see the module docstring); where the
    beats come faster than :data:`FAST_BEAT_S` it eases only into the pinned song beats at even
    places (``0, 2, 4 ...`` of ``song_beats_s``), harder, and plays through the others.
    The spacing is that of the song beats it can pin (every other one in half time).

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
    song, phrase = song_beats_s[:: m // g].copy(), phrase_beats_s[:: n // g].copy()
    warp = BeatWarp(song_s=song, phrase_s=phrase)
    if not eased:
        return warp
    keep = _regular_beats(song, phrase)
    song_index = np.arange(0, m + 1, m // g)[keep]
    song, phrase = song[keep], phrase[keep]
    secant = np.diff(phrase) / np.diff(song)
    slower = np.minimum(np.append(secant[0], secant), np.append(secant, secant[-1]))
    if np.median(np.diff(song)) >= FAST_BEAT_S:
        return BeatWarp(song_s=song, phrase_s=phrase, slopes=HIT_EASE * slower)
    passing = song_index % 2 == 1
    slopes = np.where(passing, _pchip_slopes(song, phrase), FAST_HIT_EASE * slower)
    return BeatWarp(song_s=song, phrase_s=phrase, slopes=slopes)


def _regular_beats(song: np.ndarray, phrase: np.ndarray) -> np.ndarray:
    """Which points to keep: both ends, and the interior beats that keep the stretch regular.

    Beats are taken in order of how close the straight line between the ends
    puts them to their song beat; one is kept when the stretch from its kept
    neighbours on either side is within :data:`STOP_STRETCH_TOLERANCE` of the
    segment's.
    """
    keep = np.zeros(song.size, dtype=bool)
    keep[[0, -1]] = True
    overall = (song[-1] - song[0]) / (phrase[-1] - phrase[0])
    line = song[0] + (phrase - phrase[0]) * overall
    lo, hi = overall / STOP_STRETCH_TOLERANCE, overall * STOP_STRETCH_TOLERANCE
    for i in sorted(range(1, song.size - 1), key=lambda j: abs(song[j] - line[j])):
        left = np.flatnonzero(keep[:i])[-1]
        right = i + 1 + np.flatnonzero(keep[i + 1 :])[0]
        before = (song[i] - song[left]) / (phrase[i] - phrase[left])
        after = (song[right] - song[i]) / (phrase[right] - phrase[i])
        if lo <= before <= hi and lo <= after <= hi:
            keep[i] = True
    return keep


def limit_airborne_stretch(
    warp: BeatWarp, airborne: np.ndarray, fps: float, bounds: tuple[float, float] = AIRBORNE_STRETCH
) -> BeatWarp:
    """``warp`` with its local stretch kept within ``bounds`` where the body is in the air.

    Parameters
    ----------
    warp : a warp whose phrase times start at 0 (the phrase's first frame)
    airborne : [frames] bool, the phrase's frames (frame ``j`` at ``j / fps`` s) in the air
    fps : the phrase's frame rate
    bounds : lowest and highest stretch (song seconds per phrase second) in the air

    The warp is rebuilt on a knot at every phrase frame (and every pin). The
    stretch at a knot starts as the PCHIP's (through the same pins, phrase
    time to song time), clipped to ``bounds`` at airborne knots; between two
    pins the stretch of the ground knots is scaled (fading in over a few
    frames next to a flight or a pin) until the stretch between the pins
    lands exactly on them. The knots' song times are placed so that phrase
    time per song time runs linearly from knot to knot, which keeps the warp
    C1 and monotone and the stretch between knots within the knots' values.

    An interior pin is let go where it is in the air (the apex of a jump is a
    speed minimum), or where the stretch between it and its
    neighbour has too little ground to take the flight's share (its stretch
    would change by more than :data:`_MAX_GROUND_SCALE` times): such a flight
    keeps its own time rather than its beat. The ends stay pinned; between
    them, when the ground still cannot take it all, it takes that much and
    the flight the remainder. The warp is returned unchanged when no airborne
    frame is stretched beyond ``bounds``.
    """
    airborne = np.asarray(airborne, dtype=bool)
    if not airborne.any():
        return warp
    pins_s, pins_p = warp.song_s, warp.phrase_s
    frames_p = np.arange(airborne.size) / fps
    near_pin = np.abs(frames_p[:, None] - pins_p[None, :]).min(axis=1) < 1e-9
    inside = (frames_p > pins_p[0]) & (frames_p < pins_p[-1]) & ~near_pin
    knots_p = np.union1d(frames_p[inside], pins_p)
    air = np.zeros(knots_p.size, dtype=bool)
    frame_of = np.rint(knots_p * fps).astype(int)
    on_frame = np.abs(frame_of - knots_p * fps) < 1e-6
    air[on_frame] = airborne[np.clip(frame_of[on_frame], 0, airborne.size - 1)]
    lo, hi = bounds
    plain = _pchip_stretch(pins_s, pins_p, knots_p)
    if not ((plain[air] < lo) | (plain[air] > hi)).any():
        return warp
    pin_at = np.searchsorted(knots_p, pins_p)
    keep = ~air[pin_at]
    keep[[0, -1]] = True
    while True:
        fitted = _bounded(knots_p, air, pins_s[keep], pins_p[keep], pin_at[keep], bounds)
        if isinstance(fitted, tuple):
            knots_s, stretch = fitted
            return BeatWarp(song_s=knots_s, phrase_s=knots_p, slopes=1.0 / stretch)
        kept = np.flatnonzero(keep)
        keep[kept[fitted + 1] if fitted == 0 else kept[fitted]] = False


def _pchip_stretch(pins_s: np.ndarray, pins_p: np.ndarray, knots_p: np.ndarray) -> np.ndarray:
    """Stretch at ``knots_p`` of the PCHIP from phrase time to song time through the pins."""
    return np.maximum(_hermite_slope(pins_p, pins_s, _pchip_slopes(pins_p, pins_s), knots_p), 1e-3)


def _bounded(
    knots_p: np.ndarray,
    air: np.ndarray,
    pins_s: np.ndarray,
    pins_p: np.ndarray,
    pin_at: np.ndarray,
    bounds: tuple[float, float],
) -> tuple[np.ndarray, np.ndarray] | int:
    """Knot song times and stretches with the flights bounded, or the first stretch between pins that
    cannot be (when it has an interior pin to let go)."""
    stretch = _pchip_stretch(pins_s, pins_p, knots_p)
    stretch[air] = np.clip(stretch[air], *bounds)
    knots_s = np.empty_like(knots_p)
    knots_s[0] = pins_s[0]
    for k in range(pins_s.size - 1):
        a, b = pin_at[k], pin_at[k + 1]
        seg = slice(a, b + 1)
        dp, span = np.diff(knots_p[seg]), pins_s[k + 1] - pins_s[k]
        ramp = _ramp(air[seg])
        sigma, scale = _fit_stretch(stretch[seg], ramp, dp, span)
        if ramp.any() and 1.0 / _MAX_GROUND_SCALE <= scale <= _MAX_GROUND_SCALE:
            pass
        elif pins_s.size > 2 and air[seg].any():
            return k
        else:  # the ground takes its most, the flight the rest
            limit = float(np.clip(scale, 1.0 / _MAX_GROUND_SCALE, _MAX_GROUND_SCALE)) if ramp.any() else 1.0
            rest = 1.0 - ramp
            rest[[0, -1]] = 0.0
            sigma, _ = _fit_stretch(stretch[seg] * (1.0 + (limit - 1.0) * ramp), rest, dp, span)
        stretch[seg] = sigma
        knots_s[a + 1 : b + 1] = pins_s[k] + np.cumsum(_song_steps(sigma, dp))
        knots_s[b] = pins_s[k + 1]
    return knots_s, stretch


def _ramp(air: np.ndarray) -> np.ndarray:
    """How much of the extra stretch each knot between two pins takes (0 at the pins and in the air)."""
    n = air.size
    idx = np.arange(n)
    fixed = air.copy()
    fixed[[0, -1]] = True
    where = np.flatnonzero(fixed)
    nearest = np.abs(idx[:, None] - where[None, :]).min(axis=1)
    return np.minimum(nearest / _RAMP_FRAMES, 1.0)


def _song_steps(sigma: np.ndarray, dp: np.ndarray) -> np.ndarray:
    """Song seconds between knots for stretch ``sigma`` at the knots: phrase rate linear in song time."""
    return 2.0 * dp / (1.0 / sigma[:-1] + 1.0 / sigma[1:])


def _fit_stretch(
    base: np.ndarray, ramp: np.ndarray, dp: np.ndarray, song_span: float
) -> tuple[np.ndarray, float]:
    """Stretch ``base * (1 + (c - 1) * ramp)`` at the knots whose song steps sum to ``song_span``, and ``c``.

    The song span grows with ``c > 0``: Newton's method on ``log c``, kept
    inside a shrinking bracket (a bisection where a step would leave it).
    """
    lo, hi, u = -8.0, 8.0, 0.0
    for _ in range(60):
        c = np.exp(u)
        sigma = base * (1.0 + (c - 1.0) * ramp)
        inv = 1.0 / sigma
        pair = inv[:-1] + inv[1:]
        error = float(np.sum(2.0 * dp / pair)) - song_span
        if abs(error) < 1e-12 * song_span:
            break
        if error < 0:
            lo = u
        else:
            hi = u
        # d step / d sigma_j = 2 dp / pair^2 / sigma_j^2, d sigma / d u = base * ramp * c
        weight = 2.0 * dp / pair**2
        grad = base * ramp * c * inv**2
        slope = float(np.sum(weight * (grad[:-1] + grad[1:])))
        step = u - error / slope if slope > 0 else 0.5 * (lo + hi)
        u = step if lo < step < hi else 0.5 * (lo + hi)
    scale = float(np.exp(u))
    return base * (1.0 + (scale - 1.0) * ramp), scale
