"""Atomic file writes: a file appears whole under its name, or not at all.

Dance files, cached engine plans, converted models, cached song features and
training checkpoints are read by other processes (a viewer, the uploader,
another worker) while they may still be being written. Each is written beside
its target under a hidden temporary name, unique to the writing process and
thread, and renamed over the target once complete, so a reader never sees half
a file and a failed write leaves nothing behind.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from choreo.errors import ChoreoError

__all__ = ["atomic_path", "write_atomically"]


@contextmanager
def atomic_path(path: Path, *, what: str = "file", error: type[ChoreoError] | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on a clean exit, rename it over ``path``.

    For writers that need a file name (``np.savez``, ``onnx.save``, ``torch.save``).
    The folder of ``path`` must exist.

    Parameters
    ----------
    path : the file to create or replace
    what : what the file is, for the error message, e.g. ``"BVH file"``
    error : when given, an :class:`OSError` is raised as this error type with a
        message naming ``what``, the file and the reason; otherwise it propagates

    Raises
    ------
    ChoreoError
        Of type ``error``, when the file cannot be written. Whatever goes wrong,
        the temporary file is removed and ``path`` is left as it was.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as exc:
        if error is None:
            raise
        raise error(f"cannot write {what} {path}: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)


def write_atomically(
    path: Path, data: bytes, *, what: str = "file", error: type[ChoreoError] | None = None
) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_path` for ``what`` and ``error``)."""
    with atomic_path(path, what=what, error=error) as tmp:
        tmp.write_bytes(data)
