"""Kinematic beats and the beat-retiming warp on motions whose beats are known."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.metrics.beat_align import beat_align_score
from choreo.mocap.beats import kinematic_beats
from choreo.mocap.sampling import sample_at
from choreo.mocap.timewarp import MAX_STRETCH, MIN_STRETCH, fit_warp
from choreo.motion.kinematics import joint_positions
from choreo.motion.stops import mean_joint_speeds, speed_minima
from tests.mocap.motions import stopping_motion


def test_kinematic_beats_are_the_stops(rng: np.random.Generator) -> None:
    beats_s = np.cumsum(rng.uniform(0.4, 0.7, size=12))
    motion = stopping_motion(beats_s, duration_s=float(beats_s[-1] + 0.5), fps=60)
    found = kinematic_beats(motion, sigma_frames=5) / motion.fps
    assert found.size == beats_s.size
    # smoothing shifts a minimum between unequal neighbours a little: within the metric's 3-frame sigma
    np.testing.assert_allclose(found, beats_s, atol=3 / motion.fps)


def test_speed_is_mean_joint_speed_in_metres_per_second() -> None:
    motion = stopping_motion(np.array([1.0]), duration_s=2.0, fps=30)
    speed = mean_joint_speeds(joint_positions(motion), motion.fps)
    assert speed.shape == (motion.n_frames - 1,)
    # every joint moves with the root here, at sin^2 peak speed 1 m/s
    assert speed.max() == pytest.approx(1.0, abs=0.01)


def test_speed_minima_rejects_bad_input() -> None:
    with pytest.raises(ParameterError, match="sigma_frames"):
        speed_minima(np.ones(10), -1.0)
    with pytest.raises(ParameterError, match="1-D"):
        speed_minima(np.ones((3, 3)), 1.0)


def _irregular_case(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    # motion beats every ~0.5 s with jitter; music beats at 112 BPM from 1 s on
    motion_beats = np.cumsum(rng.uniform(0.45, 0.6, size=20))
    music_beats = 1.0 + np.arange(40) * 60.0 / 112.0
    return motion_beats, music_beats, float(motion_beats[-1] + 0.4)


def test_warp_is_monotonic_and_within_stretch_bounds(rng: np.random.Generator) -> None:
    motion_beats, music_beats, duration_s = _irregular_case(rng)
    warp = fit_warp(motion_beats, music_beats, duration_s)
    assert warp is not None
    assert warp.music_s.size >= 15  # most beats matched
    stretch = 1.0 / warp.slopes()
    assert np.all(stretch >= MIN_STRETCH - 1e-9) and np.all(stretch <= MAX_STRETCH + 1e-9)
    u = np.linspace(warp.start_s, warp.end_s, 2000)
    s = warp.motion_time(u)
    assert np.all(np.diff(s) >= 0)
    assert s[0] == pytest.approx(0.0) and s[-1] == pytest.approx(duration_s)
    # anchors: each matched music beat shows the motion at its kinematic beat
    np.testing.assert_allclose(warp.motion_time(warp.music_s), warp.motion_s)
    assert set(np.round(warp.motion_s, 9)) <= set(np.round(motion_beats, 9))
    assert set(np.round(warp.music_s, 9)) <= set(np.round(music_beats, 9))


def test_warp_lands_kinematic_beats_on_music_beats(rng: np.random.Generator) -> None:
    motion_beats, music_beats, duration_s = _irregular_case(rng)
    fps = 60
    motion = stopping_motion(motion_beats, duration_s, fps)
    warp = fit_warp(motion_beats, music_beats, duration_s)
    first = int(np.ceil(warp.start_s * fps))
    last = int(np.floor(warp.end_s * fps))
    warped = sample_at(motion, warp.motion_time(np.arange(first, last + 1) / fps), fps)
    kin_s = (first + kinematic_beats(warped)) / fps
    for beat in warp.music_s:
        assert np.min(np.abs(kin_s - beat)) <= 3 / fps
    covered = music_beats[(music_beats >= first / fps) & (music_beats <= last / fps)]
    before = beat_align_score(joint_positions(motion), covered - first / fps, fps=fps)
    after = beat_align_score(joint_positions(warped), covered - first / fps, fps=fps)
    assert after > 0.8 and after > before + 0.2


def test_warp_respects_the_earliest_start() -> None:
    warp = fit_warp(np.array([0.5, 1.0, 1.5]), np.array([0.2, 0.7, 1.2, 1.7, 2.2]), 2.0, earliest_start_s=0.1)
    assert warp is not None and warp.start_s >= 0.1
    assert fit_warp(np.array([5.0]), np.array([1.0]), 6.0) is None  # would start before 0 s
    assert fit_warp(np.array([]), np.array([1.0]), 2.0) is None


def test_warp_rejects_bad_bounds() -> None:
    with pytest.raises(ParameterError, match="stretch"):
        fit_warp(np.array([1.0]), np.array([1.0]), 2.0, min_stretch=1.2, max_stretch=1.5)
