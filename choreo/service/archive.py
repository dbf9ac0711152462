"""A zip archive of stored files, streamed as it is written: nothing is held whole, in memory or on disk.

Each file is read from storage in chunks and written into the archive as it arrives; the
archive's bytes are handed on as soon as about a mebibyte has gathered. Written to a stream
that cannot seek, every entry carries its sizes and CRC after its data (a data descriptor) and
the central directory at the end lists them, which every unzip tool reads.
"""

from __future__ import annotations

import time
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from choreo.service.storage import Storage

__all__ = ["ArchiveMember", "zip_stream"]

_HAND_ON_BYTES = 1 << 20


@dataclass(frozen=True)
class ArchiveMember:
    """One entry: its path in the archive and either a stored object or bytes at hand."""

    name: str
    storage_key: str | None = None
    data: bytes = b""
    compress: bool = False
    modified_at: float | None = None
    """Unix time shown as the entry's date; None: now."""


class _Sink:
    """A write-only file for :mod:`zipfile` that keeps what was written until it is taken."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        self.size += len(data)
        return len(data)

    def flush(self) -> None:
        """Nothing to flush: the parts wait for :meth:`take`."""

    def close(self) -> None:
        """Nothing to close: the parts wait for :meth:`take`."""

    def take(self) -> bytes:
        out = b"".join(self.parts)
        self.parts.clear()
        self.size = 0
        return out


def _date(modified_at: float | None) -> tuple[int, int, int, int, int, int]:
    stamp = time.gmtime(modified_at if modified_at is not None else time.time())
    return (max(stamp.tm_year, 1980), stamp.tm_mon, stamp.tm_mday, stamp.tm_hour, stamp.tm_min, stamp.tm_sec)


def zip_stream(storage: Storage, members: Iterable[ArchiveMember]) -> Iterator[bytes]:
    """The zip archive of ``members``, in pieces of about a mebibyte, read from ``storage`` as it goes.

    A stored object that is gone by the time it is read is left out.

    Raises
    ------
    StorageError
        When storage fails while the archive is being written (the archive is then cut short).
    """
    sink = _Sink()
    with zipfile.ZipFile(sink, mode="w", allowZip64=True) as archive:
        for member in members:
            size = len(member.data)
            if member.storage_key is not None:
                stored = storage.size_bytes(member.storage_key)
                if stored is None:
                    continue
                size = stored
            info = zipfile.ZipInfo(member.name, date_time=_date(member.modified_at))
            info.compress_type = zipfile.ZIP_DEFLATED if member.compress else zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            with archive.open(info, mode="w", force_zip64=size >= 1 << 31) as entry:
                if member.storage_key is None:
                    entry.write(member.data)
                elif size:
                    for chunk in storage.open_range(member.storage_key, 0, size - 1):
                        entry.write(chunk)
                        if sink.size >= _HAND_ON_BYTES:
                            yield sink.take()
            if sink.size >= _HAND_ON_BYTES:
                yield sink.take()
    yield sink.take()
