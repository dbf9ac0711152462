"""Batches: an album's jobs and their combined progress; the team's albums; an album published
and downloaded as a whole (one zip of every file of every take, streamed from storage)."""

from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from api.deps import ContentKey, Ctx, OwnedBatch
from api.errors import ApiError
from api.links import batch_public
from api.schemas import (
    AlbumPublishCreate,
    AlbumPublished,
    BatchList,
    BatchPublic,
    LinkTicket,
    RoutinePublic,
    SkippedSong,
)
from api.tickets import issue_ticket, team_admitted
from choreo.service.albums import album_files, publish_album
from choreo.service.archive import ArchiveMember, zip_stream
from choreo.service.jobs import get_batch, list_batches
from choreo.service.records import BatchRecord

__all__ = ["router"]

router = APIRouter(prefix="/v1/batches", tags=["jobs"])

_bearer = HTTPBearer(auto_error=False, description="An API key, or use the ticket of an archive link")


@router.get("", response_model=BatchList)
def get_batches(
    ctx: Ctx,
    key: ContentKey,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(pattern=r"^[0-9]{1,12}(\.[0-9]{1,6})?$")] = None,
) -> BatchList:
    """The team's batches (albums), newest first, with their names and progress."""
    batches, before = list_batches(ctx, key.team, limit=limit, before=float(cursor) if cursor else None)
    return BatchList(
        items=[batch_public(ctx, b) for b in batches],
        next_cursor=repr(before) if before is not None else None,
    )


@router.get("/{batch_id}", response_model=BatchPublic)
def get_one_batch(batch: OwnedBatch, ctx: Ctx) -> BatchPublic:
    """The batch's state (``running`` or ``finished``), mean progress and jobs per state."""
    return batch_public(ctx, batch)


@router.post("/{batch_id}/publish", status_code=201, response_model=AlbumPublished)
def publish(batch: OwnedBatch, body: AlbumPublishCreate, ctx: Ctx) -> AlbumPublished:
    """Publish every song of the album once, as its newest finished take, tagged with the album's name."""
    routines, skipped = publish_album(ctx, batch, tags=body.tags, style=body.style)
    return AlbumPublished(
        batch_id=batch.id,
        published=[RoutinePublic.from_record(r) for r in routines],
        skipped=[SkippedSong(job_id=s.job_id, track_name=s.track_name, reason=s.reason) for s in skipped],
    )


@router.post("/{batch_id}/archive-ticket", response_model=LinkTicket)
def archive_ticket(batch: OwnedBatch, key: ContentKey, ctx: Ctx, request: Request) -> LinkTicket:
    """A link that downloads the album's archive for ``presign_expiry_s`` seconds, without the key."""
    token, expires_at = issue_ticket(ctx, "archive", batch.id, key)
    url = request.url_for("batch_archive", batch_id=batch.id).include_query_params(ticket=token)
    return LinkTicket(url=str(url.path) + "?" + url.query, expires_at=expires_at)


def _archive_batch(
    request: Request,
    ctx: Ctx,
    batch_id: Annotated[str, Path(max_length=80)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    ticket: Annotated[str | None, Query(max_length=64)] = None,
) -> BatchRecord:
    """The batch whose archive is asked for, if the ticket or the key admits it (else 401 or 404)."""
    team = team_admitted(ctx, request, credentials, kind="archive", object_id=batch_id, ticket=ticket)
    batch = get_batch(ctx, batch_id, team=team)
    if batch is None:
        raise ApiError.not_found("batch", batch_id)
    return batch


@router.get(
    "/{batch_id}/archive",
    name="batch_archive",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/zip": {}}, "description": "The album's files, one zip"}},
)
def archive(batch: Annotated[BatchRecord, Depends(_archive_batch)], ctx: Ctx) -> StreamingResponse:
    """One zip of every file of every finished take of the album, streamed from storage as it is read.

    A folder per song (numbered in upload order) holds its first take's files, a folder inside it
    each later take's; ``album.json`` lists the songs, the style and tempo of each take, and the files.
    """
    folder, files, manifest = album_files(ctx, batch)
    if not files:
        raise ApiError(409, "nothing_to_download", f"no song of batch {batch.id} has finished rendering yet")
    members = [ArchiveMember(name=f"{folder}/album.json", data=manifest, compress=True)] + [
        ArchiveMember(name=f.name, storage_key=f.storage_key, compress=f.compress, modified_at=f.modified_at)
        for f in files
    ]
    ascii_name = re.sub(r"[^A-Za-z0-9._ -]+", "_", folder) or "album"
    disposition = f"attachment; filename=\"{ascii_name}.zip\"; filename*=UTF-8''{quote(folder)}.zip"
    return StreamingResponse(
        zip_stream(ctx.storage, members),
        media_type="application/zip",
        headers={"Content-Disposition": disposition, "Cache-Control": "private"},
    )
