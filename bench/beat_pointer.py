"""A candidate beat and downbeat tracker: multi-band spectral flux, a comb tempogram, a beat-pointer HMM.

Research code for issue 20, kept in bench/ until the beat-truth benchmark
(``bench/beats.py``) says it should replace :mod:`choreo.audio.beats`. A chain
of small steps, each a function that can be tested and swapped alone:

1. :func:`onset_envelopes` - one STFT (1024-sample Hann window, hop
   :data:`HOP`, at the product's decoding rate 15360 Hz: 60 frames a second),
   a log-magnitude filterbank of :data:`N_BANDS` log-spaced bands, and the
   positive rise of each band over the maximum of its neighbours a frame
   before (SuperFlux-style, so vibrato and sustained notes do not fire). Each
   band's flux is divided by its own running level (adaptive whitening) so a
   quiet hi-hat counts beside a loud bass. Returns the broadband envelope and
   a low-band (kick and bass) one, and the chroma for harmonic change.
   The observation of the steps below is the broadband envelope plus
   :data:`LOW_WEIGHT` times the low-band one (kick and bass mark the beat
   more often than the off-beat).
2. :func:`estimate_tempo` - the global beat period: the autocorrelation of
   the envelope summed over the lag and its multiples (a comb, so the beat
   level collects its bar and subdivision evidence) under a log-normal prior
   (:data:`PRIOR_BPM`, :data:`PRIOR_OCTAVES`).
3. :func:`decode_beats` - a beat-pointer hidden Markov model in the manner of
   Whiteley, Cemgil and Godsill's bar pointer and Krebs, Böck and Widmer's
   efficient state space: a state is (beat period in frames, position in the
   beat); the position advances one frame a frame; at the end of a beat the
   period may change, at a cost growing with the tempo ratio. Observation: the
   beat's first frames expect onset, the rest do not. The Viterbi path gives
   the beats, so tempo changes and ramps are followed. Periods are limited to
   a band around the global tempo (:data:`TEMPO_SPAN`).
   If the onset at the midpoints between the decoded beats is over
   :data:`DOUBLE_RATIO` of that at the beats (:func:`midpoint_ratio`), the
   song is decoded again at double tempo (fast songs whose comb peak fell on
   the half tempo).
4. :func:`refine_times` - each beat moved to the sub-frame peak of the
   envelope near it (parabolic interpolation within a frame).
5. :func:`estimate_downbeats` - the meter (3 or 4) and bar phase whose
   beats carry the most low-band onset and harmonic change.

:func:`track_song` runs the chain on a file (decoding with :func:`choreo.audio.load_audio`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.ndimage import maximum_filter1d, uniform_filter1d

from choreo.audio import load_audio
from choreo.audio.filters import chroma_filterbank, hann_window

__all__ = [
    "BeatTrack",
    "decode_beats",
    "estimate_downbeats",
    "estimate_tempo",
    "onset_envelopes",
    "refine_times",
    "track_song",
]

SR = 15360
"""Decoding rate: the product's (``feature_sr(30)``), so the product's decode can be shared."""

N_FFT = 1024
HOP = 256
FPS = SR / HOP
"""60 frames a second."""

N_BANDS = 24
BAND_RANGE_HZ = (30.0, 7000.0)
LOW_BAND_HZ = 200.0
"""Bands whose centre is under this make the low-band (kick and bass) envelope."""

WHITEN_S = 3.0
"""Each band's flux is divided by its mean over this window (plus a floor): adaptive whitening."""

PRIOR_BPM = 110.0
PRIOR_OCTAVES = 1.0
"""Log-normal tempo prior: centre and width (standard deviation in octaves)."""

COMB_WEIGHTS = ((1, 1.0), (2, 0.5), (3, 0.33), (4, 0.25))
"""Autocorrelation at the lag and its multiples, weighted: the beat collects its bars' evidence."""

SUBDIVISION_WEIGHT = 0.5
"""... and at half or a third of the lag (the larger): the beat's eighths or triplets."""

LOW_WEIGHT = 1.0
"""Weight of the low-band envelope added to the broadband one for the HMM: kick and bass mark the beat."""

DOUBLE_RATIO = 0.8
"""Where the midpoints between beats carry this share of the beats' onset, the beat is at double tempo."""

TEMPO_RANGE_BPM = (50.0, 220.0)
TEMPO_SPAN = 1.6
"""The HMM's periods span the global tempo divided and multiplied by this."""

TRANSITION_LAMBDA = 100.0
"""Cost of a tempo change at a beat boundary: ``exp(-lambda * |ratio - 1|)``."""

BEAT_FRACTION = 1 / 8
"""The first eighth of a beat's positions expect an onset."""

METERS = (3, 4)
THREE_MARGIN = 1.25


@dataclass(frozen=True)
class BeatTrack:
    """Beats and downbeats of a song, in seconds, its tempo and its meter."""

    beat_times: np.ndarray
    downbeat_times: np.ndarray
    tempo_bpm: float
    beats_per_bar: int


def _log_bands(n_fft: int, sr: int) -> tuple[np.ndarray, np.ndarray]:
    """Triangular filters on log-spaced centres [bands, bins] and the centres in Hz."""
    freqs = np.fft.rfftfreq(n_fft, 1.0 / sr)
    edges = np.geomspace(BAND_RANGE_HZ[0], BAND_RANGE_HZ[1], N_BANDS + 2)
    bank = np.zeros((N_BANDS, freqs.size), dtype=np.float32)
    for band in range(N_BANDS):
        low, centre, high = edges[band : band + 3]
        rising = (freqs - low) / (centre - low)
        falling = (high - freqs) / (high - centre)
        bank[band] = np.maximum(0.0, np.minimum(rising, falling))
        if not bank[band].any():  # narrower than a bin: take the nearest bin
            bank[band, int(np.argmin(np.abs(freqs - centre)))] = 1.0
    return bank, edges[1:-1]


def onset_envelopes(y: np.ndarray, *, sr: int = SR) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Broadband and low-band onset envelopes [frames] and chroma [frames, 12] of mono audio.

    Frame ``k`` is centred on sample ``k * HOP``; the flux of frame ``k`` is
    the rise from ``k - 1`` to ``k``, which puts a sharp onset on the frame
    whose window centre is nearest after it.
    """
    pad = N_FFT // 2
    padded = np.concatenate([np.zeros(pad, np.float32), y.astype(np.float32), np.zeros(pad, np.float32)])
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP]
    spectrum = np.abs(np.fft.rfft(frames * hann_window(N_FFT), axis=1)).astype(np.float32)
    bank, centres = _log_bands(N_FFT, sr)
    bands = np.log1p(100.0 * spectrum @ bank.T)  # [frames, bands]
    previous = maximum_filter1d(bands, size=3, axis=1)
    flux = np.zeros_like(bands)
    flux[1:] = np.maximum(0.0, bands[1:] - previous[:-1])
    level = uniform_filter1d(flux, size=int(WHITEN_S * FPS), axis=0) + 1e-3
    whitened = flux / (level + level.mean(axis=0, keepdims=True))
    low = centres < LOW_BAND_HZ
    chroma = (spectrum**2) @ chroma_filterbank(sr, N_FFT).T
    chroma /= np.maximum(chroma.max(axis=1, keepdims=True), 1e-9)
    return whitened.mean(axis=1), whitened[:, low].mean(axis=1), chroma


def estimate_tempo(envelope: np.ndarray, *, fps: float = FPS) -> float:
    """Global beat period in frames: the comb-summed, prior-weighted autocorrelation peak."""
    centred = envelope - envelope.mean()
    n = centred.size
    spectrum = np.fft.rfft(centred, 2 * n)
    acf = np.fft.irfft(spectrum * np.conj(spectrum))[:n]
    acf /= max(acf[0], 1e-12)
    min_lag = int(np.floor(60.0 * fps / TEMPO_RANGE_BPM[1]))
    max_lag = int(np.ceil(60.0 * fps / TEMPO_RANGE_BPM[0]))
    lags = np.arange(min_lag, min(max_lag, n // 4) + 1)

    def at(lag: np.ndarray) -> np.ndarray:
        below = np.clip(np.floor(lag).astype(np.int64), 0, n - 2)
        return np.maximum(acf[below], acf[below + 1])

    comb = np.zeros(lags.size)
    for multiple, weight in COMB_WEIGHTS:
        comb += weight * at(lags * multiple)
    comb += SUBDIVISION_WEIGHT * np.maximum(at(lags / 2), at(lags / 3))
    bpm = 60.0 * fps / lags
    prior = np.exp(-0.5 * (np.log2(bpm / PRIOR_BPM) / PRIOR_OCTAVES) ** 2)
    return float(lags[int(np.argmax(comb * prior))])


def midpoint_ratio(beat_frames: np.ndarray, observation: np.ndarray) -> float:
    """Median observation at the midpoints between beats over that at the beats (peaks within a frame).

    Near 1, the midpoints are as strong as the beats: the beat is probably at double tempo.
    """
    if beat_frames.size < 4:
        return 0.0
    peaks = maximum_filter1d(observation, size=3)
    middles = np.round((beat_frames[1:] + beat_frames[:-1]) / 2).astype(np.int64)
    return float(np.median(peaks[middles]) / max(np.median(peaks[beat_frames]), 1e-9))


def decode_beats(envelope: np.ndarray, period: float, *, fps: float = FPS) -> np.ndarray:
    """Beat frames: the Viterbi path of the beat-pointer HMM, periods within TEMPO_SPAN of ``period``."""
    lo = max(int(60.0 * fps / TEMPO_RANGE_BPM[1]), int(np.floor(period / TEMPO_SPAN)))
    hi = min(int(np.ceil(60.0 * fps / TEMPO_RANGE_BPM[0])), int(np.ceil(period * TEMPO_SPAN)))
    periods = np.arange(lo, hi + 1)
    starts = np.concatenate([[0], np.cumsum(periods)[:-1]])
    ends = starts + periods - 1
    n_states = int(periods.sum())
    position = np.concatenate([np.arange(p) for p in periods])
    in_beat = (
        position
        < np.maximum(1, np.round(periods * BEAT_FRACTION))[np.repeat(np.arange(periods.size), periods)]
    )
    # Observation: the envelope scaled into (0, 1) as a beat activation.
    activation = np.clip(envelope / max(np.percentile(envelope, 95), 1e-9), 0.0, 1.0) * 0.9 + 0.05
    log_beat, log_rest = np.log(activation), np.log((1 - activation) * 0.5 + 0.25)
    ratio = periods[None, :] / periods[:, None]
    log_transition = -TRANSITION_LAMBDA * np.abs(ratio - 1.0)  # [from, to]
    log_transition -= np.log(np.exp(log_transition).sum(axis=1, keepdims=True))
    delta = np.full(n_states, -np.log(n_states))
    backlinks = np.empty((envelope.size, periods.size), dtype=np.int16)
    shifted = np.empty(n_states)
    for frame in range(envelope.size):
        shifted[1:] = delta[:-1]
        arriving = delta[ends][:, None] + log_transition  # from the last position of each period
        best_from = np.argmax(arriving, axis=0)
        shifted[starts] = arriving[best_from, np.arange(periods.size)]
        backlinks[frame] = best_from
        delta = shifted + np.where(in_beat, log_beat[frame], log_rest[frame])
        delta -= delta.max()
    state = int(np.argmax(delta))
    tempo_index = int(np.searchsorted(starts, state, side="right") - 1)
    phase = state - starts[tempo_index]
    beats = []
    for frame in range(envelope.size - 1, -1, -1):
        if phase == 0:
            beats.append(frame)
            tempo_index = int(backlinks[frame, tempo_index])
            phase = periods[tempo_index] - 1
        else:
            phase -= 1
    return np.asarray(beats[::-1], dtype=np.int64)


def refine_times(beat_frames: np.ndarray, envelope: np.ndarray, *, fps: float = FPS) -> np.ndarray:
    """Beat times in seconds, each moved to the parabola peak of the envelope within a frame of it."""
    frames = beat_frames.astype(np.float64)
    inside = (beat_frames > 0) & (beat_frames < envelope.size - 1)
    k = beat_frames[inside]
    left, centre, right = envelope[k - 1], envelope[k], envelope[k + 1]
    curvature = left - 2 * centre + right
    shift = np.where(curvature < 0, 0.5 * (left - right) / np.where(curvature < 0, curvature, -1), 0.0)
    frames[inside] += np.clip(shift, -0.5, 0.5)
    return frames / fps


def estimate_downbeats(
    beat_frames: np.ndarray, *, low_envelope: np.ndarray, envelope: np.ndarray, chroma: np.ndarray
) -> tuple[np.ndarray, int]:
    """Indices into the beats of the bar starts, and the meter: the phase with the most accent."""
    if beat_frames.size < 8:
        return np.zeros(0, dtype=np.int64), 4
    near = maximum_filter1d(low_envelope, size=3)[beat_frames]
    edges = np.concatenate([beat_frames, [chroma.shape[0]]])
    means = np.stack(
        [chroma[a:b].mean(axis=0) if b > a else chroma[a] for a, b in zip(edges[:-1], edges[1:], strict=True)]
    )
    norm = np.linalg.norm(means, axis=1) + 1e-9
    change = np.zeros(beat_frames.size)
    change[1:] = 1.0 - np.sum(means[1:] * means[:-1], axis=1) / (norm[1:] * norm[:-1])
    accent = (
        _standard(near) + _standard(change) + 0.5 * _standard(maximum_filter1d(envelope, size=3)[beat_frames])
    )
    contrast = {m: max(accent[p::m].mean() for p in range(m)) - accent.mean() for m in METERS}
    meter = 3 if contrast[3] > THREE_MARGIN * max(contrast[4], 0.0) else 4
    phase = int(np.argmax([accent[p::meter].mean() for p in range(meter)]))
    return np.arange(phase, beat_frames.size, meter), meter


def _standard(values: np.ndarray) -> np.ndarray:
    spread = values.std()
    return (values - values.mean()) / spread if spread > 0 else np.zeros_like(values)


def track_song(path: Path) -> BeatTrack:
    """Decode ``path`` and run the whole chain."""
    y = load_audio(path, sr=SR)
    envelope, low, chroma = onset_envelopes(y)
    observation = envelope + LOW_WEIGHT * low
    period = estimate_tempo(observation)
    frames = decode_beats(observation, period)
    if midpoint_ratio(frames, observation) > DOUBLE_RATIO and 60.0 * FPS / (period / 2) <= TEMPO_RANGE_BPM[1]:
        period /= 2
        frames = decode_beats(observation, period)
    times = refine_times(frames, envelope)
    downbeats, meter = estimate_downbeats(frames, low_envelope=low, envelope=envelope, chroma=chroma)
    tempo = 60.0 / float(np.median(np.diff(times))) if times.size > 1 else 0.0
    return BeatTrack(times, times[downbeats], tempo, meter)
