"""The records the service keeps: tracks, jobs, batches, routines and API keys.

Each record is a pydantic model that is stored as JSON twice: in Redis (the
index, fast, may be lost) and in object storage (the record, durable). The
storage key of each is given by a ``*_key`` function here, so the rebuild
command and the writers agree.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from choreo.contracts.choices import AUTO, DANCE_FORMATS, STYLES
from choreo.contracts.options import RenderOptions
from choreo.contracts.summary import DanceBrief, RoutineSheet
from choreo.errors import ParameterError
from choreo.models import shipped_library_sha256
from choreo.models.energy import INTENSITY_LEVELS as ENERGY_INTENSITY_LEVELS

__all__ = [
    "ACTIVE_STATES",
    "PERFORMED",
    "PREPARED",
    "INTENSITY_LEVELS",
    "ROUTINE_KINDS",
    "LIBRARY_ID_PATTERN",
    "SCOPES",
    "TERMINAL_STATES",
    "ApiKeyRecord",
    "BatchRecord",
    "JobOptions",
    "JobRecord",
    "JobState",
    "RoutineRecord",
    "TeamSecretRecord",
    "TrackRecord",
    "batch_key",
    "job_prefix",
    "job_record_key",
    "key_record_key",
    "new_id",
    "now_s",
    "routine_key",
    "song_key",
    "team_secret_key",
    "team_track_key",
    "work_key",
]

SCOPES = ("content", "fitness", "admin", "operator")
"""content: upload, submit, publish; fitness: read routines; admin: manage the team's keys and
callback secret; operator: manage the keys of every team (the service's own staff)."""

INTENSITY_LEVELS = ENERGY_INTENSITY_LEVELS
"""A routine's level, from its MET value (:func:`choreo.models.energy.intensity_level`)."""
ROUTINE_KINDS = ("dance", "workout")


class JobState(StrEnum):
    """Where a job is; the order of the first five is the order a job moves in."""

    QUEUED = "queued"
    DECODING = "decoding"
    GENERATING = "generating"
    EXPORTING = "exporting"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


TERMINAL_STATES = frozenset({JobState.DONE, JobState.FAILED, JobState.CANCELLED})
ACTIVE_STATES = frozenset(set(JobState) - TERMINAL_STATES)
STATE_ORDER = {s: i for i, s in enumerate(JobState)}


def new_id(prefix: str) -> str:
    """A fresh random id such as ``job_3f2a...``; ids never encode a team or a time."""
    return f"{prefix}_{uuid.uuid4().hex}"


def now_s() -> float:
    return round(time.time(), 3)


LIBRARY_ID_PATTERN = r"^lib_[0-9a-f]{32}$"
"""A team library's id (:mod:`choreo.service.libraries`)."""


class JobOptions(RenderOptions):
    """How to render one song: the render options, narrowed to the dance formats a worker uploads.

    ``library`` names one of the team's own phrase libraries to plan on (the shipped one when
    unset); a style may then be any of its styles. What only the service has (priority,
    callback, force) is in the submit request beside them.
    """

    library: str | None = Field(
        default=None,
        pattern=LIBRARY_ID_PATTERN,
        description="Id of one of the team's libraries to dance in; unset: the shipped library.",
    )

    @classmethod
    def known_formats(cls) -> tuple[str, ...]:
        return (*DANCE_FORMATS, "mp4")  # mp4: the shaded video with the song, off unless asked for

    @model_validator(mode="after")
    def _shipped_styles(self) -> JobOptions:
        # without a library of its own, a job dances with the shipped library, whose styles are the model's;
        # a team library's styles are checked against it when the job is submitted
        if self.library is None and self.style != AUTO and self.style not in STYLES:
            raise ParameterError(f"unknown style {self.style!r}; choose {AUTO} or one of {', '.join(STYLES)}")
        return self

    def fingerprint(self, track_sha256: str, *, library_sha256: str | None = None) -> str:
        """A digest of the track and every option that changes the output: the dedup key.

        ``library_sha256`` is the hash of the team library the job names (``library``); without
        one, the shipped library's.
        """
        # Options left at their defaults since they were added (units, the mp4 excerpt) are left out,
        # so that requests made before they existed keep their key; so are the energy and the synth
        # when they ask for what the model always did. The key names the library the dance is planned
        # on, whoever performs it (the blend and the network alike), by its hash, not its id.
        later = {
            "units": None,
            "video_start_s": 0.0,
            "video_length_s": 30.0,
            "energy": "auto",
            "synth": "model",
            "routine": None,
            "body_mass_kg": 70.0,
        }
        unset = {k for k, v in later.items() if getattr(self, k) == v}
        if self.routine is None or self.impact == "low":  # the impact changes only a workout
            unset.add("impact")
        canonical = self.model_dump(exclude=unset)
        canonical |= {"formats": sorted(set(self.formats)), "track": track_sha256}
        canonical["library"] = library_sha256 or shipped_library_sha256()
        return hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()


class TrackRecord(BaseModel):
    """One team's song, stored once per content under ``tracks/<sha256>.<ext>``."""

    sha256: str
    team: str
    ext: str
    size_bytes: int
    filename: str
    created_at: float = Field(default_factory=now_s)

    @property
    def storage_key(self) -> str:
        return song_key(self.sha256, self.ext)


class JobRecord(BaseModel):
    """One song's render and everything known about it."""

    id: str
    team: str
    batch_id: str | None = None
    track_sha256: str
    track_ext: str
    track_name: str
    options: JobOptions
    priority: int = 5
    callback_url: str | None = None
    fingerprint: str
    rerender_of: str | None = Field(
        default=None, description="The album's job whose song this renders again (the first take)."
    )
    state: JobState = JobState.QUEUED
    progress: float = 0.0
    error_code: str | None = None
    error_message: str | None = None
    artifacts: dict[str, str] = Field(default_factory=dict, description="Storage key by kind.")
    summary: DanceBrief | None = Field(default=None, description="Set when the job is done.")
    timings_s: dict[str, float] = Field(default_factory=dict)
    seq: int = 0
    created_at: float = Field(default_factory=now_s)
    started_at: float | None = None
    finished_at: float | None = None
    announced: bool = Field(default=False, description="Its end was counted and its callbacks queued.")
    updated_at: float = Field(default_factory=now_s, description="Its last change (state, progress, end).")

    @field_validator("summary", mode="before")
    @classmethod
    def _no_summary_yet(cls, value: Any) -> Any:
        # Records written before the summary was typed stored an unfinished job's summary as {}.
        return None if value == {} else value

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL_STATES


class BatchRecord(BaseModel):
    """An album: the jobs submitted in one request, with its own progress."""

    id: str
    team: str
    name: str = Field(default="", description="The album's name, as the upload gave it ('' when none).")
    job_ids: list[str]
    callback_url: str | None = None
    callback_sent: bool = False
    created_at: float = Field(default_factory=now_s)


class RoutineRecord(BaseModel):
    """A finished dance published for fitness apps."""

    id: str
    team: str
    job_id: str
    title: str
    tags: list[str] = Field(default_factory=list)
    style: str
    tempo_bpm: float
    duration_s: float
    intensity: float = Field(description="Mean joint speed of the dance, m/s.")
    intensity_level: str = Field(description="light, moderate or vigorous, from the MET value.")
    kind: Literal["dance", "workout"] = "dance"
    profile: str | None = Field(default=None, description="A workout's intensity profile.")
    impact: str | None = Field(default=None, description="A workout's impact: low or high.")
    motion_energy_m2_s2: float = Field(default=0.0, description="What the MET value is computed from.")
    met: float = Field(default=0.0, description="MET value of the whole routine (0: not scored).")
    kcal_per_min: float = Field(default=0.0, description="At the routine's body mass (70 kg for a dance).")
    calibration: str = Field(default="", description="The energy calibration the scores come from.")
    sheet: RoutineSheet | None = Field(default=None, description="A workout's cue sheet and intensity curve.")
    artifacts: dict[str, str] = Field(default_factory=dict)
    seq: int = 0
    created_at: float = Field(default_factory=now_s)


class ApiKeyRecord(BaseModel):
    """An API key as stored: its secret only as a hash."""

    id: str
    team: str
    name: str
    scopes: list[str]
    secret_sha256: str
    rate_limit_per_minute: int | None = None
    created_at: float = Field(default_factory=now_s)
    revoked_at: float | None = None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


class TeamSecretRecord(BaseModel):
    """The HMAC key that signs one team's callbacks."""

    team: str
    secret: str
    created_at: float = Field(default_factory=now_s)


def song_key(sha256: str, ext: str) -> str:
    return f"tracks/{sha256}.{ext}"


def team_track_key(team: str, sha256: str) -> str:
    return f"teams/{team}/tracks/{sha256}.json"


def team_secret_key(team: str) -> str:
    return f"teams/{team}/callback_secret.json"


def job_prefix(job_id: str) -> str:
    return f"jobs/{job_id}/"


PREPARED = "prepared.npz"
"""The prepare stage's output (a song's analysis and plan), under the job's ``work/``."""

PERFORMED = "performed.npz"
"""The perform stage's output (the raw dance), under the job's ``work/``."""


def work_key(job_id: str, name: str) -> str:
    """Where a stage of the job keeps its output ``name``: ``jobs/<id>/work/<name>``."""
    return f"{job_prefix(job_id)}work/{name}"


def job_record_key(job_id: str) -> str:
    return f"jobs/{job_id}/job.json"


def batch_key(batch_id: str) -> str:
    return f"batches/{batch_id}.json"


def routine_key(routine_id: str) -> str:
    return f"routines/{routine_id}.json"


def key_record_key(key_id: str) -> str:
    return f"keys/{key_id}.json"
