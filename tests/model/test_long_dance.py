"""The shipped model dances a whole 10-minute song: no freezing, no drifting away (no torch needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from choreo.audio.analyze import analyze_song
from choreo.models import DEFAULT_MODEL_PATH
from choreo.motion import Motion, joint_positions
from engines.base import MAX_CHUNK_FRAMES
from engines.onnxruntime_engine import OnnxRuntimeEngine
from engines.runner import SingleSongRunner

TEN_MINUTES_FRAMES = 10 * 60 * 30
DEMO_SONG = Path(__file__).resolve().parents[2] / "demo" / "Kevin_MacLeod_-_Vibe_Ace.ogg"


@pytest.fixture(scope="module")
def long_dance() -> np.ndarray:
    engine = OnnxRuntimeEngine(DEFAULT_MODEL_PATH)
    assert engine.spec.trained, "the shipped model must be the trained one"
    song = analyze_song(DEMO_SONG, fps=engine.spec.native_fps).features
    music = np.resize(song, (TEN_MINUTES_FRAMES, song.shape[1])).astype(np.float32)  # real music, looped
    style = np.zeros((TEN_MINUTES_FRAMES, len(engine.spec.styles)), np.float32)
    style[:, engine.spec.styles.index("salsa")] = 1.0
    latent = np.random.default_rng(7).standard_normal((TEN_MINUTES_FRAMES, engine.spec.latent_dim))
    inputs = {"music": music, "style": style, "latent": latent.astype(np.float32)}
    return SingleSongRunner(engine, MAX_CHUNK_FRAMES).run_song(inputs)


@pytest.mark.slow
def test_ten_minute_dance_keeps_moving_to_the_last_minute(long_dance: np.ndarray) -> None:
    assert long_dance.shape == (TEN_MINUTES_FRAMES, 75)
    assert np.all(np.isfinite(long_dance))
    joints = joint_positions(Motion.from_array(long_dance, fps=30))
    speed_m_per_s = np.linalg.norm(np.diff(joints, axis=0), axis=-1).mean(axis=1) * 30
    first, last = speed_m_per_s[:1800].mean(), speed_m_per_s[-1800:].mean()
    assert last / first >= 0.7, f"motion energy fell from {first:.2f} to {last:.2f} m/s"
    assert last > 0.2, "the dancer froze"


@pytest.mark.slow
def test_ten_minute_dance_stays_on_the_floor_space(long_dance: np.ndarray) -> None:
    root = long_dance[:, 72:]
    assert np.abs(root[:, [0, 2]]).max() < 1.0  # inside the 2 m x 2 m square centred on the start
    assert 0.3 < np.median(root[:, 1]) < 1.2  # the pelvis stays at a standing or dancing height
