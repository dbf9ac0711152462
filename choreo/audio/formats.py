"""Which decoder reads a song, and how long the song is, from its header alone.

libsndfile (through soundfile) reads WAV, FLAC, OGG Vorbis, Opus and MP3
in-process. Anything it does not recognise (AAC/M4A above all) goes to ffmpeg
where ffmpeg is installed: ``ffprobe`` reads the header here and an ``ffmpeg``
pipe decodes it in :mod:`choreo.audio.decode`. Nothing in this module decodes
audio samples, so a 20-minute song is measured in milliseconds.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Literal

import soundfile as sf

from choreo.audio.failures import CORRUPT_AUDIO, FILE_NOT_FOUND, UNSUPPORTED_FORMAT, audio_error
from choreo.contracts.choices import SONG_SUFFIXES
from choreo.errors import AudioError

__all__ = ["SourceInfo", "inspect_source", "probe_duration_s"]

AUDIO_SUFFIXES = frozenset({*SONG_SUFFIXES, ".wave", ".mp4", ".aif", ".aiff"})
"""Names that say "this is a song" (the accepted formats and other names of their containers):
unreadable content behind them is corrupt, not unsupported."""

_FFMPEG_ONLY_SUFFIXES = frozenset({".m4a", ".aac", ".mp4", ".m4b"})
_SF_MALFORMED = 3
"""libsndfile's SF_ERR_MALFORMED_FILE: it knows the format but the file is damaged."""
_FFPROBE_TIMEOUT_S = 30.0
_SUPPORTED = "WAV, FLAC, OGG Vorbis, Opus, MP3, and AAC/M4A where ffmpeg is installed"


@dataclass(frozen=True)
class SourceInfo:
    """What a song's header says, and which decoder will read it.

    Parameters
    ----------
    backend : ``"libsndfile"`` (soundfile, in-process) or ``"ffmpeg"`` (subprocess pipe)
    sample_rate_hz : the stored sample rate
    channels : channels stored in the file (downmixed to mono when decoding)
    duration_s : duration from the header, seconds
    """

    backend: Literal["libsndfile", "ffmpeg"]
    sample_rate_hz: int
    channels: int
    duration_s: float


def probe_duration_s(path: str | PathLike[str]) -> float:
    """The song's duration in seconds, read from its header before any decoding.

    Parameters
    ----------
    path : an audio file (WAV, FLAC, OGG Vorbis, Opus, MP3; AAC/M4A with ffmpeg)

    Returns
    -------
    duration_s : float >= 0

    Raises
    ------
    AudioError
        ``file_not_found``, ``unsupported_format`` or ``corrupt_audio``, with the
        file's path and the reason in the message.
    """
    return inspect_source(path).duration_s


def inspect_source(path: str | PathLike[str]) -> SourceInfo:
    """Read the header of ``path`` and choose its decoder.

    libsndfile is asked first. A file it recognises but finds damaged is
    corrupt; a file it does not recognise is handed to ``ffprobe``.

    Raises
    ------
    AudioError
        As :func:`probe_duration_s`.
    """
    file = Path(path)
    if not file.is_file():
        reason = "is not a regular file" if file.exists() else "no such file"
        raise audio_error(path, FILE_NOT_FOUND, reason)
    if file.stat().st_size == 0:
        raise audio_error(path, CORRUPT_AUDIO, "the file is empty (0 bytes)")
    try:
        info = sf.info(str(file))
    except sf.LibsndfileError as exc:
        if exc.code == _SF_MALFORMED:
            raise audio_error(path, CORRUPT_AUDIO, f"damaged audio file ({exc.error_string})") from exc
        return _inspect_with_ffprobe(path, file)
    except (RuntimeError, TypeError) as exc:  # soundfile raises these for some malformed headers
        raise audio_error(path, CORRUPT_AUDIO, f"damaged audio header ({exc})") from exc
    if info.samplerate <= 0 or info.channels <= 0 or info.frames < 0:
        raise audio_error(
            path,
            CORRUPT_AUDIO,
            f"impossible header: {info.samplerate} Hz, {info.channels} channels, {info.frames} frames",
        )
    return SourceInfo("libsndfile", int(info.samplerate), int(info.channels), info.frames / info.samplerate)


def _inspect_with_ffprobe(path: str | PathLike[str], file: Path) -> SourceInfo:
    """Second opinion for files libsndfile does not recognise (AAC/M4A and others)."""
    suffix = file.suffix.lower()
    ffprobe = shutil.which("ffprobe")
    if ffprobe is None or shutil.which("ffmpeg") is None:
        if suffix in _FFMPEG_ONLY_SUFFIXES or _looks_like_mp4(file):
            raise audio_error(
                path, UNSUPPORTED_FORMAT, "AAC/M4A needs ffmpeg and ffprobe, which are not installed here"
            )
        raise _unreadable(path, suffix, "libsndfile does not recognise it and ffmpeg is not installed")
    command = [
        ffprobe,
        "-v",
        "error",
        "-select_streams",
        "a:0",
        "-show_entries",
        "stream=sample_rate,channels,duration:format=duration",
        "-of",
        "json",
        str(file),
    ]
    try:
        proc = subprocess.run(  # noqa: S603  ffprobe, an argument list: the file is a path, no shell
            command, capture_output=True, text=True, timeout=_FFPROBE_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise audio_error(
            path, CORRUPT_AUDIO, f"ffprobe gave no answer in {_FFPROBE_TIMEOUT_S:.0f} s"
        ) from exc
    ffprobe_reason = _last_line(proc.stderr).removeprefix(f"{file}: ") or f"exit status {proc.returncode}"
    try:
        report = json.loads(proc.stdout or "{}")
    except json.JSONDecodeError:
        report = {}
    streams = report.get("streams") or []
    if proc.returncode != 0 or "format" not in report:
        raise _unreadable(path, suffix, f"ffprobe: {ffprobe_reason}")
    if not streams:
        raise audio_error(path, UNSUPPORTED_FORMAT, "the file has no audio stream")
    stream = streams[0]
    duration = _number(stream.get("duration")) or _number(report["format"].get("duration"))
    sample_rate_hz = int(_number(stream.get("sample_rate")) or 0)
    channels = int(stream.get("channels") or 0)
    if duration is None or sample_rate_hz <= 0 or channels <= 0:
        raise audio_error(
            path, CORRUPT_AUDIO, "the header gives no duration, sample rate or channel count (ffprobe)"
        )
    return SourceInfo("ffmpeg", sample_rate_hz, channels, duration)


def _unreadable(path: str | PathLike[str], suffix: str, detail: str) -> AudioError:
    """No decoder recognises the content: corrupt if its name promises audio, else unsupported."""
    if suffix in AUDIO_SUFFIXES:
        return audio_error(
            path, CORRUPT_AUDIO, f"named {suffix} but its content cannot be read as audio ({detail})"
        )
    return audio_error(
        path, UNSUPPORTED_FORMAT, f"not an audio format Choreo reads ({detail}); it reads {_SUPPORTED}"
    )


def _looks_like_mp4(file: Path) -> bool:
    """True for ISO media files (M4A, MP4): bytes 4 to 8 are ``ftyp``."""
    with file.open("rb") as handle:
        return handle.read(8)[4:8] == b"ftyp"


def _number(text: object) -> float | None:
    """ffprobe's numbers come as strings, or ``"N/A"``."""
    try:
        value = float(str(text))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
