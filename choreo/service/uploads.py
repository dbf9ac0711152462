"""Presigned uploads: a ticket for a big song sent straight to storage, checked when completed.

A ticket is a record (``uploads/<id>.json`` in storage, so the rebuild brings it
back, and ``upload:<id>`` in Redis) beside the bytes' staging key
(``uploads/<id>``). Completing it checks the stored bytes' size and SHA-256
against what was declared and makes them a track; the ticket ends either way.
The URL can write its key only while the key is empty (it is signed with
``If-None-Match: *``), so an ended ticket leaves an empty marker there and its
record, closed, until the URL expires: a second PUT with the URL is refused.
:func:`sweep_uploads` removes what ended or abandoned tickets and broken streams leave.
"""

from __future__ import annotations

import time

from pydantic import BaseModel, Field

from choreo.errors import ConflictError, NotFoundError, ParameterError, TooLargeError
from choreo.service.context import ServiceContext
from choreo.service.records import TrackRecord, new_id, now_s
from choreo.service.tracks import check_audio_head, extension_of, get_track, store_track

__all__ = [
    "PendingUpload",
    "accept_streamed",
    "complete_upload",
    "index_upload",
    "open_upload",
    "staged_key",
    "sweep_uploads",
    "upload_record_key",
]


class PendingUpload(BaseModel):
    """A ticket: what a client promised to PUT, and where."""

    id: str
    team: str
    filename: str
    ext: str
    sha256: str
    size_bytes: int
    expires_at: float
    created_at: float = Field(default_factory=now_s)
    closed_at: float | None = None
    """When the ticket ended (completed or refused); its URL is refused from then on."""
    stored: bool = False
    """Whether its bytes became the team's track (the track of ``sha256``) when it ended."""

    @property
    def staged_key(self) -> str:
        return staged_key(self.id)


def staged_key(upload_id: str) -> str:
    """Where a song's bytes wait until they are checked (streamed and presigned uploads alike)."""
    return f"uploads/{upload_id}"


def upload_record_key(upload_id: str) -> str:
    return f"uploads/{upload_id}.json"


def index_upload(ctx: ServiceContext, ticket: PendingUpload) -> None:
    """Write an open ticket to Redis only (creation and the rebuild), expiring an hour after its URL."""
    ttl_s = max(int(ticket.expires_at - time.time()) + 3600, 1)
    ctx.redis.set(ctx.key("upload", ticket.id), ticket.model_dump_json(), ex=ttl_s)


def open_upload(
    ctx: ServiceContext, *, team: str, filename: str, sha256: str, size_bytes: int
) -> tuple[PendingUpload, str, dict[str, str]]:
    """Record a ticket and presign its PUT; returns the ticket, the URL and the headers the PUT must send.

    Raises
    ------
    ParameterError
        For a name that is not a song's; :class:`TooLargeError` for a size over the limit.
    """
    ext = extension_of(filename)
    limit = ctx.settings.max_upload_bytes
    if size_bytes > limit:
        raise TooLargeError(f"size_bytes {size_bytes} is larger than the limit of {limit} bytes")
    expiry_s = ctx.settings.presign_expiry_s
    ticket = PendingUpload(
        id=new_id("up"),
        team=team,
        filename=filename,
        ext=ext,
        sha256=sha256,
        size_bytes=size_bytes,
        expires_at=time.time() + expiry_s,
    )
    ctx.storage.put_json(upload_record_key(ticket.id), ticket.model_dump(mode="json"))
    index_upload(ctx, ticket)
    url, headers = ctx.storage.presign_put(ticket.staged_key, expiry_s=expiry_s, size_bytes=size_bytes)
    return ticket, url, headers


def _close(ctx: ServiceContext, ticket: PendingUpload, *, stored: bool) -> None:
    """End a ticket: its record says closed (and whether it made a track) and stays until the URL
    expires, an empty marker replaces its bytes (the URL's conditional PUT is refused while it
    stands), Redis forgets it. Storage first, so a retry after any failure here finds it ended."""
    if ticket.closed_at is None:
        ticket = ticket.model_copy(update={"closed_at": now_s(), "stored": stored})
        ctx.storage.put_json(upload_record_key(ticket.id), ticket.model_dump(mode="json"))
    ctx.storage.put_bytes(ticket.staged_key, b"")
    ctx.redis.delete(ctx.key("upload", ticket.id))


def _ticket(ctx: ServiceContext, team: str, upload_id: str) -> PendingUpload:
    """The team's ticket as storage last recorded it (closed or not), or as Redis holds it."""
    record = ctx.storage.get_json(upload_record_key(upload_id))
    raw = ctx.redis.get(ctx.key("upload", upload_id))
    ticket = (
        PendingUpload.model_validate(record)
        if record is not None and record.get("closed_at") is not None
        else (PendingUpload.model_validate_json(raw) if raw else None)
    )
    if ticket is None or ticket.team != team:
        raise NotFoundError(f"no upload {upload_id!r} for this key's team")
    return ticket


def complete_upload(ctx: ServiceContext, *, team: str, upload_id: str) -> TrackRecord:
    """Check a ticket's uploaded bytes and make them the team's track.

    Completing again a ticket that made its track returns that track (a client
    that lost the answer may ask again, and a completion cut short by a failure
    is finished); one that was refused stays refused.

    Raises
    ------
    NotFoundError
        No such ticket for this team.
    ConflictError
        Nothing was uploaded yet (code ``upload_missing``); the ticket stays. Or the ticket
        was refused before (code ``upload_closed``).
    ParameterError
        Size or SHA-256 differ from the declared ones; the ticket ends and the bytes go.
    AudioError
        The bytes do not start like the named format; the ticket ends and the bytes go.
    """
    ticket = _ticket(ctx, team, upload_id)
    if ticket.closed_at is not None:
        _close(ctx, ticket, stored=ticket.stored)
        track = get_track(ctx, team, ticket.sha256) if ticket.stored else None
        if track is None:
            raise ConflictError(
                f"upload {upload_id} has ended without a track that still exists; open a new upload",
                code="upload_closed",
            )
        return track
    if ctx.storage.size_bytes(ticket.staged_key) is None:
        raise ConflictError(
            f"nothing was uploaded for {upload_id} yet; PUT the file first", code="upload_missing"
        )
    sha256, size_bytes, head = ctx.storage.sha256_and_head(ticket.staged_key)
    try:
        if size_bytes != ticket.size_bytes:
            raise ParameterError(
                f"uploaded {size_bytes} bytes but declared {ticket.size_bytes}", code="size_mismatch"
            )
        if sha256 != ticket.sha256:
            raise ParameterError(
                f"uploaded bytes have SHA-256 {sha256}, declared {ticket.sha256}", code="sha256_mismatch"
            )
        check_audio_head(ticket.filename, ticket.ext, head)
    except Exception:
        _close(ctx, ticket, stored=False)
        raise
    record = store_track(
        ctx,
        team=team,
        staged_key=ticket.staged_key,
        sha256=sha256,
        size_bytes=size_bytes,
        ext=ticket.ext,
        filename=ticket.filename,
    )
    _close(ctx, ticket, stored=True)
    return record


def accept_streamed(
    ctx: ServiceContext, *, team: str, staged: str, filename: str, sha256: str, size_bytes: int, head: bytes
) -> TrackRecord:
    """Make a streamed upload (already at ``staged``) the team's track, or delete it and raise.

    Raises
    ------
    ParameterError
        The file name is not a song's.
    AudioError
        The bytes do not start like the named format.
    """
    try:
        ext = extension_of(filename)
        check_audio_head(filename, ext, head)
        return store_track(
            ctx,
            team=team,
            staged_key=staged,
            sha256=sha256,
            size_bytes=size_bytes,
            ext=ext,
            filename=filename,
        )
    except Exception:
        ctx.storage.delete(staged)
        raise


def sweep_uploads(ctx: ServiceContext, *, older_than_s: float) -> int:
    """Delete staged bytes, markers and tickets whose URLs expired; returns the objects deleted.

    A ticket, open or closed, goes once its URL expired; staged bytes (or a
    closed ticket's marker) go when their ticket is gone or expired (or never
    existed: a streamed upload cut off) and they are older than
    ``older_than_s``. Until its URL expires a ticket's key is kept, so an
    ended ticket's marker keeps refusing the URL.
    """
    now = time.time()
    deleted = 0
    for key in list(ctx.storage.list_keys("uploads/")):
        upload_id = key.removeprefix("uploads/").removesuffix(".json")
        ticket_raw = ctx.storage.get_json(upload_record_key(upload_id))
        if ticket_raw is not None and PendingUpload.model_validate(ticket_raw).expires_at > now:
            continue
        if key.endswith(".json"):
            ctx.redis.delete(ctx.key("upload", upload_id))
        else:
            modified = ctx.storage.modified_at(key)
            if modified is None or now - modified < older_than_s:
                continue
        ctx.storage.delete(key)
        deleted += 1
    return deleted
