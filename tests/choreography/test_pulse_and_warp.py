"""Known answers for the pulse estimate and the beat warp."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.choreography.pulse import estimate_pulse
from choreo.choreography.warp import beat_warp
from choreo.errors import ParameterError
from choreo.metrics.beat_align import speed_minima


@pytest.mark.parametrize("period_s", [0.45, 0.6, 0.8])
def test_pulse_of_a_speed_curve_that_stops_on_every_beat(period_s: float) -> None:
    fps = 30.0
    t = np.arange(int(12 * fps)) / fps
    phase_s = 0.2
    speed = 1.0 - np.cos(2 * np.pi * (t - phase_s) / period_s)  # zero at phase + k * period
    pulse = estimate_pulse(speed, fps, speed_minima(speed, 1.0))
    assert pulse.period_s == pytest.approx(period_s, abs=0.5 / fps)
    grid = pulse.grid_s(12.0)
    assert (
        np.min(np.abs(grid[:, None] - (phase_s + period_s * np.arange(30))[None]), axis=1).max() < 1.5 / fps
    )


def test_pulse_needs_a_long_enough_clip() -> None:
    with pytest.raises(ParameterError, match="too short"):
        estimate_pulse(np.ones(30), 30.0, np.zeros(0, dtype=int))


def test_warp_maps_every_phrase_beat_onto_its_song_beat() -> None:
    phrase = np.array([0.0, 0.43, 0.97, 1.52, 2.0])
    song = np.array([10.0, 10.5, 11.02, 11.49, 12.0])
    warp = beat_warp(phrase, song)
    np.testing.assert_allclose(warp.phrase_time(song), phrase, atol=1e-12)


def test_warp_is_monotone_and_continuously_differentiable() -> None:
    phrase = np.array([0.0, 0.3, 1.1, 1.4, 2.6])
    song = np.array([0.0, 0.5, 1.0, 1.5, 2.0])
    warp = beat_warp(phrase, song)
    t = np.linspace(0.0, 2.0, 4001)
    mapped = warp.phrase_time(t)
    assert np.all(np.diff(mapped) > 0)
    slope = np.diff(mapped) / np.diff(t)
    # C1: the slope changes by a small amount between neighbouring samples everywhere, knots included
    assert np.abs(np.diff(slope)).max() < 0.05


def test_double_and_half_time_pin_every_common_beat() -> None:
    phrase = np.arange(9) * 0.3  # 8 phrase beats
    song = np.arange(5) * 0.55 + 3.0  # over 4 song beats: double time
    warp = beat_warp(phrase, song)
    np.testing.assert_allclose(warp.phrase_time(song), phrase[::2], atol=1e-12)
    half = beat_warp(phrase[:3], np.arange(5) * 0.3)  # 2 phrase beats over 4 song beats
    np.testing.assert_allclose(half.phrase_time(np.arange(5)[::2] * 0.3), phrase[:3], atol=1e-12)
    assert half.stretch == pytest.approx(2.0)


def test_warp_refuses_points_that_do_not_increase() -> None:
    with pytest.raises(ParameterError, match="increase"):
        beat_warp(np.array([0.0, 1.0, 0.9]), np.array([0.0, 1.0, 2.0]))


def test_only_the_marked_beats_and_both_ends_are_pinned() -> None:
    phrase = np.array([0.0, 0.4, 1.1, 1.5, 2.0])
    song = np.array([0.0, 0.5, 1.0, 1.5, 2.0])
    warp = beat_warp(phrase, song, pinned=np.array([False, True, False, False, False]))
    np.testing.assert_allclose(warp.song_s, [0.0, 0.5, 2.0])
    np.testing.assert_allclose(warp.phrase_time(warp.song_s), [0.0, 0.4, 2.0], atol=1e-12)
