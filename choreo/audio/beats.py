"""Beats, tempo and downbeats from an onset envelope.

Beats come from a dynamic-programming beat tracker in the manner of Ellis
(2007), "Beat tracking by dynamic programming": a global tempo from the
autocorrelation of the onset envelope under a log-normal prior around 120 BPM,
then the path of beats that best trades onset strength against deviations from
that period. It is written here in numpy rather than taken from librosa for
two measured reasons: ``librosa.beat`` compiles a numba kernel on every import
(3 to 8 s before the first song on this 2-core machine), and it rounds the beat
period to whole frames, which drifts beats by up to a frame at tempi whose
period falls between frames. Here the period keeps its fraction.

The tempo is then fitted on the beat times (least-squares slope of beat time
against beat index) rather than read from the autocorrelation peak. Downbeats
assume four beats to a bar and choose the bar phase whose beats carry the most
bass onset and harmonic change.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
from scipy.ndimage import gaussian_filter1d, maximum_filter1d

__all__ = [
    "BEATS_PER_BAR",
    "METERS",
    "MIN_BEAT_ONSET_DB",
    "THREE_FOUR_MARGIN",
    "beat_accents",
    "estimate_beats_per_bar",
    "estimate_downbeats",
    "estimate_period_frames",
    "fit_tempo_bpm",
    "track_beats",
]

BEATS_PER_BAR = 4
"""The meter assumed where the accents cannot tell (fewer than two bars of beats)."""

METERS = (4, 3)
"""Beats per bar the downbeat estimate chooses from."""

THREE_FOUR_MARGIN = 1.3
"""How much clearer the best 3/4 bar phase must stand out than the best 4/4 one to choose 3/4.

Music in four far outnumbers music in three, and a 4/4 song whose accents say
little either way must stay in four.
"""

PRIOR_CENTRE_BPM = 120.0
"""Most likely tempo before looking at the song; the prior's width is one octave."""

TEMPO_RANGE_BPM = (40.0, 240.0)
"""Tempi the tracker can choose."""

MIN_BEAT_ONSET_DB = 0.1
"""Median onset strength (mean rise of the log-mel bands, dB) below which beats are not beats.

Music puts 1.5 dB or more on its beats; a steady tone puts about 0.001 dB of numerical
jitter there. The dB scale makes this independent of the song's level.
"""

TIGHTNESS = 100.0
"""Weight of the penalty ``(log(interval / period))**2`` against unit-variance onset strength."""


def track_beats(onset_envelope: np.ndarray, *, fps: float) -> tuple[np.ndarray, float]:
    """Beat frames of an onset envelope, and the global tempo the tracker followed.

    Parameters
    ----------
    onset_envelope : np.ndarray [shape=(frames,)], onset strength per frame in dB, >= 0
    fps : float > 0, frames per second of the envelope

    Returns
    -------
    beat_frames : np.ndarray [shape=(beats,), dtype=int], increasing; empty when
        the envelope is flat or the beats' median onset is below :data:`MIN_BEAT_ONSET_DB`
    period_bpm : float, ``60 * fps / period`` of the autocorrelation estimate (0 without beats)
    """
    envelope = np.asarray(onset_envelope, dtype=np.float64)
    spread = envelope.std()
    if envelope.size < 4 or spread <= 0:
        return np.zeros(0, dtype=np.int64), 0.0
    period = estimate_period_frames(envelope, fps=fps)
    local = gaussian_filter1d(envelope / spread, sigma=max(0.5, period / 32.0), mode="constant")
    cumulative, backlink = _best_beat_paths(local, period)
    # The path ends on the best-scoring frame of the last beat period.
    tail_start = max(0, local.size - int(np.ceil(period)))
    frame = tail_start + int(np.argmax(cumulative[tail_start:]))
    path = []
    while frame >= 0:
        path.append(frame)
        frame = int(backlink[frame])
    beats = _trim_weak_ends(np.asarray(path[::-1], dtype=np.int64), local)
    if beats.size == 0 or np.median(maximum_filter1d(envelope, size=3)[beats]) < MIN_BEAT_ONSET_DB:
        return np.zeros(0, dtype=np.int64), 0.0
    return beats, 60.0 * fps / period


def estimate_period_frames(onset_envelope: np.ndarray, *, fps: float) -> float:
    """Beat period in frames (with its fraction): the prior-weighted autocorrelation peak.

    The envelope is compressed (``log1p``, it is in dB) so that beats of
    alternating strength, a loud snare on 2 and 4 over a soft kick on 1 and 3,
    do not make the two-beat period win. The autocorrelation of the compressed,
    mean-removed envelope is weighted by a log-normal prior (one octave wide,
    centred on :data:`PRIOR_CENTRE_BPM`) and its best lag refined by a parabola
    through the neighbouring lags.
    """
    compressed = np.log1p(np.maximum(np.asarray(onset_envelope, dtype=np.float64), 0.0))
    centred = compressed - compressed.mean()
    n = centred.size
    spectrum = np.fft.rfft(centred, 2 * n)
    autocorrelation = np.fft.irfft(spectrum * np.conj(spectrum))[:n]
    min_lag = max(1, int(np.floor(60.0 * fps / TEMPO_RANGE_BPM[1])))
    max_lag = min(n - 2, int(np.ceil(60.0 * fps / TEMPO_RANGE_BPM[0])))
    if max_lag <= min_lag:
        return 60.0 * fps / PRIOR_CENTRE_BPM
    lags = np.arange(min_lag, max_lag + 1)
    prior = np.exp(-0.5 * np.log2(60.0 * fps / lags / PRIOR_CENTRE_BPM) ** 2)
    weighted = autocorrelation[lags] * prior
    best = int(np.argmax(weighted))
    lag = float(lags[best])
    if 0 < best < lags.size - 1:
        left, centre, right = weighted[best - 1 : best + 2]
        curvature = left - 2.0 * centre + right
        if curvature < 0:
            lag += 0.5 * (left - right) / curvature
    return lag


def _best_beat_paths(local: np.ndarray, period: float) -> tuple[np.ndarray, np.ndarray]:
    """Dynamic programme: the best score of a beat path ending at each frame, and its previous beat.

    A beat at frame ``t`` follows one at ``t - d`` for ``period / 2 <= d <= 2 * period``
    at a cost ``TIGHTNESS * log(d / period)**2``, or starts a path (backlink -1)
    when no predecessor adds anything. Frames are solved a block of
    ``period / 2`` at a time: within a block no frame can precede another.
    """
    n = local.size
    min_gap = max(1, int(np.ceil(period / 2.0)))
    gaps = np.arange(min_gap, max(min_gap, int(np.floor(2.0 * period))) + 1)
    penalty = -TIGHTNESS * np.log(gaps / period) ** 2
    cumulative = local.copy()
    backlink = np.full(n, -1, dtype=np.int64)
    for start in range(min_gap, n, min_gap):
        frames = np.arange(start, min(start + min_gap, n))
        previous = frames[:, np.newaxis] - gaps[np.newaxis, :]
        scores = np.where(previous >= 0, cumulative[np.maximum(previous, 0)] + penalty, -np.inf)
        choice = np.argmax(scores, axis=1)
        best = scores[np.arange(frames.size), choice]
        linked = best > 0
        cumulative[frames[linked]] += best[linked]
        backlink[frames[linked]] = previous[np.arange(frames.size), choice][linked]
    return cumulative, backlink


def _trim_weak_ends(beats: np.ndarray, local: np.ndarray) -> np.ndarray:
    """Drop leading and trailing beats that sit on less than a fifth of the median onset at beats.

    The path runs through silence before and after the music at no cost; this
    removes those beats without touching weak beats inside the song.
    """
    if beats.size == 0:
        return beats
    strength = local[beats]
    strong = np.flatnonzero(strength >= 0.2 * np.median(strength))
    if strong.size == 0:
        return beats[:0]
    return beats[strong[0] : strong[-1] + 1]


def fit_tempo_bpm(beat_times_s: np.ndarray, *, fallback_bpm: float = 0.0) -> float:
    """Tempo in BPM: 60 over the least-squares slope of beat time against beat index.

    A gap of about ``m`` beat periods between two tracked beats (a beat the
    tracker skipped) counts as ``m`` beats, so a dropout does not slow the tempo.

    Parameters
    ----------
    beat_times_s : np.ndarray [shape=(beats,)], increasing beat times in seconds
    fallback_bpm : returned when fewer than two beats leave nothing to fit

    Returns
    -------
    tempo_bpm : float
    """
    times = np.asarray(beat_times_s, dtype=np.float64)
    if times.size < 2:
        return float(fallback_bpm)
    intervals = np.diff(times)
    period = float(np.median(intervals))
    steps = np.maximum(1, np.rint(intervals / period))
    index = np.concatenate([[0.0], np.cumsum(steps)])
    slope_s = np.polyfit(index, times, 1)[0]
    return float(60.0 / slope_s)


def beat_accents(beat_frames: np.ndarray, *, bass_onset: np.ndarray, chroma: np.ndarray) -> np.ndarray:
    """How strongly each beat sounds like the first of a bar, standardised over the song.

    Two cues, each standardised: the onset of low-band (kick and bass) energy at
    the beat, and how much the harmony changes there (cosine distance between the
    mean chroma of the beat before and the beat after). Broadband onset strength
    is left out: snare backbeats on 2 and 4 dominate it.

    Parameters
    ----------
    beat_frames : np.ndarray [shape=(beats,), dtype=int], increasing
    bass_onset : np.ndarray [shape=(frames,)], onset strength of the low band
    chroma : np.ndarray [shape=(frames, 12)]

    Returns
    -------
    accent : np.ndarray [shape=(beats,)], mean 0 (all zeros when nothing varies)
    """
    beats = np.asarray(beat_frames, dtype=np.int64)
    if beats.size == 0:
        return np.zeros(0)
    # A beat frame can sit one frame off its onset peak: take the strongest neighbour.
    bass = maximum_filter1d(np.asarray(bass_onset, dtype=np.float64), size=3)[beats]
    return _standardise(bass) + _standardise(_harmonic_change(beats, chroma))


def estimate_beats_per_bar(accent: np.ndarray) -> int:
    """Three or four beats a bar: the meter whose best bar phase stands out most in the accents.

    For each meter in :data:`METERS`, the contrast is the mean accent of the best
    phase (every third or fourth beat) minus the mean over all beats. Accents that
    repeat every three beats give 4/4 no phase that stands out, and the other way
    round; a two-beat pattern (kick on 1 and 3) stands out in four. 3/4 needs a
    contrast :data:`THREE_FOUR_MARGIN` times that of 4/4, and at least two bars of
    four beats are needed to judge at all (else :data:`BEATS_PER_BAR`).
    """
    values = np.asarray(accent, dtype=np.float64)
    if values.size < 2 * max(METERS):
        return BEATS_PER_BAR
    contrast = {
        meter: max(values[phase::meter].mean() for phase in range(meter)) - values.mean() for meter in METERS
    }
    return 3 if contrast[3] > THREE_FOUR_MARGIN * max(contrast[4], 0.0) else 4


def estimate_downbeats(
    beat_frames: np.ndarray,
    *,
    bass_onset: np.ndarray,
    chroma: np.ndarray,
    beats_per_bar: int | None = BEATS_PER_BAR,
) -> np.ndarray:
    """The beats that start a bar: the bar phase whose beats carry the most accent.

    Parameters
    ----------
    beat_frames : np.ndarray [shape=(beats,), dtype=int], increasing
    bass_onset : np.ndarray [shape=(frames,)], onset strength of the low band
    chroma : np.ndarray [shape=(frames, 12)]
    beats_per_bar : 3 or 4; None estimates it from the accents (:func:`estimate_beats_per_bar`)

    Returns
    -------
    downbeat_frames : np.ndarray [shape=(bars,), dtype=int], every ``beats_per_bar``-th
        beat of ``beat_frames``; empty with fewer than two bars of beats, where the
        phase cannot be judged
    """
    beats = np.asarray(beat_frames, dtype=np.int64)
    if beats.size < 2 * (beats_per_bar or BEATS_PER_BAR):
        return np.zeros(0, dtype=np.int64)
    accent = beat_accents(beats, bass_onset=bass_onset, chroma=chroma)
    meter = estimate_beats_per_bar(accent) if beats_per_bar is None else int(beats_per_bar)
    scores = [accent[phase::meter].mean() for phase in range(meter)]
    return beats[int(np.argmax(scores)) :: meter]


def _harmonic_change(beats: np.ndarray, chroma: np.ndarray) -> np.ndarray:
    """Cosine distance between the mean chroma of the beat before and after each beat (0 at the ends)."""
    edges = np.concatenate([beats, [chroma.shape[0]]])
    means = np.stack([chroma[a:b].mean(axis=0) if b > a else chroma[a] for a, b in pairwise(edges)])
    norms = np.linalg.norm(means, axis=1) + 1e-12
    similarity = np.sum(means[1:] * means[:-1], axis=1) / (norms[1:] * norms[:-1])
    change = np.zeros(beats.size)
    change[1:] = 1.0 - similarity
    return change


def _standardise(values: np.ndarray) -> np.ndarray:
    spread = values.std()
    return (values - values.mean()) / spread if spread > 0 else np.zeros_like(values)
