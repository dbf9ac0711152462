"""The generation stage's output: one object, one file, read back exactly."""

from __future__ import annotations

import io

import numpy as np
import pytest

from choreo.contracts.generated import GeneratedMotion
from choreo.contracts.provenance import Provenance
from choreo.contracts.timing import SongTiming
from choreo.errors import ParameterError
from choreo.motion import Motion


def _generated(rng: np.random.Generator) -> GeneratedMotion:
    poses = rng.standard_normal((40, 75)).astype(np.float32).astype(np.float64)
    provenance = Provenance("m-3", 7, "salsa", "cd" * 32, ("credit",), model_trained=False)
    song = SongTiming(np.array([0.5, 1.0, 1.5]), np.array([0.5]), 120.0, 40 / 30)
    return GeneratedMotion(Motion.from_array(poses, fps=30), provenance, song)


def test_round_trip_through_npz_is_exact() -> None:
    generated = _generated(np.random.default_rng(0))
    buffer = io.BytesIO()
    generated.to_npz(buffer)
    back = GeneratedMotion.from_npz(io.BytesIO(buffer.getvalue()))
    np.testing.assert_array_equal(back.motion.to_array(), generated.motion.to_array())
    assert back.motion.fps == 30
    assert back.provenance == generated.provenance and back.provenance.model_trained is False
    np.testing.assert_array_equal(back.song.beat_times, generated.song.beat_times)
    np.testing.assert_array_equal(back.song.downbeat_times, generated.song.downbeat_times)
    assert (back.song.tempo_bpm, back.song.duration_s) == (120.0, generated.song.duration_s)


def test_another_file_is_refused_naming_what_is_missing() -> None:
    buffer = io.BytesIO()
    np.savez(buffer, poses=np.zeros((2, 75)))
    with pytest.raises(ParameterError, match="missing"):
        GeneratedMotion.from_npz(io.BytesIO(buffer.getvalue()))
