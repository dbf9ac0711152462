"""Stream a multipart song upload into storage without holding it in memory.

The request body is parsed as it arrives; the bytes of the ``file`` part go to
a :class:`~choreo.service.storage.StreamingUpload` in parts (one PUT when
small, an S3 multipart upload when big), hashed on the way. The size limit is
enforced on the bytes seen, not on what the client claims. A body that does not
parse as multipart, a part header over :data:`MAX_HEADER_BYTES`, a body that ends
before its closing boundary and a file name over :data:`MAX_FILENAME_CHARS` are
refused before anything is kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fastapi import Request
from python_multipart.multipart import MultipartParseError, MultipartParser, parse_options_header
from starlette.concurrency import run_in_threadpool

from api.errors import ApiError
from choreo.service.storage import StreamingUpload

__all__ = ["MAX_FILENAME_CHARS", "MAX_HEADER_BYTES", "StreamedFile", "stream_file_part"]

_FLUSH_BYTES = 1024 * 1024
MAX_HEADER_BYTES = 8 * 1024
"""Longest part header name or value accepted."""
MAX_FILENAME_CHARS = 255
"""Longest file name accepted, as most file systems allow."""


@dataclass
class StreamedFile:
    """What arrived in the ``file`` part."""

    filename: str | None = None
    size_bytes: int = 0
    sha256: str = ""
    head: bytes = b""
    seen_parts: list[str] = field(default_factory=list)


@dataclass
class _Part:
    """The part being parsed: its header line so far, its name and file name."""

    name: str | None = None
    filename: str | None = None
    header_field: bytearray = field(default_factory=bytearray)
    header_value: bytearray = field(default_factory=bytearray)
    in_file: bool = False


class _TooLarge(Exception):
    pass


async def stream_file_part(request: Request, upload: StreamingUpload, *, max_bytes: int) -> StreamedFile:
    """Parse the request's multipart body and stream its ``file`` part into ``upload``.

    Raises
    ------
    ApiError
        415 when the body is not multipart, 400 when it is malformed (or has
        no closing boundary), 413 past ``max_bytes``, 422 when there is no
        ``file`` part or its name is too long. ``upload`` is aborted on every error.
    """
    content_type, params = parse_options_header(request.headers.get("content-type", ""))
    boundary = params.get(b"boundary")
    if content_type != b"multipart/form-data" or not boundary:
        raise ApiError(415, "not_multipart", "send the song as multipart/form-data with a 'file' field")

    result = StreamedFile()
    part = _Part()
    pending = bytearray()
    ended = False

    def grow(header: bytearray, data: bytes) -> None:
        header.extend(data)
        if len(header) > MAX_HEADER_BYTES:
            raise ApiError(
                400, "malformed_multipart", f"a part header is longer than {MAX_HEADER_BYTES} bytes"
            )

    def on_header_field(data: bytes, start: int, end: int) -> None:
        grow(part.header_field, data[start:end])

    def on_header_value(data: bytes, start: int, end: int) -> None:
        grow(part.header_value, data[start:end])

    def on_header_end() -> None:
        if part.header_field.lower() == b"content-disposition":
            _, options = parse_options_header(bytes(part.header_value))
            part.name = options.get(b"name", b"").decode("utf-8", "replace")
            raw_filename = options.get(b"filename")
            part.filename = raw_filename.decode("utf-8", "replace") if raw_filename is not None else None
        part.header_field.clear()
        part.header_value.clear()

    def on_headers_finished() -> None:
        result.seen_parts.append(part.name or "")
        part.in_file = part.name == "file" and result.filename is None
        if part.in_file:
            result.filename = part.filename or ""
            if len(result.filename) > MAX_FILENAME_CHARS:
                raise ApiError(
                    422,
                    "filename_too_long",
                    f"the file name has {len(result.filename)} characters; at most {MAX_FILENAME_CHARS}",
                )

    def on_part_data(data: bytes, start: int, end: int) -> None:
        if part.in_file:
            result.size_bytes += end - start
            if result.size_bytes > max_bytes:
                raise _TooLarge
            pending.extend(data[start:end])

    def on_part_end() -> None:
        part.in_file = False
        part.name = None

    def on_end() -> None:
        nonlocal ended
        ended = True

    parser = MultipartParser(
        boundary,
        {
            "on_header_field": on_header_field,
            "on_header_value": on_header_value,
            "on_header_end": on_header_end,
            "on_headers_finished": on_headers_finished,
            "on_part_data": on_part_data,
            "on_part_end": on_part_end,
            "on_end": on_end,
        },
    )
    try:
        async for chunk in request.stream():
            parser.write(chunk)
            if len(pending) >= _FLUSH_BYTES:
                data = bytes(pending)
                pending.clear()
                await run_in_threadpool(upload.write, data)
        parser.finalize()
        if not ended:
            raise ApiError(400, "malformed_multipart", "the body ended before its closing multipart boundary")
        if pending:
            await run_in_threadpool(upload.write, bytes(pending))
        if result.filename is None:
            raise ApiError(
                422, "missing_file", f"no 'file' part in the upload (parts: {result.seen_parts[:10]})"
            )
        await run_in_threadpool(upload.complete)
    except _TooLarge:
        await run_in_threadpool(upload.abort)
        raise ApiError(413, "too_large", f"the song is larger than the limit of {max_bytes} bytes") from None
    except MultipartParseError as exc:
        await run_in_threadpool(upload.abort)
        raise ApiError(400, "malformed_multipart", f"the multipart body is malformed: {exc}") from None
    except BaseException:
        await run_in_threadpool(upload.abort)
        raise
    result.sha256 = upload.sha256
    result.head = upload.head
    return result
