"""The SHA-256 of a song file, read in blocks, to identify the song in outputs and caches."""

from __future__ import annotations

import hashlib
from os import PathLike
from pathlib import Path

from choreo.audio.failures import FILE_NOT_FOUND, audio_error

__all__ = ["song_sha256"]


def song_sha256(path: str | PathLike[str]) -> str:
    """Hex SHA-256 of the file's bytes, streamed so a large file is never read whole.

    Raises
    ------
    AudioError
        ``file_not_found`` when ``path`` is not a readable regular file.
    """
    file = Path(path)
    if not file.is_file():
        raise audio_error(
            path, FILE_NOT_FOUND, "no such file" if not file.exists() else "is not a regular file"
        )
    with file.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
