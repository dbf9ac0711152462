"""One call from a song file to its features, refusing songs that cannot be danced."""

from __future__ import annotations

from os import PathLike

import numpy as np

from choreo.audio.decode import load_audio
from choreo.audio.failures import SILENT, TOO_LONG, TOO_SHORT, audio_error
from choreo.audio.features import extract_features, feature_sr
from choreo.audio.formats import probe_duration_s
from choreo.audio.music_features import MusicFeatures
from choreo.settings import Settings, get_settings

__all__ = ["DECODED_DURATION_TOLERANCE_S", "analyze_song", "peak_dbfs"]

DECODED_DURATION_TOLERANCE_S = 0.1
"""How far the decoded duration may fall short of the header's before the song is too short.

Codecs pad: ffmpeg decodes a 6.000 s AAC file to 6.014 s. The limits are applied to the
header's duration; the decoded audio is only held to them with this tolerance (and
``load_audio`` stops a song that runs a second past the maximum).
"""


def analyze_song(path: str | PathLike[str], *, fps: int, settings: Settings | None = None) -> MusicFeatures:
    """Decode a song and compute its features at ``fps``, after checking it can be danced.

    The checks run cheapest first: the duration from the header (before any
    decoding), then the level of the decoded audio, then whether a beat is found.

    Parameters
    ----------
    path : an audio file (WAV, FLAC, OGG Vorbis, Opus, MP3; AAC/M4A with ffmpeg)
    fps : int > 0, frames per second of the features
    settings : limits to apply (``min_duration_s``, ``max_duration_s``,
        ``silence_dbfs``); the process's settings when None

    Returns
    -------
    MusicFeatures

    Raises
    ------
    AudioError
        With the file's path and reason in the message and one of the codes
        ``file_not_found``, ``unsupported_format``, ``corrupt_audio``,
        ``too_short`` (below ``min_duration_s``, 0-second files included),
        ``too_long`` (above ``max_duration_s``; exactly the maximum is accepted)
        or ``silent`` (never above ``silence_dbfs``, or fewer than two beats found).
    ParameterError
        ``fps`` is not a positive integer.
    """
    settings = settings if settings is not None else get_settings()
    sr = feature_sr(fps)
    duration_s = probe_duration_s(path)
    _check_duration(path, duration_s, settings)
    y = load_audio(path, sr=sr, max_duration_s=settings.max_duration_s)
    decoded_s = y.size / sr
    if decoded_s < settings.min_duration_s - DECODED_DURATION_TOLERANCE_S:
        raise audio_error(
            path,
            TOO_SHORT,
            f"too short: {decoded_s:.2f} s decoded though the header says {duration_s:.2f} s; "
            f"the minimum is {settings.min_duration_s:g} s",
        )
    level_dbfs = peak_dbfs(y)
    if level_dbfs < settings.silence_dbfs:
        raise audio_error(
            path,
            SILENT,
            f"silent: the loudest sample is {level_dbfs:.1f} dBFS, below the {settings.silence_dbfs:g} dBFS "
            "threshold",
        )
    features = extract_features(y, sr, fps=fps)
    if features.beat_times.size < 2:
        raise audio_error(path, SILENT, f"silent: no beat found ({features.beat_times.size} beats tracked)")
    return features


def peak_dbfs(y: np.ndarray) -> float:
    """Level of the loudest sample in dB relative to full scale (1.0); -inf for digital silence."""
    peak = max(float(y.max()), -float(y.min())) if y.size else 0.0  # no |y| copy of a long song
    return 20.0 * np.log10(peak) if peak > 0 else float("-inf")


def _check_duration(path: str | PathLike[str], duration_s: float, settings: Settings) -> None:
    if duration_s < settings.min_duration_s:
        raise audio_error(
            path, TOO_SHORT, f"too short: {duration_s:.2f} s, the minimum is {settings.min_duration_s:g} s"
        )
    if duration_s > settings.max_duration_s:
        raise audio_error(
            path, TOO_LONG, f"too long: {duration_s:.2f} s, the maximum is {settings.max_duration_s:g} s"
        )
