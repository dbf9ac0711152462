"""Peak picking and local minima, held to scipy's ``find_peaks`` and ``argrelextrema`` on random curves
(with plateaus and ties) and on a real novelty curve and speed curve."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.signal import argrelextrema
from scipy.signal import find_peaks as scipy_find_peaks

from choreo.audio import analyze_song
from choreo.audio.music_features import ONSET_ENVELOPE_COLUMN
from choreo.numeric.peaks import find_peaks, strict_local_minima

DEMO_SONG = Path(__file__).resolve().parents[2] / "demo" / "Kevin_MacLeod_-_Vibe_Ace.ogg"


def _curves(seed: int, count: int = 400):
    rng = np.random.default_rng(seed)
    for k in range(count):
        n = int(rng.integers(0, 150))
        # small integers give plateaus and equal heights; normals give distinct values
        yield rng.integers(0, 5, size=n).astype(float) if k % 2 else rng.normal(size=n)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_find_peaks_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    for x in _curves(seed):
        height = float(rng.uniform(-1.0, 4.0)) if rng.random() < 0.7 else None
        distance = float(rng.uniform(1.0, 12.0)) if rng.random() < 0.8 else None
        expected = scipy_find_peaks(x, height=height, distance=distance)[0]
        assert np.array_equal(find_peaks(x, height=height, distance=distance), expected)


def test_strict_local_minima_match_argrelextrema() -> None:
    for x in _curves(7):
        if x.size:
            assert np.array_equal(strict_local_minima(x), argrelextrema(x, np.less)[0])


def test_on_a_real_curve() -> None:
    """The demo song's onset strength (a real, noisy curve) as peaks and minima."""
    curve = analyze_song(DEMO_SONG, fps=30).features[:, ONSET_ENVELOPE_COLUMN]
    for distance in (1, 4, 16):
        expected = scipy_find_peaks(curve, distance=distance, height=0.2 * curve.max())[0]
        assert expected.size > 0
        assert np.array_equal(find_peaks(curve, distance=distance, height=0.2 * curve.max()), expected)
    assert np.array_equal(strict_local_minima(curve), argrelextrema(curve, np.less)[0])


def test_a_plateau_counts_once_at_its_middle() -> None:
    x = np.array([0.0, 1.0, 2.0, 2.0, 2.0, 2.0, 1.0, 3.0, 3.0, 0.0, 5.0])
    assert find_peaks(x).tolist() == [3, 7]  # the left middle of an even run; the last sample never counts
    assert strict_local_minima(x).tolist() == [6, 9]
