"""Spectral filter banks and the dB scale: mel (Slaney), chroma, Hann window, log power.

These give the same numbers as librosa's ``filters.mel``, ``filters.chroma``,
``get_window("hann")`` and ``power_to_db`` with their defaults (the tests check
it against librosa), so the features keep the AIST++/FACT recipe. They are
written here because importing librosa's filters pulls in numba and its
cached kernels: seconds before the first song on this 2-core machine, for a
handful of array formulas.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["chroma_filterbank", "hann_window", "mel_centres_hz", "mel_filterbank", "power_to_db"]

_A4_HZ = 440.0
_SLANEY_LINEAR_HZ_PER_MEL = 200.0 / 3.0
_SLANEY_BREAK_HZ = 1000.0
_SLANEY_LOG_STEP = np.log(6.4) / 27.0


def hann_window(n: int) -> np.ndarray:
    """Periodic Hann window of ``n`` samples (the DFT-even form used for STFTs), float32."""
    return (0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(n) / n)).astype(np.float32)


def power_to_db(power: np.ndarray, *, amin: float = 1e-10, top_db: float = 80.0) -> np.ndarray:
    """``10 * log10(power)`` relative to 1.0, floored at ``amin`` and at ``top_db`` below the maximum."""
    db = 10.0 * np.log10(np.maximum(power, amin))
    return np.maximum(db, db.max() - top_db) if db.size else db


def _hz_to_mel(hz: np.ndarray | float) -> np.ndarray:
    """Slaney's mel scale: linear below 1 kHz (15 mel at 1 kHz), logarithmic above."""
    hz = np.asarray(hz, dtype=np.float64)
    linear = hz / _SLANEY_LINEAR_HZ_PER_MEL
    break_mel = _SLANEY_BREAK_HZ / _SLANEY_LINEAR_HZ_PER_MEL
    logarithmic = break_mel + np.log(np.maximum(hz, 1e-10) / _SLANEY_BREAK_HZ) / _SLANEY_LOG_STEP
    return np.where(hz >= _SLANEY_BREAK_HZ, logarithmic, linear)


def _mel_to_hz(mel: np.ndarray) -> np.ndarray:
    mel = np.asarray(mel, dtype=np.float64)
    break_mel = _SLANEY_BREAK_HZ / _SLANEY_LINEAR_HZ_PER_MEL
    linear = mel * _SLANEY_LINEAR_HZ_PER_MEL
    logarithmic = _SLANEY_BREAK_HZ * np.exp(_SLANEY_LOG_STEP * (mel - break_mel))
    return np.where(mel >= break_mel, logarithmic, linear)


@lru_cache(maxsize=8)
def mel_filterbank(sr: int, n_fft: int, n_mels: int) -> np.ndarray:
    """Triangular mel filters from 0 Hz to ``sr / 2``, each with unit area (Slaney normalisation).

    Returns
    -------
    weights : np.ndarray [shape=(n_mels, 1 + n_fft // 2), dtype=float32], read-only
    """
    bin_hz = np.linspace(0.0, sr / 2.0, 1 + n_fft // 2)
    edges_hz = _mel_to_hz(np.linspace(_hz_to_mel(0.0), _hz_to_mel(sr / 2.0), n_mels + 2))
    lower, centre, upper = edges_hz[:-2, None], edges_hz[1:-1, None], edges_hz[2:, None]
    rising = (bin_hz[None, :] - lower) / (centre - lower)
    falling = (upper - bin_hz[None, :]) / (upper - centre)
    weights = np.maximum(0.0, np.minimum(rising, falling)) * (2.0 / (upper - lower))
    weights = weights.astype(np.float32)
    weights.setflags(write=False)
    return weights


def mel_centres_hz(sr: int, n_fft: int, n_mels: int) -> np.ndarray:
    """Centre frequency in Hz of each of :func:`mel_filterbank`'s bands: the STFT bin where it peaks."""
    return np.argmax(mel_filterbank(sr, n_fft, n_mels), axis=1) * sr / n_fft


@lru_cache(maxsize=8)
def chroma_filterbank(sr: int, n_fft: int, n_chroma: int = 12) -> np.ndarray:
    """Maps an FFT power spectrum onto pitch classes C, C#, ..., B (A4 = 440 Hz).

    Each FFT bin spreads over the pitch classes with a Gaussian in semitones,
    half as wide as the bin itself (at least one pitch class), normalised to
    unit L2 norm per bin, then weighted by a Gaussian over octaves two octaves
    wide centred five octaves above A0 (about 880 Hz), so that rumble and hiss
    count for little.

    Returns
    -------
    weights : np.ndarray [shape=(n_chroma, 1 + n_fft // 2), dtype=float32], read-only
    """
    bin_hz = np.arange(1, n_fft) * (sr / n_fft)
    # Position of each bin in pitch-class units above A0 (27.5 Hz); the 0 Hz bin is put
    # 1.5 octaves below the first bin, so it is broad and half a cycle away from it.
    pitch = n_chroma * np.log2(bin_hz / (_A4_HZ / 16.0))
    pitch = np.concatenate([[pitch[0] - 1.5 * n_chroma], pitch])
    width = np.concatenate([np.maximum(np.diff(pitch), 1.0), [1.0]])
    half = np.round(n_chroma / 2.0)
    distance = (
        np.remainder(pitch[None, :] - np.arange(n_chroma)[:, None] + half + 10 * n_chroma, n_chroma) - half
    )
    weights = np.exp(-0.5 * (2.0 * distance / width[None, :]) ** 2)
    weights /= np.linalg.norm(weights, axis=0, keepdims=True)
    octave = pitch / n_chroma
    weights *= np.exp(-0.5 * ((octave - 5.0) / 2.0) ** 2)[None, :]
    # Rows so far start at A; start them at C (three pitch classes up).
    weights = np.roll(weights, -3 * (n_chroma // 12), axis=0)[:, : 1 + n_fft // 2]
    weights = np.ascontiguousarray(weights, dtype=np.float32)
    weights.setflags(write=False)
    return weights
