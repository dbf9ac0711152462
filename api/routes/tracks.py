"""Tracks: upload a song (streamed, or presigned for big files), list, read, delete."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response, status
from starlette.concurrency import run_in_threadpool

from api.deps import ContentKey, Ctx, OwnedTrack
from api.schemas import TrackList, TrackPublic, UploadCreate, UploadTicket
from api.upload import stream_file_part
from choreo.service.records import new_id
from choreo.service.tracks import delete_track, list_tracks
from choreo.service.uploads import accept_streamed, complete_upload, open_upload, staged_key

__all__ = ["router"]

router = APIRouter(prefix="/v1/tracks", tags=["tracks"])

_MULTIPART_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {"file": {"type": "string", "format": "binary", "description": "the song"}},
                }
            }
        },
    }
}
"""The body the upload route parses itself (streamed), described for the OpenAPI docs."""


@router.post(
    "", status_code=status.HTTP_201_CREATED, response_model=TrackPublic, openapi_extra=_MULTIPART_BODY
)
async def upload_track(request: Request, ctx: Ctx, key: ContentKey) -> TrackPublic:
    """Upload a song as multipart/form-data (field ``file``); it is named by its SHA-256."""
    limit = ctx.settings.max_upload_bytes
    staged = staged_key(new_id("up"))
    upload = ctx.storage.open_upload(staged)
    streamed = await stream_file_part(request, upload, max_bytes=limit)
    record = await run_in_threadpool(
        accept_streamed,
        ctx,
        team=key.team,
        staged=staged,
        filename=streamed.filename or "",
        sha256=streamed.sha256,
        size_bytes=streamed.size_bytes,
        head=streamed.head,
    )
    return TrackPublic.from_record(record)


@router.post("/uploads", status_code=status.HTTP_201_CREATED, response_model=UploadTicket)
def create_upload(body: UploadCreate, request: Request, ctx: Ctx, key: ContentKey) -> UploadTicket:
    """A presigned URL for one PUT of a big song, sending ``headers``; then call ``complete_url``."""
    ticket, url, headers = open_upload(
        ctx, team=key.team, filename=body.filename, sha256=body.sha256, size_bytes=body.size_bytes
    )
    return UploadTicket(
        upload_id=ticket.id,
        url=url,
        headers=headers,
        expires_at=ticket.expires_at,
        complete_url=str(request.url_for("complete_upload", upload_id=ticket.id)),
    )


@router.post(
    "/uploads/{upload_id}/complete",
    name="complete_upload",
    status_code=status.HTTP_201_CREATED,
    response_model=TrackPublic,
)
def complete(upload_id: Annotated[str, Path(max_length=80)], ctx: Ctx, key: ContentKey) -> TrackPublic:
    """Check the uploaded bytes against the declared SHA-256 and size, then make them a track."""
    return TrackPublic.from_record(complete_upload(ctx, team=key.team, upload_id=upload_id))


@router.get("", response_model=TrackList)
def get_tracks(
    ctx: Ctx,
    key: ContentKey,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(pattern=r"^[0-9]+(\.[0-9]+)?$")] = None,
) -> TrackList:
    """The team's tracks, newest first."""
    records = list_tracks(ctx, key.team, limit=limit + 1, before=float(cursor) if cursor else None)
    next_cursor = str(records[limit - 1].created_at) if len(records) > limit else None
    return TrackList(items=[TrackPublic.from_record(r) for r in records[:limit]], next_cursor=next_cursor)


@router.get("/{sha256}", response_model=TrackPublic)
def get_one_track(track: OwnedTrack) -> TrackPublic:
    return TrackPublic.from_record(track)


@router.delete("/{sha256}", status_code=status.HTTP_204_NO_CONTENT)
def remove_track(track: OwnedTrack, ctx: Ctx) -> Response:
    """Delete the team's track; jobs already rendered keep their files."""
    delete_track(ctx, track)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
