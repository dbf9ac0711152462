"""Request and response bodies: a Create, a Public and a list envelope per resource.

Public schemas are built from the stored records by ``from_record`` and never
carry another team's data or a key's secret hash.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AnyHttpUrl, BaseModel, Field

from choreo.contracts.summary import CueLine, DanceBrief
from choreo.service.records import (
    INTENSITY_LEVELS,
    ROUTINE_KINDS,
    SCOPES,
    ApiKeyRecord,
    JobOptions,
    JobRecord,
    JobState,
    RoutineRecord,
    TrackRecord,
)

__all__ = [
    "AlbumPublished",
    "AlbumPublishCreate",
    "ArtifactLink",
    "ArtifactsPublic",
    "BatchList",
    "BatchPublic",
    "CallbackSecretCreated",
    "ERROR_RESPONSES",
    "ErrorBody",
    "ErrorDetail",
    "JobList",
    "JobPublic",
    "KeyCreate",
    "KeyCreated",
    "KeyList",
    "KeyPublic",
    "LinkTicket",
    "PublishedAs",
    "RerenderCreate",
    "RoutineCreate",
    "RoutineList",
    "RoutinePublic",
    "SkippedSong",
    "SubmitCreate",
    "SubmitPublic",
    "TrackList",
    "TrackPublic",
    "UploadCreate",
    "UploadTicket",
]


# -- errors -------------------------------------------------------------------------------------------------
class ErrorDetail(BaseModel):
    code: str = Field(description="Machine-readable: not_found, invalid_key, rate_limited, fps, ...")
    message: str = Field(description="For people: what was refused and why")


class ErrorBody(BaseModel):
    """The body of every 4xx and 5xx answer (:mod:`api.errors`)."""

    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, object]] = {
    "4XX": {"model": ErrorBody, "description": "Refused; the code says why"},
    "5XX": {"model": ErrorBody, "description": "A part of the service is down; try again"},
}
"""What every operation may answer besides its success, as the OpenAPI document declares it."""


# -- tracks -------------------------------------------------------------------------------------------------
class TrackPublic(BaseModel):
    sha256: str
    filename: str
    ext: str
    size_bytes: int
    created_at: float

    @classmethod
    def from_record(cls, r: TrackRecord) -> TrackPublic:
        return cls(
            sha256=r.sha256, filename=r.filename, ext=r.ext, size_bytes=r.size_bytes, created_at=r.created_at
        )


class TrackList(BaseModel):
    items: list[TrackPublic]
    next_cursor: str | None


class UploadCreate(BaseModel):
    """Ask for a presigned URL to upload a big song straight to storage."""

    model_config = {"extra": "forbid"}

    filename: str = Field(min_length=1, max_length=255)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the bytes, lowercase hex.")
    size_bytes: int = Field(gt=0, description="Exact size; the URL accepts only this many bytes.")


class UploadTicket(BaseModel):
    """Where to PUT a big song: once, sending every one of ``headers`` (they are signed)."""

    upload_id: str
    url: str
    method: str = "PUT"
    headers: dict[str, str] = Field(
        description="Send each with the PUT: Content-Length (the declared size) and If-None-Match: *"
        " (the URL writes only an empty key, so it is refused once the upload was completed)."
    )
    expires_at: float
    complete_url: str


# -- jobs ---------------------------------------------------------------------------------------------------
class SubmitCreate(BaseModel):
    """Render one or more of the team's tracks: one job each, grouped in one batch."""

    model_config = {"extra": "forbid"}

    tracks: list[Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]] = Field(
        min_length=1, description="SHA-256 of each track, lowercase hex (an album: many)."
    )
    options: JobOptions = Field(default_factory=JobOptions)
    priority: int = Field(default=5, ge=0, le=9, description="9 runs first.")
    callback_url: AnyHttpUrl | None = Field(
        default=None, description="POSTed, signed, when a job or the batch ends."
    )
    force: bool = Field(default=False, description="Render again even if the same request was rendered.")
    name: str = Field(
        default="",
        max_length=200,
        description="The album's name (the upload's folder, or typed); may be empty.",
    )


class RerenderCreate(BaseModel):
    """Render a job's song again with other options: another take, listed under the album's song."""

    model_config = {"extra": "forbid"}

    options: JobOptions
    priority: int = Field(default=5, ge=0, le=9, description="9 runs first.")


class PublishedAs(BaseModel):
    """The routine a job was published as."""

    routine_id: str
    title: str


class JobPublic(BaseModel):
    id: str
    batch_id: str | None
    track_sha256: str
    track_name: str
    options: JobOptions
    priority: int
    state: JobState
    progress: float
    error_code: str | None
    error_message: str | None
    artifacts: list[str] = Field(description="Kinds of files ready to download.")
    summary: DanceBrief | None = Field(
        description="Once done: the tempo, length and style danced (the style auto chose, resolved)."
    )
    rerender_of: str | None = Field(default=None, description="The album job whose song this renders again.")
    published: PublishedAs | None = Field(default=None, description="The routine it was published as.")
    created_at: float
    started_at: float | None
    finished_at: float | None
    deduplicated: bool = False

    @classmethod
    def from_record(
        cls, r: JobRecord, *, deduplicated: bool = False, routine: RoutineRecord | None = None
    ) -> JobPublic:
        return cls(
            id=r.id,
            batch_id=r.batch_id,
            track_sha256=r.track_sha256,
            track_name=r.track_name,
            options=r.options,
            priority=r.priority,
            state=r.state,
            progress=r.progress,
            error_code=r.error_code,
            error_message=r.error_message,
            artifacts=sorted(r.artifacts),
            summary=r.summary,
            rerender_of=r.rerender_of,
            published=PublishedAs(routine_id=routine.id, title=routine.title) if routine else None,
            created_at=r.created_at,
            started_at=r.started_at,
            finished_at=r.finished_at,
            deduplicated=deduplicated,
        )


class JobList(BaseModel):
    items: list[JobPublic]
    next_cursor: str | None


class BatchPublic(BaseModel):
    id: str
    name: str = Field(description="The album's name ('' when the upload gave none).")
    job_ids: list[str]
    state: str
    progress: float
    counts: dict[str, int]
    created_at: float


class BatchList(BaseModel):
    items: list[BatchPublic]
    next_cursor: str | None


class LinkTicket(BaseModel):
    """A link a browser can follow without the key (a download), until ``expires_at``."""

    url: str
    expires_at: float


class SubmitPublic(BaseModel):
    batch: BatchPublic
    jobs: list[JobPublic]


class ArtifactLink(BaseModel):
    kind: str
    filename: str
    url: str


class ArtifactsPublic(BaseModel):
    job_id: str
    expires_at: float
    artifacts: list[ArtifactLink]


# -- routines -----------------------------------------------------------------------------------------------
class RoutineCreate(BaseModel):
    model_config = {"extra": "forbid"}

    job_id: str = Field(max_length=80)
    title: str = Field(min_length=1, max_length=200)
    tags: list[str] = Field(default_factory=list, max_length=32)
    style: str | None = Field(default=None, max_length=40, description="Defaults to the dance's style.")


class RoutinePublic(BaseModel):
    id: str
    job_id: str
    title: str
    tags: list[str]
    style: str
    tempo_bpm: float
    duration_s: float
    kind: str = Field(description=f"One of {', '.join(ROUTINE_KINDS)}.")
    profile: str | None = Field(description="A workout's intensity profile.")
    impact: str | None = Field(description="A workout's impact: low or high.")
    intensity: float = Field(description="Mean joint speed of the dance, m/s.")
    intensity_level: str = Field(description=f"One of {', '.join(INTENSITY_LEVELS)}, from the MET value.")
    met: float = Field(description="MET value from the motion (the Compendium-calibrated estimate).")
    kcal_per_min: float
    calibration: str
    intensity_curve: list[float] = Field(description="A workout's target intensity per 8-count, 0 to 1.")
    cue_sheet: list[CueLine] = Field(description="A workout's cue sheet, one line per 8-count.")
    created_at: float
    downloads: list[ArtifactLink] | None = None
    downloads_expire_at: float | None = None

    @classmethod
    def from_record(cls, r: RoutineRecord) -> RoutinePublic:
        cues = r.sheet.cues if r.sheet is not None else []
        return cls(
            id=r.id,
            job_id=r.job_id,
            title=r.title,
            tags=r.tags,
            style=r.style,
            tempo_bpm=r.tempo_bpm,
            duration_s=r.duration_s,
            kind=r.kind,
            profile=r.profile,
            impact=r.impact,
            intensity=r.intensity,
            intensity_level=r.intensity_level,
            met=r.met,
            kcal_per_min=r.kcal_per_min,
            calibration=r.calibration,
            intensity_curve=[c.target for c in cues if c.index > 0],
            cue_sheet=list(cues),
            created_at=r.created_at,
        )


class RoutineList(BaseModel):
    items: list[RoutinePublic]
    next_cursor: str | None


# -- albums -----------------------------------------------------------------------------------------------
class AlbumPublishCreate(BaseModel):
    """Publish a whole album: each song once, as its newest finished take, titled by its name."""

    model_config = {"extra": "forbid"}

    tags: list[str] = Field(default_factory=list, max_length=32, description="The album's name is added.")
    style: str | None = Field(default=None, max_length=40, description="Defaults to each dance's style.")


class SkippedSong(BaseModel):
    job_id: str
    track_name: str
    reason: str


class AlbumPublished(BaseModel):
    batch_id: str
    published: list[RoutinePublic]
    skipped: list[SkippedSong] = Field(description="Songs left out, each with the reason, a sentence.")


# -- keys ---------------------------------------------------------------------------------------------------
class KeyCreate(BaseModel):
    model_config = {"extra": "forbid"}

    team: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,62}$")
    name: str = Field(min_length=1, max_length=100)
    scopes: list[str] = Field(min_length=1, description=f"Any of {', '.join(SCOPES)}.")
    rate_limit_per_minute: int | None = Field(default=None, gt=0)


class KeyPublic(BaseModel):
    id: str
    team: str
    name: str
    scopes: list[str]
    rate_limit_per_minute: int | None
    created_at: float
    revoked_at: float | None

    @classmethod
    def from_record(cls, r: ApiKeyRecord) -> KeyPublic:
        return cls(
            id=r.id,
            team=r.team,
            name=r.name,
            scopes=r.scopes,
            rate_limit_per_minute=r.rate_limit_per_minute,
            created_at=r.created_at,
            revoked_at=r.revoked_at,
        )


class KeyCreated(BaseModel):
    key: KeyPublic
    token: str = Field(description="The secret key; shown this once only.")


class KeyList(BaseModel):
    items: list[KeyPublic]


class CallbackSecretCreated(BaseModel):
    team: str
    secret: str = Field(description="HMAC-SHA256 key of the team's callbacks; shown this once only.")
    created_at: float
