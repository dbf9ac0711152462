"""Known answers for the pulse estimate and the beat warp."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.choreography.pulse import estimate_pulse
from choreo.choreography.warp import (
    AIRBORNE_STRETCH,
    FAST_BEAT_S,
    FAST_HIT_EASE,
    HIT_EASE,
    STOP_STRETCH_TOLERANCE,
    beat_warp,
    limit_airborne_stretch,
)
from choreo.errors import ParameterError
from choreo.motion.stops import speed_minima


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


def test_an_eased_warp_pins_only_beats_with_a_regular_stretch_and_both_ends() -> None:
    phrase = np.array([0.0, 0.5, 0.7, 1.5, 2.0])  # the beat at 0.7 would play 0.5 s of song in 0.2 s
    song = np.array([0.0, 0.5, 1.0, 1.5, 2.0])
    warp = beat_warp(phrase, song, eased=True)
    np.testing.assert_allclose(warp.song_s, [0.0, 0.5, 1.5, 2.0])
    np.testing.assert_allclose(warp.phrase_time(warp.song_s), [0.0, 0.5, 1.5, 2.0], atol=1e-12)
    plain = beat_warp(phrase, song)  # not eased: every common beat is pinned, however irregular
    np.testing.assert_allclose(plain.song_s, song)


def test_a_hit_off_its_beat_is_warped_onto_it_within_the_stretch_bound() -> None:
    """A phrase whose second hit comes 15 % of a beat late: the eased warp moves it onto the song beat,
    and the local stretch stays within the bound that made it pinned."""
    phrase = np.array([0.0, 0.5, 1.075, 1.5, 2.0])  # hits at its keys; the third 75 ms late
    song = np.array([0.0, 0.5, 1.0, 1.5, 2.0])
    warp = beat_warp(phrase, song, eased=True)
    np.testing.assert_allclose(warp.phrase_time(song), phrase, atol=1e-12)  # every hit on its beat
    stretch = np.diff(warp.song_s) / np.diff(warp.phrase_s)
    assert np.all((stretch >= 1 / STOP_STRETCH_TOLERANCE) & (stretch <= STOP_STRETCH_TOLERANCE))
    late = np.array([0.0, 0.5, 1.25, 1.5, 2.0])  # half a beat late: beyond the bound, let go
    assert 1.0 not in beat_warp(late, song, eased=True).song_s


def test_the_warp_slows_into_each_pinned_beat_and_stays_monotone_and_c1() -> None:
    phrase = np.array([0.0, 0.46, 1.0, 1.55, 2.0])
    song = np.array([0.0, 0.5, 1.0, 1.5, 2.0])
    warp = beat_warp(phrase, song, eased=True)
    np.testing.assert_allclose(warp.song_s, song)
    t = np.linspace(0.0, 2.0, 4001)
    speed = np.diff(warp.phrase_time(t)) / np.diff(t)  # phrase seconds played per song second
    assert np.all(speed > 0)
    assert np.abs(np.diff(speed)).max() < 0.05  # C1 across the knots
    for knot in (0.5, 1.0, 1.5):  # the playback speed is lowest at the beat within 0.15 s either side
        near = np.abs(t[:-1] - knot) < 0.15
        assert abs(t[:-1][near][np.argmin(speed[near])] - knot) < 2e-3
        assert speed[near].min() < HIT_EASE * 1.3 * speed[near].max()


def test_a_shallow_stop_lands_on_its_song_beat_only_when_eased_into() -> None:
    """A dancer slows by 3 % at each stop: the warp's speed changes decide where the slowest moment lands."""
    fps = 30
    phrase = np.array([0.0, 0.48, 1.0, 1.53, 2.0, 2.48, 3.0])  # stops at slightly irregular beats
    song = np.arange(7) * 0.5
    t = np.arange(-1.0, 4.0, 1 / fps)

    def kinematic_beats_s(eased: bool) -> np.ndarray:
        warp = beat_warp(phrase, song, eased=eased)
        tau = warp.phrase_time(t)
        dancer = 1.0 - 0.03 * np.exp(-((tau[:, None] - phrase[None, :]) ** 2) / (2 * 0.15**2)).sum(axis=1)
        return t[speed_minima(dancer * np.gradient(tau, t), 5.0)]

    def hits(beats: np.ndarray) -> int:
        return int(sum(np.min(np.abs(beats - b)) <= 2.5 / fps for b in song[1:-1]))

    assert hits(kinematic_beats_s(True)) >= 4
    assert hits(kinematic_beats_s(False)) <= 1


def _stretch_along(warp, song_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Phrase times and the local stretch (song seconds per phrase second) at ``song_s``."""
    phrase_s = warp.phrase_time(song_s)
    return phrase_s, np.diff(song_s) / np.diff(phrase_s)


@pytest.mark.parametrize("tempo", [1.25, 0.8])
def test_a_flight_keeps_its_own_time_and_the_ground_takes_the_stretch(tempo: float) -> None:
    fps = 30
    phrase = np.arange(5) * 0.6  # beats at frames 0, 18, 36, 54, 72
    song = 10.0 + np.arange(5) * 0.6 * tempo
    airborne = np.zeros(73, dtype=bool)
    airborne[30:42] = True  # a jump from 1.0 s to 1.37 s, across the beat at 1.2 s
    plain = beat_warp(phrase, song)
    warp = limit_airborne_stretch(plain, airborne, fps)
    t = np.linspace(song[0], song[-1], 40001)
    mid = 0.5 * (t[1:] + t[:-1])
    in_air = lambda p: (p >= 30 / fps) & (p <= 41 / fps)  # noqa: E731
    plain_p, plain_stretch = _stretch_along(plain, t)
    assert plain_stretch[in_air(plain.phrase_time(mid))].min() == pytest.approx(tempo, abs=1e-6)
    mapped, stretch = _stretch_along(warp, t)
    air = in_air(warp.phrase_time(mid))
    lo, hi = AIRBORNE_STRETCH
    assert lo - 1e-4 <= stretch[air].min() and stretch[air].max() <= hi + 1e-4  # a sample straddles each edge
    # the stretch went to the ground: beyond the plain warp's when slowing down, under it when speeding up
    ground = stretch[~air]
    assert (ground.max() > tempo + 0.05) if tempo > 1 else (ground.min() < tempo - 0.05)
    # both ends and the beats on the ground stay pinned (the one in the air is let go), monotone and C1
    ground_beats = [0, 1, 3, 4]
    np.testing.assert_allclose(warp.phrase_time(song[ground_beats]), phrase[ground_beats], atol=1e-9)
    assert np.all(np.diff(mapped) > 0)
    assert np.abs(np.diff(np.diff(mapped) / np.diff(t))).max() < 0.01


def test_a_warp_without_a_stretched_flight_is_left_alone() -> None:
    phrase = np.arange(5) * 0.5
    song = np.arange(5) * 0.52  # stretch 1.04: within the bounds
    warp = beat_warp(phrase, song)
    airborne = np.zeros(61, dtype=bool)
    airborne[20:36] = True
    assert limit_airborne_stretch(warp, airborne, 30) is warp
    assert limit_airborne_stretch(beat_warp(phrase, song * 1.2), np.zeros(61, dtype=bool), 30).slopes is None


def test_a_flight_the_ground_cannot_absorb_is_stretched_as_little_as_it_can() -> None:
    phrase = np.arange(5) * 0.5
    song = np.arange(5) * 0.625
    airborne = np.zeros(61, dtype=bool)
    airborne[3:58] = True  # nearly all of it in the air: 0.2 s of ground cannot take 0.45 s of stretch
    warp = limit_airborne_stretch(beat_warp(phrase, song), airborne, 30)
    np.testing.assert_allclose(warp.phrase_time(song[[0, -1]]), phrase[[0, -1]], atol=1e-9)
    t = np.linspace(0.0, song[-1], 20001)
    mapped, stretch = _stretch_along(warp, t)
    assert np.all(np.diff(mapped) > 0)
    in_air = (mapped[1:] >= 3 / 30) & (mapped[1:] <= 57 / 30)
    assert AIRBORNE_STRETCH[1] < stretch[in_air].max() < 1.23  # the ground took its most, the flight the rest
    assert stretch[~in_air].max() > 1.5


def test_a_fast_song_is_hit_on_every_other_beat_and_played_through_the_beats_between() -> None:
    """140 BPM: the playback slows to its lowest at beats 0, 2, 4 ... of the segment (to about
    FAST_HIT_EASE of the stretch's speed), keeps its speed through beats 1, 3 ... which stay pinned,
    and stays monotone and C1 with its peak within 1.3 times the stretch's."""
    period = 60.0 / 140.0
    assert period < FAST_BEAT_S
    song = np.arange(9) * period
    phrase = np.arange(9) * 0.45  # the phrase is slowed by period / 0.45 throughout
    warp = beat_warp(phrase, song, eased=True)
    np.testing.assert_allclose(warp.phrase_time(song), phrase, atol=1e-12)  # every beat still pinned
    t = np.linspace(0.0, song[-1], 8001)
    speed = np.diff(warp.phrase_time(t)) / np.diff(t) / (0.45 / period)  # 1: the stretch's speed
    assert np.all(speed > 0)
    assert np.abs(np.diff(speed)).max() < 0.01  # C1
    assert speed.max() < 1.3
    for k in range(1, 8):
        near = np.abs(t[:-1] - song[k]) < 0.3 * period
        if k % 2 == 0:
            assert abs(t[:-1][near][np.argmin(speed[near])] - song[k]) < 2e-3
            assert speed[near].min() < 1.1 * FAST_HIT_EASE
        else:
            assert speed[near].min() > 0.9


def test_a_slower_song_is_eased_on_every_beat() -> None:
    period = 1.01 * FAST_BEAT_S
    song = np.arange(5) * period
    warp = beat_warp(np.arange(5) * 0.5, song, eased=True)
    t = np.linspace(0.0, song[-1], 4001)
    speed = np.diff(warp.phrase_time(t)) / np.diff(t) / (0.5 / period)
    for k in range(1, 4):
        near = np.abs(t[:-1] - song[k]) < 0.3 * period
        assert abs(t[:-1][near][np.argmin(speed[near])] - song[k]) < 2e-3
        assert speed[near].min() < 1.1 * HIT_EASE


def test_half_time_on_a_fast_song_is_eased_as_a_slower_song_is() -> None:
    """163 BPM danced in half time: the pinned beats are 0.74 s apart, so each is eased at HIT_EASE."""
    period = 60.0 / 163.0
    song = np.arange(9) * period
    warp = beat_warp(np.arange(5) * 0.7, song, eased=True)  # 4 phrase beats over 8 song beats
    np.testing.assert_allclose(warp.song_s, song[::2])
    t = np.linspace(0.0, song[-1], 4001)
    speed = np.diff(warp.phrase_time(t)) / np.diff(t) / (0.7 / (2 * period))
    for k in (2, 4, 6):
        near = np.abs(t[:-1] - song[k]) < 0.3 * period
        assert HIT_EASE * 0.9 < speed[near].min() < HIT_EASE * 1.1
