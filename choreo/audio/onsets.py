"""Onsets: the onset strength envelope, aligned to frame times, and its peaks.

Timing: frame ``k`` of a centred STFT (``center=True``) is the Hann window
centred on time ``k / fps``. A sharp onset first raises the log spectrum in the
frame whose window reaches half amplitude at it, ``N_FFT / 4`` samples (one
hop, :data:`ONSET_SHIFT_FRAMES`) before the frame centred on it, so the
frame-to-frame rise is shifted one frame later to put each onset on the frame
nearest to it. (librosa's ``onset_strength(center=True)`` shifts by
``N_FFT / (2 * hop)``, two frames, which puts clicks one frame late.)
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import maximum_filter1d, uniform_filter1d

__all__ = ["ONSET_SHIFT_FRAMES", "onset_strength", "pick_onset_peaks"]

ONSET_SHIFT_FRAMES = 1
"""Frames from the first rise of a windowed onset to the frame centred on it (``N_FFT / (4 * hop)``)."""

PEAK_NEIGHBOURHOOD_S = 0.03
"""An onset peak is the largest value within this many seconds either side."""

PEAK_AVERAGE_S = 0.10
"""... and exceeds the mean over this many seconds either side ..."""

PEAK_DELTA = 0.07
"""... by this fraction of the envelope's range."""


def onset_strength(log_power: np.ndarray, *, first_full_frame: int = 0) -> np.ndarray:
    """Onset envelope: the mean positive frame-to-frame rise of a log spectrum, on frame times.

    Parameters
    ----------
    log_power : np.ndarray [shape=(frames, bands)], dB
    first_full_frame : frames before this one have windows reaching before the start of
        the song (zero padding); the rise of the window filling up is not an onset, so
        rises from those frames count as zero

    Returns
    -------
    envelope : np.ndarray [shape=(frames,), dtype=float32], dB, >= 0; ``envelope[k]``
        is the mean rise from frame ``k - 2`` to frame ``k - 1`` (zero for ``k < 2``)
    """
    rise = np.maximum(0.0, np.diff(log_power, axis=0)).mean(axis=1)
    rise[:first_full_frame] = 0.0
    envelope = np.zeros(log_power.shape[0], dtype=np.float32)
    lead = 1 + ONSET_SHIFT_FRAMES
    envelope[lead:] = rise[: max(0, rise.size - ONSET_SHIFT_FRAMES)]
    return envelope


def pick_onset_peaks(envelope: np.ndarray, *, fps: float) -> np.ndarray:
    """Frames where the onset envelope peaks clearly above its surroundings.

    A frame is a peak when it rises from the frame before, is the largest
    value within :data:`PEAK_NEIGHBOURHOOD_S` either side (at least one frame),
    and exceeds the mean over :data:`PEAK_AVERAGE_S` either side by
    :data:`PEAK_DELTA` of the envelope's range.

    Returns
    -------
    frames : np.ndarray [shape=(peaks,), dtype=int], increasing; empty for a flat envelope
    """
    values = np.asarray(envelope, dtype=np.float64)
    span = values.max() - values.min() if values.size else 0.0
    if span <= 0:
        return np.zeros(0, dtype=np.int64)
    scaled = (values - values.min()) / span
    reach = max(1, round(PEAK_NEIGHBOURHOOD_S * fps))
    average_reach = max(1, round(PEAK_AVERAGE_S * fps))
    is_max = scaled >= maximum_filter1d(scaled, size=2 * reach + 1, mode="constant")
    rises = np.concatenate([[scaled[0] > 0], scaled[1:] > scaled[:-1]])
    local_mean = uniform_filter1d(scaled, size=2 * average_reach + 1, mode="constant")
    return np.flatnonzero(is_max & rises & (scaled >= local_mean + PEAK_DELTA)).astype(np.int64)
