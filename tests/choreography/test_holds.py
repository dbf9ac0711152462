"""Holds on breaks: songs written to WAV with a silence between their beats, planned and guided whole."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from choreo.audio import feature_sr
from choreo.audio.structure import analyze_structure
from choreo.choreography.guide import build_guide
from choreo.choreography.holds import HOLD_EASE_S, hold_breaks
from choreo.choreography.library import PhraseLibrary, shipped_library
from choreo.choreography.planner import plan_dance
from choreo.contracts.plan import Plan
from choreo.errors import ParameterError
from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_quat, quat_multiply, quat_to_aa
from choreo.pipeline import prepare_song
from tests.audio.conftest import pop_bars

FPS = 30
SR = feature_sr(FPS)


@pytest.fixture(scope="module")
def library() -> PhraseLibrary:
    return shipped_library()


def _write(path: Path, *parts: np.ndarray) -> Path:
    sf.write(path, np.concatenate(parts), SR)
    return path


def _dance(library: PhraseLibrary, song: Path, seed: int) -> tuple[Plan, np.ndarray]:
    """The song's plan and its guide's mean joint speed per frame, m/s."""
    features = prepare_song(song, fps=FPS)
    plan = plan_dance(library, analyze_structure(features), style="salsa", seed=seed)
    guide = build_guide(library, plan, features.n_frames, FPS)
    motion = Motion(
        fps=FPS, root_translation=guide.poses[:, 72:], rotations=guide.poses[:, :72].reshape(-1, 24, 3)
    )
    positions = joint_positions(motion)
    speed = np.linalg.norm(np.diff(positions, axis=0), axis=-1).mean(axis=1) * FPS
    return plan, np.append(speed, speed[-1])


def _silence(seconds: float) -> np.ndarray:
    return np.random.default_rng(3).normal(scale=1e-3, size=int(seconds * SR)).astype(np.float32)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_dancer_holds_still_over_a_silence_and_moves_before_and_after(
    library: PhraseLibrary, tmp_path: Path, seed: int
) -> None:
    loud, _ = pop_bars(bpm=120.0, bars=12, sr=SR)  # 24.5 s of drums and chords, then a second's ring
    plan, speed = _dance(library, _write(tmp_path / "break.wav", loud, _silence(2.0), loud), seed)
    assert len(plan.breaks_s) == 1
    start, end = plan.breaks_s[0]
    assert 24.0 <= start <= 24.6 and end == pytest.approx(loud.size / SR + 2.0 + 0.5, abs=0.07)
    assert any("holds still" in note for note in plan.notes)
    t = np.arange(speed.size) / FPS
    inside = (t >= start) & (t < end)
    outside = np.median(speed[~inside])
    assert speed[inside].max() < 0.02 * outside  # frozen
    before = (t >= start - 1.5) & (t < start - HOLD_EASE_S)
    after = (t >= end) & (t < end + 1.5)
    assert speed[before].mean() > 0.3 * outside and speed[after].mean() > 0.3 * outside


def test_without_a_break_nothing_holds(library: PhraseLibrary, tmp_path: Path) -> None:
    loud, _ = pop_bars(bpm=120.0, bars=24, sr=SR)
    plan, speed = _dance(library, _write(tmp_path / "steady.wav", loud), 0)
    assert plan.breaks_s == ()
    t = np.arange(speed.size) / FPS
    moving = t < 0.5 + 24 * 2.0  # the song's bars (its last second only rings)
    window = int(0.5 * FPS)
    slowest = np.convolve(speed[moving], np.ones(window) / window, mode="valid").min()
    assert slowest > 0.05 * np.median(speed[moving])


def test_a_hold_eases_in_and_hands_back_without_a_jump(rng: np.random.Generator) -> None:
    n = 90
    rot = np.cumsum(rng.normal(0, 0.03, (n, 24, 3)), axis=0)
    quats = aa_to_quat(rot)
    root = np.cumsum(np.full((n, 3), 0.02), axis=0)
    root[:, 1] = 0.9  # walking on the level
    held_q, held_root = hold_breaks(quats, root, np.array([[1.0, 2.0]]), FPS)
    a, b = 30, 60
    np.testing.assert_allclose(held_q[a:b], np.broadcast_to(held_q[a], held_q[a:b].shape))
    step = np.linalg.norm(np.diff(held_root, axis=0), axis=1)
    walk = float(np.linalg.norm([0.02, 0.02]))
    assert step[: a - 6].min() == pytest.approx(walk)  # moving before the ease
    assert np.all(np.diff(step[a - 6 : a]) < 1e-9) and step[a - 1] < 0.2 * walk  # slowing into the hold
    assert step[a : b - 1].max() == 0.0
    assert step[b - 1 :].max() < 1.2 * walk  # no jump where the dance comes back: it walks on from there
    turn = np.abs(quat_to_aa(quat_multiply(held_q[1:], held_q[:-1] * [-1, -1, -1, 1]))).max(axis=(1, 2))
    usual = np.abs(quat_to_aa(quat_multiply(quats[1:], quats[:-1] * [-1, -1, -1, 1]))).max(axis=(1, 2))
    assert turn[b - 1 : b + 10].max() < 2 * usual.max()


def test_plan_breaks_round_trip_and_are_checked(library: PhraseLibrary) -> None:
    from tests.choreography.test_planner import steady_song

    song = steady_song(30.0, 120.0)
    song = replace(song, breaks=np.array([[8.0, 9.0], [20.5, 22.0]]))
    plan = plan_dance(library, song, style="salsa", seed=0)
    assert plan.breaks_s == ((8.0, 9.0), (20.5, 22.0))
    assert Plan.from_dict(plan.to_dict()) == plan
    with pytest.raises(ParameterError, match="breaks"):
        replace(plan, breaks_s=((3.0, 2.0),))
