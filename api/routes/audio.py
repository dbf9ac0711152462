"""A job's song for its owner's browser: streamed from storage with HTTP Range support.

An ``<audio>`` element cannot send an ``Authorization`` header, so the page
first asks (with its key) for a ticket (:mod:`api.tickets`) that admits GETs of
this one job's song and nothing else. The API key itself never appears in a
URL. Scripts may send the key as a header instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Path, Query, Request
from fastapi.responses import StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel

from api.deps import ContentKey, Ctx, OwnedJob
from api.errors import ApiError
from api.tickets import issue_ticket, team_admitted
from choreo.contracts.choices import AUDIO_CONTENT_TYPES
from choreo.service.jobs import get_job
from choreo.service.records import JobRecord, song_key

__all__ = ["router"]

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
_bearer = HTTPBearer(auto_error=False, description="An API key, or use the ticket of an audio link")


class AudioTicket(BaseModel):
    url: str
    expires_at: float


@router.post("/{job_id}/audio-ticket", response_model=AudioTicket)
def audio_ticket(job: OwnedJob, key: ContentKey, ctx: Ctx, request: Request) -> AudioTicket:
    """A URL that streams this job's song for ``presign_expiry_s`` seconds, for an ``<audio>`` element."""
    token, expires_at = issue_ticket(ctx, "audio", job.id, key)
    url = request.url_for("job_audio", job_id=job.id).include_query_params(ticket=token)
    return AudioTicket(url=str(url.path) + "?" + url.query, expires_at=expires_at)


def _audio_job(
    request: Request,
    ctx: Ctx,
    job_id: Annotated[str, Path(max_length=80)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    ticket: Annotated[str | None, Query(max_length=64)] = None,
) -> JobRecord:
    """The job whose song is asked for, if the ticket or the key admits it (else 401 or 404)."""
    team = team_admitted(ctx, request, credentials, kind="audio", object_id=job_id, ticket=ticket)
    job = get_job(ctx, job_id, team=team)
    if job is None:
        raise ApiError.not_found("job", job_id)
    return job


def _byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The inclusive byte span a ``Range`` header asks for, None for the whole file; 416 if unsatisfiable."""
    if not header:
        return None
    match = _RANGE.match(header.strip())
    if not match or match.groups() == ("", ""):
        raise ApiError(416, "bad_range", f"Range {header!r} is not one 'bytes=start-end' span")
    first, last = match.groups()
    if first == "":
        start, end = max(0, size - int(last)), size - 1
    else:
        start, end = int(first), min(int(last), size - 1) if last else size - 1
    if start >= size or start > end:
        raise ApiError(
            416, "bad_range", f"Range {header!r} lies outside the song's {size} bytes",
            headers={"Content-Range": f"bytes */{size}"},
        )  # fmt: skip
    return start, end


_SONG_TYPES = sorted({*AUDIO_CONTENT_TYPES.values(), "application/octet-stream"})
_SONG: dict[str, object] = {"content": {kind: {} for kind in _SONG_TYPES}}
"""The answer's content types as the OpenAPI document declares them: the song's own."""


@router.get(
    "/{job_id}/audio",
    name="job_audio",
    response_class=StreamingResponse,
    responses={
        200: {**_SONG, "description": "The whole song"},
        206: {**_SONG, "description": "One byte range"},
    },
)
def job_audio(
    job: Annotated[JobRecord, Depends(_audio_job)],
    ctx: Ctx,
    range_: Annotated[str | None, Header(alias="range")] = None,
) -> StreamingResponse:
    """The job's song, whole (200) or one byte range (206), so a player can seek."""
    key = song_key(job.track_sha256, job.track_ext)
    size = ctx.storage.size_bytes(key)
    if size is None:
        raise ApiError.not_found("song of job", job.id)
    span = _byte_range(range_, size)
    start, end = span or (0, size - 1)
    body: Iterator[bytes] = ctx.storage.open_range(key, start, end)
    headers = {"Accept-Ranges": "bytes", "Content-Length": str(end - start + 1), "Cache-Control": "private"}
    if span:
        headers["Content-Range"] = f"bytes {start}-{end}/{size}"
    return StreamingResponse(
        body,
        status_code=206 if span else 200,
        media_type=AUDIO_CONTENT_TYPES.get(job.track_ext, "application/octet-stream"),
        headers=headers,
    )
