"""Why a song cannot be danced: the error codes of the audio package.

Every refusal is an :class:`~choreo.errors.AudioError` whose ``code`` is one of
the constants below and whose message starts with the file's path, so the CLI,
the API and failed jobs all report the same reason for the same file.
"""

from __future__ import annotations

from os import PathLike

from choreo.errors import AudioError

__all__ = [
    "CORRUPT_AUDIO",
    "FILE_NOT_FOUND",
    "SILENT",
    "TOO_LONG",
    "TOO_SHORT",
    "UNSUPPORTED_FORMAT",
    "audio_error",
]

FILE_NOT_FOUND = "file_not_found"
"""The path does not exist or is not a regular file."""

UNSUPPORTED_FORMAT = "unsupported_format"
"""No decoder available here reads this kind of file (or AAC/M4A without ffmpeg)."""

CORRUPT_AUDIO = "corrupt_audio"
"""An empty file, a damaged file, or content that is not the audio its name claims."""

TOO_SHORT = "too_short"
"""Shorter than ``Settings.min_duration_s`` (0-second files included)."""

TOO_LONG = "too_long"
"""Longer than ``Settings.max_duration_s``."""

SILENT = "silent"
"""Never louder than ``Settings.silence_dbfs``, or no beat could be found."""


def audio_error(path: str | PathLike[str], code: str, reason: str) -> AudioError:
    """An :class:`AudioError` whose message is ``"<path>: <reason>"``.

    Parameters
    ----------
    path : the song as the caller named it
    code : one of this module's codes
    reason : what is wrong, in words a user can act on
    """
    return AudioError(f"{path}: {reason}", code=code)
