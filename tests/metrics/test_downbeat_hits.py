"""The downbeat hit measure on motions whose big moves are placed where we know."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.metrics.downbeat_hits import beat_hits, downbeat_hits, section_start_times
from choreo.motion import REST_PELVIS_HEIGHT_M, SMPL, Motion, joint_positions
from choreo.motion.stops import smoothed_speed

FPS = 30.0
BEAT_S = 0.6
BEATS = np.arange(1, 33) * BEAT_S  # 100 BPM (18 frames a beat), 8 bars of 4/4 from 0.6 s
DOWNBEATS = BEATS[::4]
LEFT_SHOULDER, RIGHT_SHOULDER = SMPL.index("left_shoulder"), SMPL.index("right_shoulder")


def _swings(amplitude_per_beat: np.ndarray) -> np.ndarray:
    """Both arms swing out over the half beat before each beat, stop on it, and swing back over the
    half beat after, as wide as that beat's amplitude."""
    frames = int((BEATS[-1] + BEAT_S) * FPS)
    t = np.arange(frames) / FPS
    angle = np.zeros(frames)
    for beat, amplitude in zip(BEATS, amplitude_per_beat, strict=True):
        inside = np.abs(t - beat) < BEAT_S / 2
        angle[inside] = amplitude * 0.5 * (1 + np.cos(2 * np.pi * (t[inside] - beat) / BEAT_S))
    rotations = np.zeros((frames, 24, 3))
    rotations[:, LEFT_SHOULDER, 2] = angle
    rotations[:, RIGHT_SHOULDER, 2] = -angle
    root = np.zeros((frames, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M
    return joint_positions(Motion(FPS, root, rotations))


def _accent_on(beat_in_bar: int, big: float = 1.2, small: float = 0.4) -> np.ndarray:
    amplitude = np.full(BEATS.size, small)
    amplitude[beat_in_bar::4] = big
    return amplitude


def test_big_moves_on_downbeats_score_above_one_and_above_the_shifted_control() -> None:
    found = downbeat_hits(_swings(_accent_on(0)), BEATS, DOWNBEATS, fps=FPS)
    assert found.on_downbeats is not None and found.shifted is not None
    # three times the swing, three times the speed: 3 / 1.5 on the downbeats, 1 / 1.5 after them
    assert found.on_downbeats == pytest.approx(2.0, abs=0.1)
    assert found.shifted == pytest.approx(2.0 / 3.0, abs=0.05)
    assert found.own_minus_shifted is not None and found.own_minus_shifted > 1.2


def test_a_dance_that_accents_another_beat_of_the_bar_fails() -> None:
    found = downbeat_hits(_swings(_accent_on(2)), BEATS, DOWNBEATS, fps=FPS)
    assert found.on_downbeats is not None and found.on_downbeats < 0.75
    assert found.own_minus_shifted is not None and abs(found.own_minus_shifted) < 0.1


def test_a_dance_that_ignores_the_bar_scores_about_one_and_no_contrast() -> None:
    amplitude = np.random.default_rng(0).uniform(0.4, 1.2, BEATS.size)
    amplitude[::4] = amplitude[1::4]  # no difference between downbeats and the beats after them
    found = downbeat_hits(_swings(amplitude), BEATS, DOWNBEATS, fps=FPS)
    assert found.own_minus_shifted is not None and abs(found.own_minus_shifted) < 0.05


def test_a_section_that_comes_in_with_a_big_move_scores_above_one() -> None:
    bar_starts = DOWNBEATS.copy()
    labels = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    starts = section_start_times(bar_starts, labels)
    np.testing.assert_allclose(starts, [DOWNBEATS[4]])
    amplitude = np.full(BEATS.size, 0.5)
    amplitude[16] = 1.5  # the downbeat of bar 4, where section 1 begins
    found = downbeat_hits(_swings(amplitude), BEATS, DOWNBEATS, fps=FPS, section_starts_s=starts)
    assert found.section_starts is not None and found.section_starts > 2.5  # 1.5 over a mean of about 0.53
    still_start = downbeat_hits(
        _swings(np.full(BEATS.size, 0.5)), BEATS, DOWNBEATS, fps=FPS, section_starts_s=starts
    )
    assert still_start.section_starts is not None and abs(still_start.section_starts - 1.0) < 0.05


def test_a_hit_is_the_speed_of_the_move_that_stops_on_the_beat_and_a_gap_does_not_widen_it() -> None:
    positions = _swings(_accent_on(0))
    hits = beat_hits(positions, BEATS, fps=FPS)
    speed = smoothed_speed(positions, FPS)
    at, half, quarter = int(BEATS[4] * FPS), int(BEAT_S * FPS / 2), int(BEAT_S * FPS / 4)
    expected = speed[at - half : at + 1].max() - speed[at - quarter : at + quarter + 1].min()
    assert hits[4] == pytest.approx(expected)
    assert hits[4] > 2.5 * hits[5]  # three times the swing, about three times the speed
    gapped = np.delete(BEATS, [9, 10, 11])  # a stretch without steady beats
    assert beat_hits(positions, gapped, fps=FPS)[9] == pytest.approx(hits[12])


def test_a_move_carrying_on_through_the_beat_is_no_hit() -> None:
    frames = int(10 * FPS)
    rotations = np.zeros((frames, 24, 3))
    rotations[:, LEFT_SHOULDER, 2] = np.linspace(0.0, 6.0, frames)  # an arm circling at constant speed
    root = np.zeros((frames, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M
    hits = beat_hits(joint_positions(Motion(FPS, root, rotations)), BEATS[BEATS < 9.0], fps=FPS)
    assert np.nanmax(hits) < 1e-6


def test_no_downbeats_inside_the_dance_gives_none() -> None:
    found = downbeat_hits(_swings(_accent_on(0)), BEATS, np.array([100.0]), fps=FPS)
    assert found.on_downbeats is None and found.own_minus_shifted is None and found.section_starts is None
