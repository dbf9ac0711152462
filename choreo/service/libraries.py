"""A team's own phrase libraries: motion files uploaded, built on a CPU worker, danced by id.

A library is a record (``libraries/<id>/library.json`` in storage, ``library:<id>``
in Redis, listed per team in ``libraries:<team>``) beside its objects:

- ``libraries/<id>/files/<n><ext>``: the motion files, each PUT straight to
  storage through a presigned URL that writes its key once (the same upload
  as a big song's), checked against its declared size and SHA-256 when the
  build starts;
- ``libraries/<id>/library.npz``: the phrase library the build wrote, whose
  SHA-256 goes into every plan danced on it, and into the job's dedup key;
- ``libraries/<id>/sheets/<style>.png``: a contact sheet of each style's phrases.

Only the team that made a library sees it: another team's library is as
absent as a missing one. A build is a task of its own on the CPU queue
(:data:`TASK_BUILD_LIBRARY`, whose body is :mod:`worker.library_build`): files
that cannot be used (not uploaded, a bad checksum, no skeleton that maps, no
animation, a T-pose, under two seconds) are refused each with its reason, and
the library is built from the rest;
with none left the build fails, saying why. Deleting a library deletes its
objects; finished jobs keep their files and summaries (the library's hash and
credits are in them).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import PurePosixPath
from typing import cast

from celery import Celery
from pydantic import BaseModel, Field

from choreo.contracts.choices import MOTION_EXTENSIONS
from choreo.errors import ConflictError, NotFoundError, ParameterError
from choreo.service.context import ServiceContext
from choreo.service.queue import CPU_QUEUE
from choreo.service.records import LIBRARY_ID_PATTERN, new_id, now_s

__all__ = [
    "LIBRARY_ID_PATTERN",
    "MAX_LIBRARY_FILES",
    "TASK_BUILD_LIBRARY",
    "LibraryFile",
    "LibraryRecord",
    "LibraryState",
    "create_library",
    "delete_library",
    "enqueue_build",
    "fail_library",
    "get_library",
    "index_library",
    "library_file_key",
    "library_npz_key",
    "library_record_key",
    "library_sheet_key",
    "list_libraries",
    "ready_library",
    "save_library",
    "start_build",
]

TASK_BUILD_LIBRARY = "choreo.build_library"
"""The Celery task that builds a library (CPU queue)."""

MAX_LIBRARY_FILES = 500
"""Most motion files one library is built from."""


class LibraryState(StrEnum):
    """Where a library is: its files are being uploaded, its build waits or runs, it is ready or failed."""

    UPLOADING = "uploading"
    QUEUED = "queued"
    BUILDING = "building"
    READY = "ready"
    FAILED = "failed"


class LibraryFile(BaseModel):
    """One motion file of a library: what was declared, and what the build made of it."""

    filename: str = Field(min_length=1, max_length=255, description="As uploaded (a folder path may lead).")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size_bytes: int = Field(gt=0)
    style: str = Field(pattern=r"^[a-z0-9_-]{1,40}$", description="The style its takes dance.")
    credit: str = Field(default="", max_length=300, description="Who to credit; default: the team.")
    licence: str = Field(default="", max_length=100)
    status: str = Field(default="waiting", description="waiting, used or refused")
    reason: str | None = Field(default=None, description="Why it was refused, in words.")
    clips: int = Field(default=0, description="Takes of it in the library.")


class LibraryRecord(BaseModel):
    """One team's library and everything known about it."""

    id: str
    team: str
    name: str
    state: LibraryState = LibraryState.UPLOADING
    files: list[LibraryFile]
    sha256: str | None = None
    styles: dict[str, dict] = Field(default_factory=dict, description="Per style: minutes, phrases, tempi.")
    credits: list[str] = Field(default_factory=list)
    error_code: str | None = None
    error_message: str | None = None
    build_s: float | None = None
    created_at: float = Field(default_factory=now_s)
    updated_at: float = Field(default_factory=now_s)


def library_record_key(library_id: str) -> str:
    return f"libraries/{library_id}/library.json"


def library_file_key(library_id: str, index: int, filename: str) -> str:
    return f"libraries/{library_id}/files/{index:04d}{PurePosixPath(filename).suffix.lower()}"


def library_npz_key(library_id: str) -> str:
    return f"libraries/{library_id}/library.npz"


def library_sheet_key(library_id: str, style: str) -> str:
    return f"libraries/{library_id}/sheets/{style}.png"


def index_library(ctx: ServiceContext, record: LibraryRecord) -> None:
    """Write a library record to Redis only (every change, and the rebuild)."""
    pipe = ctx.redis.pipeline()
    pipe.set(ctx.key("library", record.id), record.model_dump_json())
    pipe.zadd(ctx.key("libraries", record.team), {record.id: record.created_at})
    pipe.execute()


def _save(ctx: ServiceContext, record: LibraryRecord) -> LibraryRecord:
    record.updated_at = now_s()
    ctx.storage.put_json(library_record_key(record.id), record.model_dump(mode="json"))
    index_library(ctx, record)
    return record


def get_library(ctx: ServiceContext, library_id: str, *, team: str | None = None) -> LibraryRecord | None:
    """The library, or None; with ``team``, another team's library is None too."""
    raw = ctx.redis.get(ctx.key("library", library_id))
    if not raw:
        return None
    record = LibraryRecord.model_validate_json(raw)
    return None if team is not None and record.team != team else record


def list_libraries(ctx: ServiceContext, team: str) -> list[LibraryRecord]:
    """The team's libraries, newest first."""
    ids = cast(list[str], ctx.redis.zrevrange(ctx.key("libraries", team), 0, -1))
    raws = ctx.redis.mget([ctx.key("library", i) for i in ids]) if ids else []
    return [LibraryRecord.model_validate_json(r) for r in raws if r]


def create_library(
    ctx: ServiceContext, *, team: str, name: str, files: list[LibraryFile]
) -> tuple[LibraryRecord, list[tuple[str, dict[str, str]]]]:
    """Record a new library and presign one PUT per file; returns it and each file's URL and headers.

    Raises
    ------
    ParameterError
        No files or too many, a file that is not a motion file (by its name), or one larger than
        the upload limit.
    """
    if not files or len(files) > MAX_LIBRARY_FILES:
        raise ParameterError(f"a library is built from 1 to {MAX_LIBRARY_FILES} files, not {len(files)}")
    for file in files:
        if PurePosixPath(file.filename).suffix.lower().lstrip(".") not in MOTION_EXTENSIONS:
            raise ParameterError(
                f"file {file.filename!r} is not a motion file; accepted: .{', .'.join(MOTION_EXTENSIONS)}"
            )
        if file.size_bytes > ctx.settings.max_upload_bytes:
            raise ParameterError(
                f"file {file.filename!r}: {file.size_bytes} bytes is over the limit of "
                f"{ctx.settings.max_upload_bytes}",
                code="too_large",
            )
    record = LibraryRecord(
        id=new_id("lib"),
        team=team,
        name=name,
        files=[f.model_copy(update={"status": "waiting", "reason": None, "clips": 0}) for f in files],
    )
    _save(ctx, record)
    expiry_s = ctx.settings.presign_expiry_s
    tickets = [
        ctx.storage.presign_put(
            library_file_key(record.id, i, f.filename), expiry_s=expiry_s, size_bytes=f.size_bytes
        )
        for i, f in enumerate(record.files)
    ]
    return record, tickets


def start_build(ctx: ServiceContext, record: LibraryRecord) -> LibraryRecord:
    """Check every file's uploaded bytes against its declaration and queue the build.

    A file not uploaded, or whose size or SHA-256 differ, is refused with its reason; the
    build goes on with the others.

    Raises
    ------
    ConflictError
        The library is not waiting for its uploads (``library_started``), or no file was
        uploaded as declared (``nothing_uploaded``).
    """
    if record.state != LibraryState.UPLOADING:
        raise ConflictError(
            f"library {record.id} is {record.state.value}, not uploading", code="library_started"
        )
    for i, file in enumerate(record.files):
        key = library_file_key(record.id, i, file.filename)
        size = ctx.storage.size_bytes(key)
        if size is None:
            file.status, file.reason = "refused", "not uploaded"
            continue
        sha256, size, _head = ctx.storage.sha256_and_head(key)
        if size != file.size_bytes or sha256 != file.sha256:
            file.status, file.reason = (
                "refused",
                "the uploaded bytes differ from the declared size or SHA-256",
            )
    if all(f.status == "refused" for f in record.files):
        raise ConflictError(
            f"no file of library {record.id} was uploaded as declared", code="nothing_uploaded"
        )
    record.state = LibraryState.QUEUED
    return _save(ctx, record)


def enqueue_build(celery: Celery, record: LibraryRecord) -> None:
    """Send a queued library's build to the CPU workers (after its record says queued)."""
    celery.send_task(TASK_BUILD_LIBRARY, args=(record.id,), queue=CPU_QUEUE)


def ready_library(ctx: ServiceContext, team: str, library_id: str) -> LibraryRecord:
    """The team's library that jobs may dance on.

    Raises
    ------
    NotFoundError
        No such library for this team.
    ConflictError
        It is not built (yet, or its build failed), code ``library_not_ready``.
    """
    record = get_library(ctx, library_id, team=team)
    if record is None:
        raise NotFoundError(f"no library {library_id!r} for this key's team")
    if record.state != LibraryState.READY or record.sha256 is None:
        raise ConflictError(
            f"library {library_id} is {record.state.value}, not ready", code="library_not_ready"
        )
    return record


def save_library(ctx: ServiceContext, record: LibraryRecord) -> LibraryRecord:
    """Write a library's record to storage and Redis (the build's progress and outcome)."""
    return _save(ctx, record)


def fail_library(ctx: ServiceContext, library_id: str, code: str, message: str) -> str:
    """Mark a library's build failed, saying why (unless it ended already); returns ``"failed"``."""
    record = get_library(ctx, library_id)
    if record is not None and record.state not in (LibraryState.READY, LibraryState.FAILED):
        record.state, record.error_code, record.error_message = LibraryState.FAILED, code, message
        _save(ctx, record)
    return "failed"


def delete_library(ctx: ServiceContext, record: LibraryRecord) -> None:
    """Delete a library's record and objects; jobs already danced on it keep their files and summaries."""
    ctx.storage.delete_prefix(f"libraries/{record.id}/")
    pipe = ctx.redis.pipeline()
    pipe.delete(ctx.key("library", record.id))
    pipe.zrem(ctx.key("libraries", record.team), record.id)
    pipe.execute()
