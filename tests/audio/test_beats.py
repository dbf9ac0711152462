"""Beat decoding, sounding beats, tempo fit and downbeats on envelopes whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.audio import beat_pointer
from choreo.audio.beat_pointer import track_pointer_beats
from choreo.audio.beats import (
    estimate_beats_per_bar,
    estimate_downbeats,
    fit_tempo_bpm,
    keep_sounding_beats,
)


def _pulse_envelope(
    period_frames: float, n_frames: int, first: float, rng: np.random.Generator
) -> np.ndarray:
    """An onset envelope with a 5 dB spike every ``period_frames`` over weak random onsets."""
    envelope = rng.uniform(0.0, 0.5, n_frames)
    spikes = np.rint(np.arange(first, n_frames, period_frames)).astype(int)
    envelope[spikes] += 5.0
    return envelope


def _stepwise_viterbi(observation: np.ndarray, period: float) -> np.ndarray:
    """The beat-pointer model decoded the plain way: every state, one step at a time (the reference
    :func:`choreo.audio.beat_pointer.decode_beats` must agree with, step for step)."""
    frames_per_step = period / beat_pointer.STEPS_PER_BEAT
    steps = np.interp(
        np.arange(0.0, observation.size - 1, frames_per_step), np.arange(observation.size), observation
    )
    lo = max(2, int(np.floor(beat_pointer.STEPS_PER_BEAT / beat_pointer.TEMPO_SPAN)))
    periods = np.arange(lo, max(lo, int(np.ceil(beat_pointer.STEPS_PER_BEAT * beat_pointer.TEMPO_SPAN))) + 1)
    starts = np.concatenate([[0], np.cumsum(periods)[:-1]])
    ends = starts + periods - 1
    position = np.concatenate([np.arange(p) for p in periods])
    onset_positions = np.maximum(1, np.round(periods * beat_pointer.BEAT_FRACTION))
    in_beat = position < onset_positions[np.repeat(np.arange(periods.size), periods)]
    activation = np.clip(steps / max(float(np.percentile(steps, 95)), 1e-9), 0.0, 1.0) * 0.9 + 0.05
    log_beat, log_rest = np.log(activation), np.log((1 - activation) * 0.5 + 0.25)
    transition = -beat_pointer.TRANSITION_LAMBDA * np.abs(periods[None, :] / periods[:, None] - 1.0)
    transition -= np.log(np.exp(transition).sum(axis=1, keepdims=True))
    delta = np.full(int(periods.sum()), -np.log(periods.sum()))
    backlinks = np.empty((steps.size, periods.size), dtype=np.int64)
    for step in range(steps.size):
        shifted = np.empty_like(delta)
        shifted[1:] = delta[:-1]
        arriving = delta[ends][:, None] + transition
        backlinks[step] = np.argmax(arriving, axis=0)
        shifted[starts] = arriving.max(axis=0)
        delta = shifted + np.where(in_beat, log_beat[step], log_rest[step])
        delta -= delta.max()
    state = int(np.argmax(delta))
    tempo = int(np.searchsorted(starts, state, side="right") - 1)
    phase, beats = state - starts[tempo], []
    for step in range(steps.size - 1, -1, -1):
        if phase == 0:
            beats.append(step + int(np.argmax(steps[step : step + int(onset_positions[tempo])])))
            tempo = int(backlinks[step, tempo])
            phase = periods[tempo] - 1
        else:
            phase -= 1
    return np.asarray(beats[::-1], dtype=np.float64) * frames_per_step


@pytest.mark.parametrize("n_frames", [8, 30, 61, 400, 2000])
def test_the_block_decoding_is_the_stepwise_viterbi(n_frames: int, rng: np.random.Generator) -> None:
    # Steady, drifting and random envelopes, periods from fast to slow: the same beats, exactly.
    for period in (4.0, 13.4, 29.0):
        steady = _pulse_envelope(period, n_frames, 2.0, rng)
        drifting = _pulse_envelope(period * 1.2, n_frames + 40, 1.0, rng)[:n_frames]
        drifting[: n_frames // 2] = steady[: n_frames // 2]
        for envelope in (steady, drifting, rng.random(n_frames) ** 3):
            expected = _stepwise_viterbi(envelope, period)
            assert np.array_equal(beat_pointer.decode_beats(envelope, period), expected)
            assert expected.size > 0 or n_frames < 3 * period  # too short to hold a beat


def test_no_beats_where_nothing_sounds(rng: np.random.Generator) -> None:
    assert track_pointer_beats(np.zeros(600), fps=30)[0].size == 0
    jitter = rng.uniform(0.0, 1e-3, 600)  # a steady tone: numerical noise, far below a real onset
    assert keep_sounding_beats(np.arange(5, 600, 15), jitter).size == 0


def test_silence_around_the_music_has_no_beats(rng: np.random.Generator) -> None:
    envelope = np.zeros(1200)
    envelope[300:900] = _pulse_envelope(15.0, 600, 0.0, rng)
    decoded, _ = track_pointer_beats(envelope, fps=30)
    beats = keep_sounding_beats(np.rint(decoded).astype(np.int64), envelope)
    assert beats.min() >= 299 and beats.max() < 901
    assert beats.size >= 39  # the 40 spikes, give or take the first


def test_the_decoding_follows_a_tempo_jump(rng: np.random.Generator) -> None:
    first = np.arange(10.0, 900.0, 18.0)  # 100 BPM at 30 fps, then 140 BPM
    spikes = np.concatenate([first, np.arange(first[-1] + 12.857, 1800.0, 12.857)])
    envelope = rng.uniform(0.0, 0.5, 1800)
    envelope[np.rint(spikes).astype(int)] += 5.0
    decoded, _ = track_pointer_beats(envelope, fps=30)
    nearest = np.abs(decoded[:, None] - spikes[None, :]).min(axis=0)
    assert decoded.size == pytest.approx(spikes.size, abs=1)
    assert nearest.max() <= 1.0, f"a spike is {nearest.max():.1f} frames from its beat"


def test_tempo_fit_counts_a_skipped_beat() -> None:
    times = np.arange(40) * 0.5 + 0.25
    gapped = np.delete(times, [10, 25])
    assert fit_tempo_bpm(gapped) == pytest.approx(120.0)
    assert fit_tempo_bpm(times[:1], fallback_bpm=99.0) == 99.0


def test_downbeats_follow_the_bass_where_the_harmony_holds() -> None:
    beats = np.arange(10, 1000, 15)
    bass = np.zeros(1000)
    bass[beats[2::4]] = 3.0  # a kick on every fourth beat, from the third
    chroma = np.tile(np.linspace(0.1, 1.0, 12), (1000, 1))  # one held chord: no harmonic change
    assert np.array_equal(estimate_downbeats(beats, bass_onset=bass, chroma=chroma), beats[2::4])
    assert estimate_downbeats(beats[:7], bass_onset=bass, chroma=chroma).size == 0


def _chords_every(
    beats: np.ndarray, meter: int, first: int, n_frames: int, rng: np.random.Generator
) -> np.ndarray:
    """Chroma [frames, 12] holding a random chord from beat ``first`` for ``meter`` beats, then the next."""
    chords = rng.uniform(size=(beats.size // meter + 2, 12)) ** 4
    index = np.maximum(0, (np.searchsorted(beats, np.arange(n_frames), side="right") - 1 - first)) // meter
    return chords[index + (np.arange(n_frames) >= beats[first])] + rng.uniform(0.0, 0.05, (n_frames, 12))


def test_downbeats_follow_the_chord_changes_over_a_bass_that_peaks_on_four(rng: np.random.Generator) -> None:
    beats = np.arange(10, 1500, 15)
    bass = rng.uniform(1.0, 1.5, 1500)
    bass[beats[0::4]] += 1.0  # a walking bass whose biggest rise is the leap to its approach note on 4
    chroma = _chords_every(beats, 4, 1, 1500, rng)  # the chords change on the beat after
    assert np.array_equal(estimate_downbeats(beats, bass_onset=bass, chroma=chroma), beats[1::4])


@pytest.mark.parametrize("meter", [3, 4])
def test_meter_and_downbeats_follow_the_accent_period(meter: int, rng: np.random.Generator) -> None:
    beats = np.arange(7, 1200, 15)
    bass = rng.uniform(0.0, 0.3, 1200)
    bass[beats[1::meter]] += 3.0  # accents every ``meter`` beats from the second
    chroma = _chords_every(beats, meter, 1, 1200, rng)  # and chords that change there
    downbeats = estimate_downbeats(beats, bass_onset=bass, chroma=chroma, beats_per_bar=None)
    assert np.array_equal(downbeats, beats[1::meter])


def test_a_two_beat_pattern_stays_in_four(rng: np.random.Generator) -> None:
    accent = np.tile([2.0, -1.0], 40) + rng.normal(scale=0.2, size=80)  # kick on 1 and 3
    assert estimate_beats_per_bar({3: accent, 4: accent}) == 4
    waltz = np.tile([2.0, -1.0, -1.0], 30)
    assert estimate_beats_per_bar({3: waltz, 4: waltz}) == 3
    assert estimate_beats_per_bar({3: np.ones(5), 4: np.ones(5)}) == 4  # too few beats to judge
