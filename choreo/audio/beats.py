"""Beats, tempo and downbeats from an onset envelope.

Beats come from librosa's dynamic-programming beat tracker. The tempo is then
fitted on the beat times (least-squares slope of beat time against beat index)
rather than read from the tracker's tempogram, whose bins are several BPM
apart at fast tempi. Downbeats assume four beats to a bar and choose the bar
phase whose beats carry the most bass onset and harmonic change.
"""

from __future__ import annotations

from itertools import pairwise

import librosa
import numpy as np
from scipy.ndimage import maximum_filter1d

__all__ = ["BEATS_PER_BAR", "estimate_downbeats", "fit_tempo_bpm", "track_beats"]

BEATS_PER_BAR = 4


def track_beats(onset_envelope: np.ndarray, *, sr: int, hop_length: int) -> tuple[np.ndarray, float]:
    """Beat frames of an onset envelope, and the tracker's own (coarse) tempo.

    Parameters
    ----------
    onset_envelope : np.ndarray [shape=(frames,)], onset strength per frame
    sr : int, sample rate the envelope was computed at, Hz
    hop_length : int, samples per envelope frame

    Returns
    -------
    beat_frames : np.ndarray [shape=(beats,), dtype=int], increasing; empty when no beat is found
    tempogram_bpm : float, the tempogram estimate the tracker started from (0 without beats)
    """
    if not np.any(onset_envelope > 0):
        return np.zeros(0, dtype=np.int64), 0.0
    tempo, frames = librosa.beat.beat_track(
        onset_envelope=onset_envelope, sr=sr, hop_length=hop_length, units="frames"
    )
    frames = np.unique(np.asarray(frames, dtype=np.int64))
    return frames, float(np.atleast_1d(tempo)[0]) if frames.size else 0.0


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


def estimate_downbeats(beat_frames: np.ndarray, *, bass_onset: np.ndarray, chroma: np.ndarray) -> np.ndarray:
    """The beats that start a bar, assuming :data:`BEATS_PER_BAR` beats a bar.

    Each beat gets an accent from two cues, each standardised over the song: the
    onset of low-band (kick and bass) energy at the beat, and how much the
    harmony changes there (cosine distance between the mean chroma of the beat
    before and the beat after). Of the four possible bar phases, the one whose
    beats have the highest mean accent gives the downbeats. Broadband onset
    strength is left out: snare backbeats on 2 and 4 dominate it.

    Parameters
    ----------
    beat_frames : np.ndarray [shape=(beats,), dtype=int], increasing
    bass_onset : np.ndarray [shape=(frames,)], onset strength of the low band
    chroma : np.ndarray [shape=(12, frames)]

    Returns
    -------
    downbeat_frames : np.ndarray [shape=(bars,), dtype=int], every fourth beat
        of ``beat_frames``; empty with fewer than two bars of beats, where the
        phase cannot be judged
    """
    beats = np.asarray(beat_frames, dtype=np.int64)
    if beats.size < 2 * BEATS_PER_BAR:
        return np.zeros(0, dtype=np.int64)
    # A beat frame can sit one frame off its onset peak: take the strongest neighbour.
    bass = maximum_filter1d(np.asarray(bass_onset, dtype=np.float64), size=3)[beats]
    accent = _standardise(bass) + _standardise(_harmonic_change(beats, chroma))
    scores = [accent[phase::BEATS_PER_BAR].mean() for phase in range(BEATS_PER_BAR)]
    return beats[int(np.argmax(scores)) :: BEATS_PER_BAR]


def _harmonic_change(beats: np.ndarray, chroma: np.ndarray) -> np.ndarray:
    """Cosine distance between the mean chroma of the beat before and after each beat (0 at the ends)."""
    edges = np.concatenate([beats, [chroma.shape[1]]])
    means = np.stack([chroma[:, a:b].mean(axis=1) if b > a else chroma[:, a] for a, b in pairwise(edges)])
    norms = np.linalg.norm(means, axis=1) + 1e-12
    similarity = np.sum(means[1:] * means[:-1], axis=1) / (norms[1:] * norms[:-1])
    change = np.zeros(beats.size)
    change[1:] = 1.0 - similarity
    return change


def _standardise(values: np.ndarray) -> np.ndarray:
    spread = values.std()
    return (values - values.mean()) / spread if spread > 0 else np.zeros_like(values)
