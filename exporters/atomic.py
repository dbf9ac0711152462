"""Atomic file writes shared by the exporters.

A dance file is written beside its target under a hidden temporary name and
renamed over it, so a failed export never leaves half a file where a reader
(a viewer, the service's uploader) would pick it up.
"""

from __future__ import annotations

import os
from pathlib import Path

from choreo.errors import ExportError

__all__ = ["write_atomically"]


def write_atomically(path: Path, data: bytes, what: str) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder.

    Parameters
    ----------
    path : the file to create or replace
    data : the complete file contents
    what : the format's name for the error message, e.g. ``"BVH"``

    Raises
    ------
    ExportError
        When the file cannot be written; the message names the format and the file,
        and the temporary file is removed.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ExportError(f"cannot write {what} file {path}: {exc.strerror or exc}") from None
