"""Beat tracker, tempo fit and downbeats on envelopes whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.audio.beats import (
    estimate_beats_per_bar,
    estimate_downbeats,
    estimate_period_frames,
    fit_tempo_bpm,
    track_beats,
)


def _pulse_envelope(
    period_frames: float, n_frames: int, first: float, rng: np.random.Generator
) -> np.ndarray:
    """An onset envelope with a 5 dB spike every ``period_frames`` over weak random onsets."""
    envelope = rng.uniform(0.0, 0.5, n_frames)
    spikes = np.rint(np.arange(first, n_frames, period_frames)).astype(int)
    envelope[spikes] += 5.0
    return envelope


@pytest.mark.parametrize("bpm", [70.0, 97.0, 120.0, 144.0, 175.0])
def test_period_keeps_its_fraction(bpm: float, rng: np.random.Generator) -> None:
    period = 30 * 60 / bpm
    envelope = _pulse_envelope(period, 1800, 7.0, rng)
    assert estimate_period_frames(envelope, fps=30) == pytest.approx(period, rel=0.02)


def test_tracker_follows_a_fractional_period_without_drift(rng: np.random.Generator) -> None:
    period = 30 * 60 / 97.0  # 18.56 frames: rounding it to 19 would drift a frame every two beats
    envelope = _pulse_envelope(period, 1800, 4.0, rng)
    beats, period_bpm = track_beats(envelope, fps=30)
    spikes = np.rint(np.arange(4.0, 1800, period)).astype(int)
    assert period_bpm == pytest.approx(97.0, rel=0.02)
    assert np.array_equal(beats, spikes)


def test_no_beats_in_a_flat_or_featureless_envelope(rng: np.random.Generator) -> None:
    assert track_beats(np.zeros(600), fps=30)[0].size == 0
    jitter = rng.uniform(0.0, 1e-3, 600)  # a steady tone: numerical noise, far below a real onset
    assert track_beats(jitter, fps=30)[0].size == 0


def test_silence_around_the_music_has_no_beats(rng: np.random.Generator) -> None:
    envelope = np.zeros(1200)
    envelope[300:900] = _pulse_envelope(15.0, 600, 0.0, rng)
    beats, _ = track_beats(envelope, fps=30)
    assert beats.min() >= 300 and beats.max() < 900


def test_tempo_fit_counts_a_skipped_beat() -> None:
    times = np.arange(40) * 0.5 + 0.25
    gapped = np.delete(times, [10, 25])
    assert fit_tempo_bpm(gapped) == pytest.approx(120.0)
    assert fit_tempo_bpm(times[:1], fallback_bpm=99.0) == 99.0


def test_downbeats_follow_the_bass(rng: np.random.Generator) -> None:
    beats = np.arange(10, 1000, 15)
    bass = np.zeros(1000)
    bass[beats[2::4]] = 3.0  # a kick on every fourth beat, from the third
    chroma = rng.uniform(size=(1000, 12))
    assert np.array_equal(estimate_downbeats(beats, bass_onset=bass, chroma=chroma), beats[2::4])
    assert estimate_downbeats(beats[:7], bass_onset=bass, chroma=chroma).size == 0


@pytest.mark.parametrize("meter", [3, 4])
def test_meter_and_downbeats_follow_the_accent_period(meter: int, rng: np.random.Generator) -> None:
    beats = np.arange(7, 1200, 15)
    bass = rng.uniform(0.0, 0.3, 1200)
    bass[beats[1::meter]] += 3.0  # accents every ``meter`` beats from the second
    chroma = rng.uniform(size=(1200, 12))
    downbeats = estimate_downbeats(beats, bass_onset=bass, chroma=chroma, beats_per_bar=None)
    assert np.array_equal(downbeats, beats[1::meter])


def test_a_two_beat_pattern_stays_in_four(rng: np.random.Generator) -> None:
    accent = np.tile([2.0, -1.0], 40) + rng.normal(scale=0.2, size=80)  # kick on 1 and 3
    assert estimate_beats_per_bar(accent) == 4
    assert estimate_beats_per_bar(np.tile([2.0, -1.0, -1.0], 30)) == 3
    assert estimate_beats_per_bar(np.ones(5)) == 4  # too few beats to judge
