"""The Butterworth design and the forward-backward filter, held to scipy's ``butter`` and ``sosfiltfilt``."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import butter, sosfilt, sosfiltfilt

from choreo.numeric.butterworth import butter_lowpass_sos, sos_filtfilt

CUTOFFS = np.linspace(0.02, 0.98, 49)


@pytest.mark.parametrize("order", [2, 4, 6, 8])
def test_even_orders_give_scipys_sections_to_the_bit(order: int) -> None:
    for cutoff in CUTOFFS:
        assert np.array_equal(butter_lowpass_sos(order, cutoff), butter(order, cutoff, output="sos"))


@pytest.mark.parametrize("order", [1, 3, 5, 7])
def test_odd_orders_give_scipys_filter(order: int) -> None:
    """scipy can pair an odd order's single zero with another section: the sections may differ, the
    filter (its response to any input) does not."""
    x = np.random.default_rng(order).normal(size=400)
    for cutoff in CUTOFFS:
        ours = sosfilt(butter_lowpass_sos(order, cutoff), x)
        np.testing.assert_allclose(ours, sosfilt(butter(order, cutoff, output="sos"), x), rtol=0, atol=1e-9)


@pytest.mark.parametrize("n", [2, 3, 16, 63, 64, 65, 129, 1000, 5280])
def test_the_zero_phase_filter_matches_sosfiltfilt(n: int) -> None:
    rng = np.random.default_rng(n)
    x = rng.normal(size=(n, 5, 4)).cumsum(axis=0)  # a random walk: low frequencies and edges that drift
    for order, cutoff in [(4, 8 / 15), (4, 6 / 15), (2, 0.1), (6, 0.7)]:
        sos = butter(order, cutoff, output="sos")
        padlen = min(3 * (2 * len(sos) + 1), n - 1)
        expected = sosfiltfilt(sos, x, axis=0, padlen=padlen)
        got = sos_filtfilt(sos, x, padlen)
        assert got.shape == x.shape
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * max(1.0, np.abs(expected).max()))


def test_no_padding_and_a_constant() -> None:
    sos = butter_lowpass_sos(4, 0.3)
    x = np.random.default_rng(0).normal(size=(300, 2))
    expected = sosfiltfilt(sos, x, axis=0, padlen=0)
    np.testing.assert_allclose(sos_filtfilt(sos, x, 0), expected, rtol=0, atol=1e-12)
    # the passes start in their steady state: a constant passes without a transient
    np.testing.assert_allclose(sos_filtfilt(sos, np.full(100, 3.25), 15), 3.25, rtol=0, atol=1e-12)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="order"):
        butter_lowpass_sos(0, 0.5)
    with pytest.raises(ValueError, match="cut-off"):
        butter_lowpass_sos(4, 1.0)
    with pytest.raises(ValueError, match="padlen"):
        sos_filtfilt(butter_lowpass_sos(4, 0.5), np.zeros(10), 10)
