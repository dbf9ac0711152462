"""Tracks: upload a song (streamed, or presigned for big files), list, read, delete."""

from __future__ import annotations

import json
import time
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response, status
from starlette.concurrency import run_in_threadpool

from api.deps import ContentKey, Ctx, OwnedTrack
from api.errors import ApiError
from api.schemas import TrackList, TrackPublic, UploadCreate, UploadTicket
from api.upload import stream_file_part
from choreo.errors import ChoreoError
from choreo.service.records import new_id
from choreo.service.tracks import check_audio_head, delete_track, extension_of, list_tracks, store_track

__all__ = ["router"]

router = APIRouter(prefix="/v1/tracks", tags=["tracks"])

_MULTIPART_OVERHEAD_BYTES = 64 * 1024
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
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit + _MULTIPART_OVERHEAD_BYTES:
        raise ApiError(
            413, "too_large", f"the upload ({declared} bytes) is larger than the limit of {limit} bytes"
        )
    staged_key = f"uploads/{new_id('up')}"
    upload = ctx.storage.open_upload(staged_key)
    streamed = await stream_file_part(request, upload, max_bytes=limit)
    filename = streamed.filename or ""
    try:
        ext = extension_of(filename)
        check_audio_head(filename, ext, streamed.head)
        record = await run_in_threadpool(
            store_track,
            ctx,
            team=key.team,
            staged_key=staged_key,
            sha256=streamed.sha256,
            size_bytes=streamed.size_bytes,
            ext=ext,
            filename=filename,
        )
    except ChoreoError:
        await run_in_threadpool(ctx.storage.delete, staged_key)
        raise
    return TrackPublic.from_record(record)


@router.post("/uploads", status_code=status.HTTP_201_CREATED, response_model=UploadTicket)
def create_upload(body: UploadCreate, request: Request, ctx: Ctx, key: ContentKey) -> UploadTicket:
    """A presigned PUT URL for a big song; call ``complete_url`` after the PUT."""
    ext = extension_of(body.filename)
    limit = ctx.settings.max_upload_bytes
    if body.size_bytes > limit:
        raise ApiError(
            413, "too_large", f"size_bytes {body.size_bytes} is larger than the limit of {limit} bytes"
        )
    upload_id = new_id("up")
    expiry_s = ctx.settings.presign_expiry_s
    staged_key = f"uploads/{upload_id}"
    pending = body.model_dump() | {"team": key.team, "ext": ext, "staged_key": staged_key}
    ctx.redis.set(ctx.key("upload", upload_id), json.dumps(pending), ex=expiry_s + 3600)
    url = ctx.storage.presign_put(staged_key, expiry_s=expiry_s, size_bytes=body.size_bytes)
    return UploadTicket(
        upload_id=upload_id,
        url=url,
        headers={"Content-Length": str(body.size_bytes)},
        expires_at=time.time() + expiry_s,
        complete_url=str(request.url_for("complete_upload", upload_id=upload_id)),
    )


@router.post("/uploads/{upload_id}/complete", status_code=status.HTTP_201_CREATED, response_model=TrackPublic)
def complete_upload(upload_id: str, ctx: Ctx, key: ContentKey) -> TrackPublic:
    """Check the uploaded bytes against the declared SHA-256 and size, then make them a track."""
    raw = ctx.redis.get(ctx.key("upload", upload_id))
    pending = json.loads(raw) if raw else None
    if pending is None or pending["team"] != key.team:
        raise ApiError.not_found("upload", upload_id)
    staged_key = pending["staged_key"]
    if ctx.storage.size_bytes(staged_key) is None:
        raise ApiError(409, "upload_missing", f"nothing was uploaded for {upload_id} yet; PUT the file first")
    sha256, size_bytes, head = ctx.storage.sha256_and_head(staged_key)
    problem = None
    if size_bytes != pending["size_bytes"]:
        problem = ("size_mismatch", f"uploaded {size_bytes} bytes but declared {pending['size_bytes']}")
    elif sha256 != pending["sha256"]:
        problem = ("sha256_mismatch", f"uploaded bytes have SHA-256 {sha256}, declared {pending['sha256']}")
    try:
        if problem:
            raise ApiError(422, *problem)
        check_audio_head(pending["filename"], pending["ext"], head)
    except (ApiError, ChoreoError):
        ctx.storage.delete(staged_key)
        ctx.redis.delete(ctx.key("upload", upload_id))
        raise
    record = store_track(
        ctx,
        team=key.team,
        staged_key=staged_key,
        sha256=sha256,
        size_bytes=size_bytes,
        ext=pending["ext"],
        filename=pending["filename"],
    )
    ctx.redis.delete(ctx.key("upload", upload_id))
    return TrackPublic.from_record(record)


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
