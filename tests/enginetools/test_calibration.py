"""Choosing the INT8 calibration set: songs over the whole tempo range, every style."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from engine_testkit import make_inputs

from choreo.enginetools.calibration import (
    SongCandidate,
    calibration_chunks,
    read_manifest,
    select_calibration_songs,
)
from choreo.errors import ParameterError
from engines.onnxruntime_engine import OnnxRuntimeEngine

STYLES = ("salsa", "modern", "breakdance", "whirl")


def _candidates(n, rng):
    tempi = rng.uniform(70, 180, size=n)
    return [
        SongCandidate(Path(f"song{i}.ogg"), float(t), float(rng.uniform(60, 600)))
        for i, t in enumerate(tempi)
    ]


def test_selection_spans_the_tempo_range_and_every_style(rng):
    candidates = _candidates(40, rng)
    chosen = select_calibration_songs(candidates, STYLES, count=8, max_duration_s=10_000)
    tempi = sorted(c.tempo_bpm for c in candidates)
    assert chosen[0].tempo_bpm == tempi[0] and chosen[-1].tempo_bpm == tempi[-1]
    assert [c.tempo_bpm for c in chosen] == sorted(c.tempo_bpm for c in chosen)
    assert {c.style for c in chosen} == set(STYLES)
    assert len({c.path for c in chosen}) == 8


def test_selection_is_deterministic_and_respects_duration(rng):
    candidates = _candidates(40, rng)
    a = select_calibration_songs(candidates, STYLES, count=6, max_duration_s=300)
    b = select_calibration_songs(list(reversed(candidates)), STYLES, count=6, max_duration_s=300)
    assert a == b
    durations = {c.path: c.duration_s for c in candidates}
    assert all(durations[c.path] <= 300 for c in a)


def test_too_few_songs_is_an_error(rng):
    with pytest.raises(ParameterError, match="needs 8 songs"):
        select_calibration_songs(_candidates(5, rng), STYLES, count=8, max_duration_s=10_000)
    with pytest.raises(ParameterError, match="at least one song"):
        select_calibration_songs(_candidates(5, rng), STYLES, count=0)


def test_real_manifest_gives_slow_and_fast_songs(shared_data):
    candidates = read_manifest(shared_data / "music" / "gpl")
    chosen = select_calibration_songs(candidates, STYLES, count=8)
    assert all(c.path.is_file() for c in chosen)
    assert min(c.tempo_bpm for c in chosen) < 90 and max(c.tempo_bpm for c in chosen) > 150


def test_missing_or_malformed_manifest_is_named(tmp_path):
    with pytest.raises(ParameterError, match="MANIFEST.tsv"):
        read_manifest(tmp_path)
    (tmp_path / "MANIFEST.tsv").write_text("file\tduration_s\ttempo_bpm_est\na.ogg\tlong\t120\n")
    with pytest.raises(ParameterError, match="MANIFEST.tsv:2"):
        read_manifest(tmp_path)


def test_calibration_chunks_start_from_the_real_state(tiny_model, rng):
    engine = OnnxRuntimeEngine(tiny_model, threads=1)
    songs = select_calibration_songs(_candidates(4, rng), STYLES, count=2, max_duration_s=10_000)
    per_song = {s.path: {k: v[0] for k, v in make_inputs(engine.spec, 1, 300, rng).items()} for s in songs}
    feeds = calibration_chunks(
        songs, engine, lambda song, spec: per_song[song.path], chunk_frames=64, chunks_per_song=3
    )
    assert len(feeds) == 3
    assert feeds[0]["music"].shape == (2, 64, 35)
    assert not feeds[0]["state_in_h1"].any()
    _, after_first = engine.run(
        {k: feeds[0][k] for k in ("music", "style", "latent")}, engine.initial_state(2)
    )
    np.testing.assert_allclose(feeds[1]["state_in_h1"], after_first["h1"], atol=1e-6)
    assert np.abs(feeds[1]["state_in_h1"]).max() > 0
