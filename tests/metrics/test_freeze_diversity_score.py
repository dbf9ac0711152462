"""Freeze ratio, diversity and the all-in-one score on constructed motions."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.metrics.diversity import kinetic_features, mean_pairwise_distance
from choreo.metrics.freeze import freeze_ratio
from choreo.metrics.score import score_motion
from choreo.motion import REST_PELVIS_HEIGHT_M, Motion

FPS = 30.0


def _swaying(duration_s: float, freq_hz: float = 1.3, amplitude_m: float = 0.2) -> np.ndarray:
    t = np.arange(int(duration_s * FPS)) / FPS
    positions = np.zeros((t.size, 24, 3))
    positions[..., 0] = amplitude_m * np.sin(2 * np.pi * freq_hz * t)[:, None]
    positions[..., 1] = np.linspace(0.0, 1.6, 24)
    return positions


def test_steady_motion_has_freeze_ratio_one() -> None:
    assert freeze_ratio(_swaying(180.0), fps=FPS) == pytest.approx(1.0, abs=0.01)


def test_pose_frozen_after_the_first_minute_has_freeze_ratio_zero() -> None:
    positions = _swaying(180.0)
    positions[int(60 * FPS) :] = positions[int(60 * FPS)]
    assert freeze_ratio(positions, fps=FPS) == pytest.approx(0.0, abs=1e-9)


def test_songs_under_two_minutes_have_no_freeze_ratio() -> None:
    assert freeze_ratio(_swaying(119.0), fps=FPS) is None
    assert freeze_ratio(_swaying(120.0), fps=FPS) == pytest.approx(1.0, abs=1e-6)  # as lively late as early
    with pytest.raises(ParameterError, match="window_s"):
        freeze_ratio(_swaying(130.0), fps=FPS, window_s=0.0)


def test_kinetic_features_of_a_steady_horizontal_glide() -> None:
    t = np.arange(30) / FPS
    positions = np.zeros((30, 24, 3))
    positions[..., 2] = (1.5 * t)[:, None]
    feats = kinetic_features(positions, fps=FPS).reshape(24, 3)
    np.testing.assert_allclose(feats[:, 0], 1.5**2)
    np.testing.assert_allclose(feats[:, 1:], 0.0, atol=1e-9)


def test_identical_copies_have_zero_diversity() -> None:
    feats = np.tile(kinetic_features(_swaying(10.0), fps=FPS), (4, 1))
    songs = ["a", "a", "b", "b"]
    assert mean_pairwise_distance(feats, songs, same_group=False) == 0.0
    assert mean_pairwise_distance(feats, songs, same_group=True) == 0.0


def test_different_dances_are_diverse_and_missing_pairs_give_none() -> None:
    feats = np.stack([kinetic_features(_swaying(10.0, freq_hz=f), fps=FPS) for f in (0.5, 1.0, 1.5, 2.0)])
    songs = ["a", "a", "b", "b"]
    between_songs = mean_pairwise_distance(feats, songs, same_group=False)
    between_seeds = mean_pairwise_distance(feats, songs, same_group=True)
    assert between_songs is not None and between_seeds is not None
    assert between_songs > between_seeds > 0.0  # songs a and b differ more than their seeds
    assert mean_pairwise_distance(feats, ["a", "b", "c", "d"], same_group=True) is None
    with pytest.raises(ParameterError, match="group labels"):
        mean_pairwise_distance(feats, ["a"], same_group=True)


def test_score_motion_gives_every_number() -> None:
    n_frames = int(130 * FPS)
    t = np.arange(n_frames) / FPS
    root = np.zeros((n_frames, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M + 0.03 * (1 - np.cos(2 * np.pi * t))  # bobs once per beat
    rotations = np.zeros((n_frames, 24, 3))
    rotations[:, 16, 2] = 0.5 * np.cos(np.pi * (t - 0.01))  # the arm turns back 10 ms after each beat
    scores = score_motion(Motion(FPS, root, rotations), np.arange(1, 129) * 1.0)
    row = scores.to_dict()
    assert set(row) == {
        "fps", "duration_s", "beat_align", "foot_skate", "foot_contact", "pfc", "jerk", "freeze_ratio",
        "limit_violations",
        "energy", "kinematic_beats_per_s", "pose_spread", "pose_spread_heading", "reach", "reach_forward",
        "reach_lateral", "reach_up",
    }  # fmt: skip
    assert row["fps"] == FPS and row["duration_s"] == pytest.approx(130.0)
    assert row["beat_align"] > 0.8  # the arm reverses and the body bottoms out on every beat
    assert row["foot_skate"] == 0.0 and row["limit_violations"] == 0
    assert row["freeze_ratio"] == pytest.approx(1.0, abs=0.02)
    assert scores.kinetic.shape == (72,)
    assert row["kinematic_beats_per_s"] == pytest.approx(1.0, abs=0.05)  # one pause per beat
    assert row["pose_spread"] > 0 and row["reach"] > 0.2  # one arm swings; both hang a forearm from the chest
