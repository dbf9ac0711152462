"""Our filter banks and dB scale against librosa's, which define the AIST++/FACT recipe."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.audio.filters import chroma_filterbank, hann_window, mel_filterbank, power_to_db

librosa = pytest.importorskip("librosa")


@pytest.mark.parametrize("fps", [24, 25, 30, 50, 60])
def test_mel_filterbank_matches_librosa(fps: int) -> None:
    sr = fps * 512
    expected = librosa.filters.mel(sr=sr, n_fft=2048, n_mels=128, fmax=sr / 2)
    np.testing.assert_allclose(mel_filterbank(sr, 2048, 128), expected, rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("fps", [24, 25, 30, 50, 60])
def test_chroma_filterbank_matches_librosa(fps: int) -> None:
    sr = fps * 512
    expected = librosa.filters.chroma(sr=sr, n_fft=2048, tuning=0.0)
    np.testing.assert_allclose(chroma_filterbank(sr, 2048), expected, rtol=1e-5, atol=1e-9)


def test_window_and_db_match_librosa(rng: np.random.Generator) -> None:
    np.testing.assert_allclose(
        hann_window(2048), librosa.filters.get_window("hann", 2048, fftbins=True), atol=1e-7
    )
    power = rng.exponential(size=(128, 300)) * 10.0 ** rng.uniform(-14, 2, size=(128, 300))
    np.testing.assert_allclose(power_to_db(power), librosa.power_to_db(power), atol=1e-9)


def test_filterbanks_are_shared_and_read_only() -> None:
    bank = mel_filterbank(15360, 2048, 128)
    assert bank is mel_filterbank(15360, 2048, 128) and not bank.flags.writeable
