"""What follows the beat decoding: which beats sound, the tempo fitted on them, the downbeats.

The beats themselves come from :mod:`choreo.audio.beat_pointer` (a beat-pointer
hidden Markov model, chosen by the beat-truth benchmark, ``bench/beats.py``).
That model puts beats through silence too; :func:`keep_sounding_beats` drops
them. The tempo is fitted on the beat times (least-squares slope of beat time
against beat index). Downbeats choose the meter (3 or 4) and the bar phase
whose beats carry the most bass onset and harmonic change.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise

import numpy as np
from scipy.ndimage import maximum_filter1d

__all__ = [
    "BEATS_PER_BAR",
    "LOW_ONSET_WEIGHT",
    "METERS",
    "MIN_BEAT_ONSET_DB",
    "THREE_FOUR_MARGIN",
    "beat_accents",
    "estimate_beats_per_bar",
    "estimate_downbeats",
    "fit_tempo_bpm",
    "keep_sounding_beats",
    "snap_to_onsets",
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

LOW_ONSET_WEIGHT = 0.25
"""Weight of the low-band onset beside the bar's harmonic change (weight 1) in a beat's downbeat accent.

Chosen on the beat-truth set's tuning half (``bench/beats.py``, docs/audio.md): the low band is a
weak cue of the bar (a walking bass's leap to its approach note is the low band's largest rise in
swing, on beat 4), but a quarter of it keeps a song without chord changes on its kick and made the
choice between 3/4 and 4/4 clearest. Tried there, at weights 0 to 1: the low band's summed energy,
the beat-level harmonic change, a beat's loudness and the high-band (snare, hi-hat) onset against.
"""

HARMONY_FLOOR = 0.05
LOW_ONSET_FLOOR_DB = 1.0
"""The least spread each downbeat cue is divided by: a cue that barely varies says nothing.

Across the 48 composed songs of the beat-truth set the bar-level harmonic change spreads by 0.05 to
0.24 (cosine distance) and the low-band onset at the beats by 1.6 to 9 dB; over a click track the
harmonic change varies by 0.0002, and standardised as it is it would outweigh the kick.
"""

CHROMA_GUARD_FRAMES = 2
"""Half the features' STFT window (2048 samples) in frames (hops of 512): a beat's onset smears this far."""

MIN_BEAT_ONSET_DB = 0.1
"""Median onset strength (mean rise of the log-mel bands, dB) below which beats are not beats.

Music puts 1.5 dB or more on its beats; a steady tone puts about 0.001 dB of numerical
jitter there. The dB scale makes this independent of the song's level.
"""

WEAK_END_SHARE = 0.2
"""Leading and trailing beats under this share of the beats' upper-quartile onset are not the song's."""


def keep_sounding_beats(beat_frames: np.ndarray, onset_envelope: np.ndarray) -> np.ndarray:
    """The beats that sound: weak beats before and after the music dropped, none where nothing sounds.

    The onset at a beat is the envelope's peak within a frame of it. Leading and
    trailing beats under :data:`WEAK_END_SHARE` of the upper quartile are dropped
    (the decoding runs through silence at no cost; the quartile, not the median,
    so that a long silence does not lower the bar); weak beats inside the song
    stay. All are dropped when the median of the rest is under :data:`MIN_BEAT_ONSET_DB`.

    Parameters
    ----------
    beat_frames : np.ndarray [shape=(beats,), dtype=int], increasing
    onset_envelope : np.ndarray [shape=(frames,)], onset strength per frame in dB, >= 0

    Returns
    -------
    beat_frames : np.ndarray [shape=(kept,), dtype=int], a contiguous run of the input
    """
    beats = np.asarray(beat_frames, dtype=np.int64)
    if beats.size == 0:
        return beats
    strength = maximum_filter1d(np.asarray(onset_envelope, dtype=np.float64), size=3)[beats]
    strong = np.flatnonzero(strength >= WEAK_END_SHARE * np.percentile(strength, 75))
    if strong.size == 0 or np.median(strength[strong[0] : strong[-1] + 1]) < MIN_BEAT_ONSET_DB:
        return beats[:0]
    return beats[strong[0] : strong[-1] + 1]


def snap_to_onsets(beat_frames: np.ndarray, onset_envelope: np.ndarray, *, reach: int = 1) -> np.ndarray:
    """Each beat moved to the frame of the strongest onset within ``reach`` frames (ties: the earliest).

    Returns increasing, unique frames within the envelope (two beats that land on one frame count once).
    """
    envelope = np.asarray(onset_envelope, dtype=np.float64)
    frames = np.clip(np.asarray(beat_frames, dtype=np.int64), 0, envelope.size - 1)
    if frames.size == 0:
        return frames
    offsets = np.arange(-reach, reach + 1)
    candidates = np.clip(frames[:, None] + offsets[None, :], 0, envelope.size - 1)
    best = candidates[np.arange(frames.size), np.argmax(envelope[candidates], axis=1)]
    return np.unique(best)


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


def beat_accents(
    beat_frames: np.ndarray, *, bass_onset: np.ndarray, chroma: np.ndarray, beats_per_bar: int
) -> np.ndarray:
    """How strongly each beat sounds like the first of a bar of ``beats_per_bar`` beats, over the song.

    Two cues, each standardised over the song: how much the harmony changes
    across the beat at the bar's scale (cosine distance between the mean chroma of
    the ``beats_per_bar`` beats before and of the ``beats_per_bar`` beats after:
    chords change on the bar, while a walking bass or a comping pattern changes
    the chroma at every beat), plus :data:`LOW_ONSET_WEIGHT` times the onset of
    low-band (kick and bass) energy at the beat. Broadband onset strength is left
    out: snare backbeats on 2 and 4 dominate it.

    Parameters
    ----------
    beat_frames : np.ndarray [shape=(beats,), dtype=int], increasing
    bass_onset : np.ndarray [shape=(frames,)], onset strength of the low band
    chroma : np.ndarray [shape=(frames, 12)]
    beats_per_bar : int > 0, the bar length the harmonic change is measured over

    Returns
    -------
    accent : np.ndarray [shape=(beats,)], mean 0 (all zeros when nothing varies)
    """
    beats = np.asarray(beat_frames, dtype=np.int64)
    if beats.size == 0:
        return np.zeros(0)
    # A beat frame can sit one frame off its onset peak: take the strongest neighbour.
    bass = maximum_filter1d(np.asarray(bass_onset, dtype=np.float64), size=3)[beats]
    harmony = _bar_harmonic_change(_beat_chroma(beats, chroma), beats_per_bar)
    return _standardise(harmony, floor=HARMONY_FLOOR) + LOW_ONSET_WEIGHT * _standardise(
        bass, floor=LOW_ONSET_FLOOR_DB
    )


def estimate_beats_per_bar(accents: Mapping[int, np.ndarray]) -> int:
    """Three or four beats a bar: the meter whose best bar phase stands out most in its accents.

    ``accents`` maps each meter of :data:`METERS` to the beats' accents for bars of
    that length (:func:`beat_accents`). For each meter, the contrast is the mean
    accent of the best phase (every third or fourth beat) minus the mean over all
    beats. Accents that repeat every three beats give 4/4 no phase that stands
    out, and the other way round; a two-beat pattern (kick on 1 and 3) stands out
    in four. 3/4 needs a contrast :data:`THREE_FOUR_MARGIN` times that of 4/4, and
    at least two bars of four beats are needed to judge at all (else :data:`BEATS_PER_BAR`).
    """
    values = {meter: np.asarray(accents[meter], dtype=np.float64) for meter in METERS}
    if min(v.size for v in values.values()) < 2 * max(METERS):
        return BEATS_PER_BAR
    contrast = {
        meter: max(v[phase::meter].mean() for phase in range(meter)) - v.mean() for meter, v in values.items()
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
    meters = METERS if beats_per_bar is None else (int(beats_per_bar),)
    accents = {m: beat_accents(beats, bass_onset=bass_onset, chroma=chroma, beats_per_bar=m) for m in meters}
    meter = estimate_beats_per_bar(accents) if beats_per_bar is None else int(beats_per_bar)
    accent = accents[meter]
    scores = [accent[phase::meter].mean() for phase in range(meter)]
    return beats[int(np.argmax(scores)) :: meter]


def _beat_chroma(beats: np.ndarray, chroma: np.ndarray) -> np.ndarray:
    """Mean chroma [beats, 12] of each beat, from its frame to the next beat's (the last to the song's end).

    Each beat's mean leaves out :data:`CHROMA_GUARD_FRAMES` at either end, where the
    STFT window still smears in the neighbouring beat's onset (where the beat is long enough).
    """
    edges = np.concatenate([beats, [chroma.shape[0]]])
    guard = CHROMA_GUARD_FRAMES
    return np.stack(
        [
            chroma[a + guard : b - guard].mean(axis=0)
            if b - a > 2 * guard
            else chroma[a : max(b, a + 1)].mean(axis=0)
            for a, b in pairwise(edges)
        ]
    )


def _bar_harmonic_change(beat_chroma: np.ndarray, span: int) -> np.ndarray:
    """Cosine distance between the summed chroma of the ``span`` beats before each beat and the ``span``
    from it; 0 where either side has fewer than ``span`` beats (the first and last bar of beats).

    The tuning half of the beat-truth set scored this above filling those beats with the others' mean
    or measuring them over the beats there are (downbeat F 0.84 against 0.79 and 0.79).
    """
    n = beat_chroma.shape[0]
    change = np.zeros(n)
    if n < 2 * span:
        return change
    total = np.concatenate([np.zeros((1, beat_chroma.shape[1])), np.cumsum(beat_chroma, axis=0)])
    index = np.arange(span, n - span + 1)
    before = total[index] - total[index - span]
    after = total[index + span] - total[index]
    norms = np.linalg.norm(before, axis=1) * np.linalg.norm(after, axis=1) + 1e-12
    change[index] = 1.0 - np.sum(before * after, axis=1) / norms
    return change


def _standardise(values: np.ndarray, *, floor: float) -> np.ndarray:
    """``values`` less their mean, over their standard deviation or ``floor``, whichever is larger."""
    return (values - values.mean()) / max(float(values.std()), floor)
