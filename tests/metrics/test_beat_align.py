"""Beat alignment: stopping on every beat scores near 1, beats elsewhere score low, fps matters."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.metrics.beat_align import beat_align_score, kinematic_beats


def _swing(n_frames: int, period_frames: float, offset_frames: float = 0.0) -> np.ndarray:
    """All joints swing back and forth, reversing (speed 0) every ``period_frames`` from the offset."""
    t = np.arange(n_frames, dtype=np.float64)
    x = 0.3 * np.cos(np.pi * (t - offset_frames) / period_frames)
    pos = np.zeros((n_frames, 24, 3))
    pos[..., 0] = x[:, None]
    pos[..., 1] = np.linspace(0.0, 1.6, 24)
    return pos


def test_motion_stopping_on_every_beat_scores_near_one() -> None:
    fps = 30.0
    positions = _swing(900, period_frames=15, offset_frames=0.3)  # 120 BPM, stops 10 ms after each beat
    beats_s = np.arange(1, 59) * 0.5
    assert beat_align_score(positions, beats_s, fps=fps) > 0.9
    kin = kinematic_beats(positions)
    assert np.all(np.abs(np.diff(kin) - 15) <= 1)


def test_beats_off_the_stops_score_low(rng: np.random.Generator) -> None:
    fps = 30.0
    sparse = _swing(1800, period_frames=60)  # stops every 2 s
    random_beats_s = np.sort(rng.uniform(1.0, 59.0, size=100))
    assert beat_align_score(sparse, random_beats_s, fps=fps) < 0.3
    anti_phase_s = (np.arange(1, 29) * 60 + 30) / fps  # every beat half-way between two stops
    assert beat_align_score(sparse, anti_phase_s, fps=fps) < 0.01


def test_score_depends_on_fps() -> None:
    # The same 0.1 s lag is 3 frames at 30 fps and 6 frames at 60 fps: the tolerance is in frames.
    beats_s = np.arange(2, 28) * 1.0
    at_30 = beat_align_score(_swing(900, 30, offset_frames=3 + 0.3), beats_s, fps=30.0)
    at_60 = beat_align_score(_swing(1800, 60, offset_frames=6 + 0.3), beats_s, fps=60.0)
    assert at_30 == pytest.approx(np.exp(-9 / 18), abs=0.06)
    assert at_60 == pytest.approx(np.exp(-36 / 18), abs=0.06)


def test_still_motion_has_no_kinematic_beats_and_scores_zero() -> None:
    positions = np.zeros((100, 24, 3))
    assert kinematic_beats(positions).size == 0
    assert beat_align_score(positions, [1.0, 2.0], fps=30.0) == 0.0


def test_bad_input_is_named() -> None:
    with pytest.raises(ParameterError, match="no music beat"):
        beat_align_score(_swing(30, 15), [5.0], fps=30.0)
    with pytest.raises(ParameterError, match="fps"):
        beat_align_score(_swing(30, 15), [0.5], fps=0.0)
    with pytest.raises(ParameterError, match=r"\[frames, joints, 3\]"):
        beat_align_score(np.zeros((30, 72)), [0.5], fps=30.0)
    with pytest.raises(ParameterError, match="NaN"):
        beat_align_score(np.full((30, 24, 3), np.nan), [0.5], fps=30.0)
