"""Libraries: a team's own phrase libraries, from motion files it uploads, built by a CPU worker.

1. ``POST /v1/libraries`` declares the files (name, size, SHA-256, style, credit,
   licence) and answers a presigned PUT per file, the same one-time upload as a
   big song's;
2. the client PUTs each file, then ``POST /v1/libraries/{id}/build`` checks the
   uploads and queues the build;
3. ``GET /v1/libraries/{id}`` follows it: per file whether it was used or why it
   was refused, per style its minutes, phrases and tempo range, and a contact
   sheet of its phrases (``.../sheets/{style}``); jobs name it in ``options.library``.

Another team's library answers 404, exactly like a missing one.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request, Response, status
from pydantic import BaseModel, Field

from api.deps import CeleryApp, ContentKey, Ctx, OwnedLibrary
from api.errors import ApiError
from choreo.service.libraries import (
    MAX_LIBRARY_FILES,
    LibraryFile,
    LibraryRecord,
    LibraryState,
    create_library,
    delete_library,
    enqueue_build,
    library_sheet_key,
    list_libraries,
    start_build,
)

__all__ = ["router"]

router = APIRouter(prefix="/v1/libraries", tags=["libraries"])


class LibraryFileCreate(BaseModel):
    model_config = {"extra": "forbid"}

    filename: str = Field(min_length=1, max_length=255, description="A .bvh, .fbx, .glb or .gltf file.")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the bytes, lowercase hex.")
    size_bytes: int = Field(gt=0, description="Exact size; the URL accepts only this many bytes.")
    style: str = Field(pattern=r"^[a-z0-9_-]{1,40}$", description="The style its takes dance.")
    credit: str = Field(default="", max_length=300, description="Who made the motion; default: the team.")
    licence: str = Field(default="", max_length=100)


class LibraryCreate(BaseModel):
    """A new library: its name and the motion files it is built from."""

    model_config = {"extra": "forbid"}

    name: str = Field(min_length=1, max_length=100)
    files: list[LibraryFileCreate] = Field(min_length=1, max_length=MAX_LIBRARY_FILES)


class LibraryFilePublic(BaseModel):
    filename: str
    style: str
    size_bytes: int
    status: str = Field(description="waiting (for the build), used, or refused")
    reason: str | None = Field(description="Why the file was refused, in words.")
    clips: int = Field(description="Takes of the file in the library.")


class LibraryPublic(BaseModel):
    id: str
    name: str
    state: LibraryState
    sha256: str | None
    files: list[LibraryFilePublic]
    styles: dict[str, dict] = Field(description="Per style: minutes, phrases, tempo range, songs it fills.")
    credits: list[str]
    error_code: str | None
    error_message: str | None
    build_s: float | None
    created_at: float

    @classmethod
    def from_record(cls, r: LibraryRecord) -> LibraryPublic:
        return cls(
            id=r.id,
            name=r.name,
            state=r.state,
            sha256=r.sha256,
            files=[LibraryFilePublic.model_validate(f.model_dump()) for f in r.files],
            styles=r.styles,
            credits=r.credits,
            error_code=r.error_code,
            error_message=r.error_message,
            build_s=r.build_s,
            created_at=r.created_at,
        )


class FileUpload(BaseModel):
    """Where to PUT one file: once, sending every one of ``headers`` (they are signed)."""

    filename: str
    url: str
    method: str = "PUT"
    headers: dict[str, str]


class LibraryCreated(BaseModel):
    library: LibraryPublic
    uploads: list[FileUpload]
    build_url: str = Field(description="POST here once every file is uploaded.")


class LibraryList(BaseModel):
    items: list[LibraryPublic]


@router.post("", status_code=status.HTTP_201_CREATED, response_model=LibraryCreated)
def create(body: LibraryCreate, request: Request, ctx: Ctx, key: ContentKey) -> LibraryCreated:
    """Declare a library's motion files; answers a presigned PUT for each."""
    files = [LibraryFile.model_validate(f.model_dump()) for f in body.files]
    record, tickets = create_library(ctx, team=key.team, name=body.name, files=files)
    return LibraryCreated(
        library=LibraryPublic.from_record(record),
        uploads=[
            FileUpload(filename=f.filename, url=url, headers=headers)
            for f, (url, headers) in zip(record.files, tickets, strict=True)
        ],
        build_url=str(request.url_for("build_library", library_id=record.id)),
    )


@router.post(
    "/{library_id}/build",
    name="build_library",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=LibraryPublic,
)
def build(library: OwnedLibrary, ctx: Ctx, celery: CeleryApp) -> LibraryPublic:
    """Check the uploaded files and queue the build; files not uploaded as declared are refused."""
    queued = start_build(ctx, library)
    enqueue_build(celery, queued)
    return LibraryPublic.from_record(queued)


@router.get("", response_model=LibraryList)
def get_libraries(ctx: Ctx, key: ContentKey) -> LibraryList:
    """The team's libraries, newest first."""
    return LibraryList(items=[LibraryPublic.from_record(r) for r in list_libraries(ctx, key.team)])


@router.get("/{library_id}", response_model=LibraryPublic)
def get_one_library(library: OwnedLibrary) -> LibraryPublic:
    return LibraryPublic.from_record(library)


@router.get(
    "/{library_id}/sheets/{style}",
    response_class=Response,
    responses={200: {"content": {"image/png": {}}, "description": "The style's contact sheet."}},
)
def style_sheet(
    library: OwnedLibrary, ctx: Ctx, style: Annotated[str, Path(pattern=r"^[a-z0-9_-]{1,40}$")]
) -> Response:
    """A contact sheet of the style's phrases (PNG), once the library is built."""
    if library.state != LibraryState.READY or style not in library.styles:
        raise ApiError.not_found("style sheet", f"{library.id}/{style}")
    return Response(ctx.storage.get_bytes(library_sheet_key(library.id, style)), media_type="image/png")


@router.delete("/{library_id}", status_code=status.HTTP_204_NO_CONTENT)
def remove_library(library: OwnedLibrary, ctx: Ctx) -> Response:
    """Delete the library; jobs already danced on it keep their files and summaries."""
    delete_library(ctx, library)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
