"""Per-frame music features from mono audio: one STFT, computed once, reused.

Timing rule: the audio is resampled to ``sr = fps * HOP_LENGTH`` so that one
hop is exactly one motion frame, and the STFT frames are centred
(``center=True`` framing, zeros beyond the ends): frame ``k``'s window is
centred on sample ``k * HOP_LENGTH``, i.e. on time ``k / fps``. The onset
envelope is aligned the same way (see :mod:`choreo.audio.onsets`).

The STFT is taken in blocks of frames and each block is reduced at once to the
mel power spectrum and the chroma, so a 20-minute song
never holds its whole complex spectrogram (300 MB at 30 fps). Mel, MFCC and
chroma are librosa's ``melspectrogram``/``mfcc``/``chroma_stft`` (defaults,
``tuning=0``), computed with :mod:`choreo.audio.filters`.
"""

from __future__ import annotations

import numpy as np
import scipy.fft
from threadpoolctl import threadpool_limits

from choreo.audio.beat_pointer import beat_observation, track_pointer_beats
from choreo.audio.beats import estimate_downbeats, fit_tempo_bpm, keep_sounding_beats, snap_to_onsets
from choreo.audio.filters import chroma_filterbank, hann_window, mel_centres_hz, mel_filterbank, power_to_db
from choreo.audio.music_features import (
    BEAT_COLUMN,
    CHROMA_COLUMNS,
    FEATURE_DIM,
    MFCC_COLUMNS,
    ONSET_ENVELOPE_COLUMN,
    ONSET_PEAK_COLUMN,
    MusicFeatures,
)
from choreo.audio.onsets import onset_strength, pick_onset_peaks
from choreo.errors import ParameterError

__all__ = [
    "HOP_LENGTH",
    "N_FFT",
    "N_MELS",
    "N_MFCC",
    "extract_features",
    "feature_sr",
]

HOP_LENGTH = 512
"""Samples per motion frame at the feature sample rate."""

N_FFT = 2048
"""STFT window length in samples (four hops)."""

N_MELS = 128
"""Mel bands of the spectrum behind both the onset envelope and the MFCC."""

N_MFCC = 20
N_CHROMA = 12

LOW_BAND_HZ = 120.0
"""Mel bands centred below this (kick and bass) make the low-band onset that marks the downbeats.

The beat-truth set's tuning half chose it over the rise of the summed 30-200 Hz energy: the same
downbeat F there, and a clearer choice between 3/4 and 4/4 (``bench/beats.py``, docs/audio.md).
"""

_BLOCK_FRAMES = 1024
"""STFT frames computed at a time (8 MB of complex64 spectrum)."""


def feature_sr(fps: int) -> int:
    """The sample rate at which one hop of :data:`HOP_LENGTH` samples is one frame at ``fps``.

    >>> feature_sr(30)
    15360
    """
    if isinstance(fps, bool) or not isinstance(fps, int | np.integer) or fps <= 0:
        raise ParameterError(f"fps must be a positive integer, got {fps!r}")
    return int(fps) * HOP_LENGTH


def extract_features(y: np.ndarray, sr: int, *, fps: int) -> MusicFeatures:
    """Features, beats, downbeats and tempo of mono audio, one row per frame at ``fps``.

    Parameters
    ----------
    y : np.ndarray [shape=(n,)], mono audio, finite, not empty
    sr : int, must be ``feature_sr(fps) = fps * 512`` (load the song with ``load_audio(path, sr=sr)``)
    fps : int > 0, frames per second of the features

    Returns
    -------
    MusicFeatures
        ``ceil(n / 512)`` rows (``ceil(duration_s * fps)``); row ``k`` is the
        audio at time ``k / fps``. ``duration_s = n / sr``.

    Raises
    ------
    ParameterError
        ``sr`` does not match ``fps``, or ``y`` is not non-empty finite mono audio.
    """
    expected_sr = feature_sr(fps)
    if sr != expected_sr:
        raise ParameterError(
            f"sr must be fps * {HOP_LENGTH} = {expected_sr} Hz for {fps} fps, got {sr!r}; "
            f"load the song with load_audio(path, sr=feature_sr(fps))"
        )
    samples = np.asarray(y)
    if samples.ndim != 1 or samples.size == 0:
        raise ParameterError(f"y must be non-empty mono audio [n], got shape {samples.shape}")
    samples = samples.astype(np.float32, copy=False)
    if not np.isfinite(samples).all():
        raise ParameterError("y contains NaN or infinite samples")
    n_frames = -(-samples.size // HOP_LENGTH)

    # The band projections on one BLAS thread: on this 2-core machine under load a second thread's
    # waiting doubled the features' CPU (0.21 -> 0.11 s for a 3-minute song) and saved no wall
    # time; with one, the bands come out the same on any number of cores (two group the float32
    # sums otherwise and move some bands by an ulp).
    with threadpool_limits(1, user_api="blas"):
        mel_power, chroma = _spectral_frames(samples, sr=sr, n_frames=n_frames)
    log_mel = power_to_db(mel_power)
    first_full_frame = N_FFT // (2 * HOP_LENGTH)
    onset_envelope = onset_strength(log_mel, first_full_frame=first_full_frame)
    mfcc = scipy.fft.dct(log_mel, type=2, norm="ortho", axis=1)[:, :N_MFCC]
    peak_frames = pick_onset_peaks(onset_envelope, fps=fps)
    low_bands = mel_centres_hz(sr, N_FFT, N_MELS) < LOW_BAND_HZ
    bass_onset = onset_strength(log_mel[:, low_bands], first_full_frame=first_full_frame)
    beat_frames, downbeat_frames, period_bpm = _beats(
        log_mel, onset_envelope, bass_onset=bass_onset, chroma=chroma, sr=sr, fps=fps
    )

    features = np.zeros((n_frames, FEATURE_DIM), dtype=np.float32)
    features[:, ONSET_ENVELOPE_COLUMN] = onset_envelope
    features[:, MFCC_COLUMNS] = mfcc
    features[:, CHROMA_COLUMNS] = chroma
    features[peak_frames, ONSET_PEAK_COLUMN] = 1.0
    features[beat_frames, BEAT_COLUMN] = 1.0
    beat_times = beat_frames / fps
    return MusicFeatures(
        fps=int(fps),
        features=features,
        beat_times=beat_times,
        downbeat_times=downbeat_frames / fps,
        tempo_bpm=fit_tempo_bpm(beat_times, fallback_bpm=period_bpm if beat_frames.size else 0.0),
        duration_s=samples.size / sr,
    )


def _beats(
    log_mel: np.ndarray,
    onset_envelope: np.ndarray,
    *,
    bass_onset: np.ndarray,
    chroma: np.ndarray,
    sr: int,
    fps: int,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Beat frames, downbeat frames and the decoding's tempo (BPM): the whole beat analysis of a song.

    The beat-pointer model decodes the multi-band flux; its beats are put on the
    frame of the strongest onset within a frame (the onset envelope's timing is the
    one proven on click tracks), the ones that do not sound dropped, and the bar
    phase and meter chosen on what is left.
    """
    decoded, period_bpm = track_pointer_beats(beat_observation(log_mel, sr=sr, n_fft=N_FFT, fps=fps), fps=fps)
    frames = snap_to_onsets(np.rint(decoded).astype(np.int64), onset_envelope)
    beat_frames = keep_sounding_beats(frames, onset_envelope)
    downbeat_frames = estimate_downbeats(
        beat_frames, bass_onset=bass_onset, chroma=chroma, beats_per_bar=None
    )
    return beat_frames, downbeat_frames, period_bpm


def _spectral_frames(y: np.ndarray, *, sr: int, n_frames: int) -> tuple[np.ndarray, np.ndarray]:
    """Mel power [N, 128] and chroma [N, 12] from one centred STFT.

    Frame ``k`` is the Hann-windowed ``N_FFT`` samples centred on sample
    ``k * HOP_LENGTH``, zeros beyond the ends (librosa's ``center=True``,
    ``pad_mode="constant"``).
    """
    window = hann_window(N_FFT)
    mel_basis = mel_filterbank(sr, N_FFT, N_MELS)
    chroma_basis = chroma_filterbank(sr, N_FFT, N_CHROMA)
    mel_power = np.empty((n_frames, N_MELS), dtype=np.float32)
    chroma = np.empty((n_frames, N_CHROMA), dtype=np.float32)
    half = N_FFT // 2
    for first in range(0, n_frames, _BLOCK_FRAMES):
        last = min(first + _BLOCK_FRAMES, n_frames)
        start = first * HOP_LENGTH - half
        stop = (last - 1) * HOP_LENGTH + half
        segment = np.zeros(stop - start, dtype=np.float32)
        lo, hi = max(start, 0), min(stop, y.size)
        if hi > lo:
            segment[lo - start : hi - start] = y[lo:hi]
        frames = np.lib.stride_tricks.sliding_window_view(segment, N_FFT)[::HOP_LENGTH]
        spectrum = scipy.fft.rfft(frames * window, axis=-1)
        power = spectrum.real**2 + spectrum.imag**2  # [frames, bins], float32
        mel_power[first:last] = power @ mel_basis.T
        raw_chroma = power @ chroma_basis.T
        loudest = raw_chroma.max(axis=1, keepdims=True)
        chroma[first:last] = raw_chroma / np.where(loudest > 0, loudest, 1.0)
    return mel_power, chroma
