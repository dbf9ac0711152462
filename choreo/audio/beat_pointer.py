"""Beats that follow tempo changes: a beat-pointer hidden Markov model on a whitened multi-band flux.

Chosen by the beat-truth benchmark (``bench/beats.py``, issue 20) over the
dynamic-programming tracker of :mod:`choreo.audio.beats`, whose single global
period cannot follow a ramp or a jump. Steps, each a function:

1. :func:`beat_observation` - the positive rise of every mel band over the
   maximum of its neighbours a frame before (SuperFlux-style, so vibrato and
   sustained notes do not fire), each band divided by its own running level
   (adaptive whitening: a quiet hi-hat counts beside a loud bass), averaged
   over all bands plus :data:`LOW_WEIGHT` times the bands under
   :data:`LOW_BAND_HZ` (kick and bass mark the beat more often than the
   off-beat). It reuses the features' mel spectrum: no second STFT.
2. :func:`estimate_period` - the global beat period: the autocorrelation
   summed over the lag and its multiples (a comb: the beat collects its bar
   and subdivision evidence) under a log-normal prior.
3. :func:`decode_beats` - the hidden Markov model in the manner of Whiteley,
   Cemgil and Godsill's bar pointer and Krebs, Böck and Widmer's state space:
   a state is (beat period, position in the beat); the position advances a
   step a step; at the end of a beat the period may change at a cost growing
   with the tempo ratio. The first :data:`BEAT_FRACTION` of a beat expects
   onset, the rest does not. The observation is resampled so that the global
   period is exactly :data:`STEPS_PER_BEAT` steps: a steady song needs no
   tempo change at all (a period of 13.4 frames would otherwise alternate
   between 13 and 14, paying for a change at every beat), and neighbouring
   periods differ by 4 %, not the 8 % of one frame at 180 BPM.
4. :func:`track_pointer_beats` - the chain, with a double-tempo check: where
   the midpoints between the decoded beats carry :data:`DOUBLE_RATIO` of the
   beats' onset, the song is decoded again at double tempo.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import maximum_filter1d, uniform_filter1d

from choreo.audio.filters import mel_centres_hz
from choreo.audio.onsets import ONSET_SHIFT_FRAMES

__all__ = [
    "beat_observation",
    "decode_beats",
    "estimate_period",
    "midpoint_ratio",
    "track_pointer_beats",
]

LOW_BAND_HZ = 200.0
"""Mel bands centred below this make the low-band (kick and bass) term of the observation."""

LOW_WEIGHT = 0.5
"""Weight of the low-band flux added to the broadband one (tuning half: 0.5 over 0, 0.25, 1 and 2)."""

WHITEN_S = 3.0
"""Each band's flux is divided by its mean over this window plus its song mean: adaptive whitening."""

PRIOR_BPM = 130.0
PRIOR_OCTAVES = 0.75
"""Log-normal tempo prior: centre and width (standard deviation in octaves).

Tuned on the truth set's tuning half (``bench/beats.py``): 110 BPM and one octave halved more fast songs.
"""

COMB_WEIGHTS = ((1, 1.0), (2, 0.5), (3, 0.33), (4, 0.25))
"""Autocorrelation at the lag and its multiples, weighted: the beat collects its bars' evidence."""

TEMPO_RANGE_BPM = (50.0, 220.0)
TEMPO_SPAN = 1.6
"""The model's periods span the global tempo divided and multiplied by this."""

TRANSITION_LAMBDA = 100.0
"""Cost of a tempo change at a beat boundary: ``exp(-lambda * |ratio - 1|)``.

Lower values let the beat wander on real recordings (a steady song's tempo fit and median interval
part by over 2 %); higher ones follow a ramp too late.
"""

BEAT_FRACTION = 1 / 8
"""The first eighth of a beat's positions expect an onset."""

STEPS_PER_BEAT = 24
"""Decoding steps in a beat of the global period (the observation linearly interpolated).

The cost is proportional; 24 scores as 32 did on the tuning half at two thirds of the CPU, 16 worse.
"""

LAG_STEP = 0.1
"""Resolution of the tempo estimate's lags, frames."""

DOUBLE_RATIO = 0.8
"""Where the midpoints between beats carry this share of the beats' onset, the beat is at double tempo."""


def beat_observation(log_mel: np.ndarray, *, sr: int, n_fft: int, fps: float) -> np.ndarray:
    """The beat observation [frames] of a log-mel spectrum [frames, bands] (dB), on frame times.

    ``sr`` and ``n_fft`` place the mel bands in Hz; frames are aligned as
    :func:`choreo.audio.onsets.onset_strength` aligns them (a rise is put on
    the frame nearest the onset).
    """
    bands = np.asarray(log_mel, dtype=np.float32)
    n_frames, n_bands = bands.shape
    flux = np.zeros_like(bands)
    if n_frames < 2:
        return np.zeros(n_frames)
    previous = maximum_filter1d(bands, size=3, axis=1)
    rise = np.maximum(0.0, bands[1:] - previous[:-1])
    lead = 1 + ONSET_SHIFT_FRAMES
    flux[lead:] = rise[: n_frames - lead]
    level = uniform_filter1d(flux, size=max(1, int(WHITEN_S * fps)), axis=0) + 1e-3
    whitened = flux / (level + level.mean(axis=0, keepdims=True))
    low = mel_centres_hz(sr, n_fft, n_bands) < LOW_BAND_HZ
    return whitened.mean(axis=1) + LOW_WEIGHT * whitened[:, low].mean(axis=1)


def estimate_period(observation: np.ndarray, *, fps: float) -> float:
    """Global beat period in frames: the comb-summed, prior-weighted autocorrelation peak."""
    centred = observation - observation.mean()
    n = centred.size
    spectrum = np.fft.rfft(centred, 2 * n)
    acf = np.fft.irfft(spectrum * np.conj(spectrum))[:n]
    acf /= max(acf[0], 1e-12)
    min_lag = max(2, int(np.floor(60.0 * fps / TEMPO_RANGE_BPM[1])))
    max_lag = int(np.ceil(60.0 * fps / TEMPO_RANGE_BPM[0]))
    lags = np.arange(min_lag, min(max_lag, n // 4) + LAG_STEP, LAG_STEP)
    if lags.size == 0:
        return 60.0 * fps / PRIOR_BPM

    def at(lag: np.ndarray) -> np.ndarray:
        return np.interp(lag, np.arange(n), acf)

    comb = np.zeros(lags.size)
    for multiple, weight in COMB_WEIGHTS:
        comb += weight * at(lags * multiple)
    bpm = 60.0 * fps / lags
    prior = np.exp(-0.5 * (np.log2(bpm / PRIOR_BPM) / PRIOR_OCTAVES) ** 2)
    return float(lags[int(np.argmax(comb * prior))])


def midpoint_ratio(beats: np.ndarray, observation: np.ndarray) -> float:
    """Median observation at the midpoints between beats over that at the beats (peaks within a frame).

    ``beats`` are (fractional) frames. Near 1, the midpoints are as strong as the beats: the beat is
    probably at double tempo.
    """
    if beats.size < 4:
        return 0.0
    peaks = maximum_filter1d(observation, size=3)
    at_beats = peaks[np.clip(np.round(beats).astype(np.int64), 0, observation.size - 1)]
    middles = np.clip(np.round((beats[1:] + beats[:-1]) / 2).astype(np.int64), 0, observation.size - 1)
    return float(np.median(peaks[middles]) / max(np.median(at_beats), 1e-9))


def decode_beats(observation: np.ndarray, period: float) -> np.ndarray:
    """Beat frames (fractional): the Viterbi path of the model, ``period`` frames a beat at the start.

    Periods lie within :data:`TEMPO_SPAN` of ``period``, in steps of ``period / STEPS_PER_BEAT`` frames.
    The decoding is :func:`_beat_starts`' (a beat-start recursion computed a block of steps at a time);
    the path is traced back from the most likely state at the last step.
    """
    frames_per_step = period / STEPS_PER_BEAT
    steps = np.interp(
        np.arange(0.0, observation.size - 1, frames_per_step), np.arange(observation.size), observation
    )
    step_period = STEPS_PER_BEAT
    lo = max(2, int(np.floor(step_period / TEMPO_SPAN)))
    hi = max(lo, int(np.ceil(step_period * TEMPO_SPAN)))
    periods = np.arange(lo, hi + 1)
    onset_positions = np.maximum(1, np.round(periods * BEAT_FRACTION)).astype(np.int64)
    activation = np.clip(steps / max(float(np.percentile(steps, 95)), 1e-9), 0.0, 1.0) * 0.9 + 0.05
    log_beat, log_rest = np.log(activation), np.log((1 - activation) * 0.5 + 0.25)
    ratio = periods[None, :] / periods[:, None]
    log_transition = -TRANSITION_LAMBDA * np.abs(ratio - 1.0)  # [from, to]
    log_transition -= np.log(np.exp(log_transition).sum(axis=1, keepdims=True))
    backlinks, final = _beat_starts(log_beat, log_rest, periods, onset_positions, log_transition)
    tempo_index, phase = divmod(int(np.argmax(final)), final.shape[1])  # the last step's best state
    beats = []
    start = steps.size - 1 - phase
    while start >= 0:  # from the last beat back, each beat's start step and the period it came from
        # The beat is where the observation peaks in the onset positions it starts (madmom's correction).
        width = int(onset_positions[tempo_index])
        beats.append(start + int(np.argmax(steps[start : start + width])))
        tempo_index = int(backlinks[start, tempo_index])
        start -= int(periods[tempo_index])
    return np.asarray(beats[::-1], dtype=np.float64) * frames_per_step


def _beat_starts(
    log_beat: np.ndarray,
    log_rest: np.ndarray,
    periods: np.ndarray,
    onset_positions: np.ndarray,
    log_transition: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The Viterbi recursion of the beat-pointer model, over beat starts rather than over every state.

    A state (period ``p``, position ``k``) is reached only from (``p``, ``k - 1``), so its best score is
    the best score of the beat's start ``k`` steps before plus the observation since: the first
    ``onset_positions[p]`` positions of a beat score ``log_beat``, the others ``log_rest`` (a difference
    of running sums). Only a start chooses: the best of the beats of every period ending a step before,
    each plus its tempo change (``log_transition [from, to]``). A beat ends at least ``periods[0]``
    steps after it starts, so the starts of that many steps depend only on earlier ones and are found
    together: one array operation a block of steps, not a loop over the steps. The scores are those of
    the step-by-step recursion up to rounding (they are not renormalised at every step, which shifts all
    states alike and so chooses nothing); the states before the first step are equally likely.

    Returns the backlinks ``[steps, periods]`` (the period index a beat starting there came from) and
    the score of every state at the last step, ``[periods, positions]`` (-inf past a period's end).
    """
    n_steps, n_periods = log_beat.size, periods.size
    lo, hi = int(periods[0]), int(periods[-1])
    columns = np.arange(n_periods)
    # Running sums over the steps before each index, held at the last one past the end.
    beat_sum = np.concatenate([[0.0], np.cumsum(log_beat), np.zeros(hi)])
    rest_sum = np.concatenate([[0.0], np.cumsum(log_rest), np.zeros(hi)])
    beat_sum[n_steps + 1 :], rest_sum[n_steps + 1 :] = beat_sum[n_steps], rest_sum[n_steps]
    # ``ending[t, q]`` + ``rest_sum[t]``: the score, a step before step t, of the beat of period index q
    # ending there, that is started at s = t - periods[q]; for s < 0 it began before the first step.
    ending = np.full((n_steps + hi + 1, n_periods), -np.inf)
    began = np.arange(hi)[:, None] - periods[None, :]  # s of the rows t < hi
    onset_end = np.maximum(began + onset_positions[None, :], 0)
    prior = -np.log(float(periods.sum()))
    ending[:hi] = np.where(began < 0, prior + beat_sum[onset_end] - rest_sum[onset_end], -np.inf)
    # The same array seen by start step: ``by_start[s, q]`` is ``ending[s + periods[q], q]``.
    item = ending.itemsize
    by_start = np.lib.stride_tricks.as_strided(
        ending[lo:], shape=(n_steps, n_periods), strides=(n_periods * item, (n_periods + 1) * item)
    )
    since = np.arange(n_steps)[:, None] + onset_positions[None, :]
    gain = beat_sum[since] - beat_sum[1 : n_steps + 1, None] - rest_sum[since]
    arrival = rest_sum[:n_steps] + log_beat
    into = np.ascontiguousarray(log_transition.T)  # [to, from]: the choice is along the last axis
    flat = np.arange(lo * n_periods)
    backlinks = np.empty((n_steps, n_periods), dtype=np.int16)
    start_scores = np.empty((n_steps, n_periods))
    for first in range(0, n_steps, lo):
        stop = min(first + lo, n_steps)
        arriving = (ending[first:stop, None, :] + into).reshape(-1, n_periods)  # [step and to, from]
        best = np.argmax(arriving, axis=1)
        backlinks[first:stop] = best.reshape(-1, n_periods)
        start_scores[first:stop] = arriving[flat[: best.size], best].reshape(-1, n_periods)
        start_scores[first:stop] += arrival[first:stop, None]
        by_start[first:stop] = start_scores[first:stop] + gain[first:stop]
    # Every state at the last step: (p, k) is the beat of period p that started k steps before it.
    position = np.arange(hi)
    began = n_steps - 1 - position[None, :]  # [1, positions]
    since = np.where(began >= 0, began + 1, 0)
    onset_end = np.clip(began + onset_positions[:, None], since, n_steps)  # [periods, positions]
    base = np.where(began >= 0, start_scores[np.maximum(began, 0), columns[:, None]], prior)
    final = base + beat_sum[onset_end] - beat_sum[since] + rest_sum[n_steps] - rest_sum[onset_end]
    final[position[None, :] >= periods[:, None]] = -np.inf
    return backlinks, final


def track_pointer_beats(observation: np.ndarray, *, fps: float) -> tuple[np.ndarray, float]:
    """Beat frames (fractional, increasing) of a beat observation, and the global tempo (BPM) the
    decoding centred on.

    The model puts beats everywhere, silence included: :func:`choreo.audio.beats.keep_sounding_beats`
    drops those. Empty (and 0) for an observation too short or flat to hold a beat.
    """
    values = np.asarray(observation, dtype=np.float64)
    if values.size < 8 or values.std() <= 0:
        return np.zeros(0), 0.0
    period = estimate_period(values, fps=fps)
    beats = decode_beats(values, period)
    if midpoint_ratio(beats, values) > DOUBLE_RATIO and 60.0 * fps / (period / 2) <= TEMPO_RANGE_BPM[1]:
        period /= 2
        beats = decode_beats(values, period)
    return beats, 60.0 * fps / period
