"""Choreo Studio: the web page at ``/studio``, and the two routes only it needs.

* ``GET /v1/options``: every job option with its type, default and choices,
  read from :class:`~choreo.service.records.JobOptions`, so an option added to
  the model appears on the page without a change to the page.
* ``GET /v1/jobs/{id}/timeline``: a done job's beats, bars (downbeats) and,
  when its summary file has a plan, the phrase boundaries, for the player's timeline.

The page itself is static files built by ``make studio`` (``studio/build.mjs``
copies the sources and the vendored three.js from ``node_modules``); nothing
comes from a CDN, so the Studio works offline.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field, ValidationError
from starlette.types import Receive, Scope, Send

from api.deps import Ctx, OwnedJob, get_ctx
from api.errors import ApiError
from choreo.contracts.choices import (
    AUDIO_EXTENSIONS,
    AUTO,
    ENERGY_LEVELS,
    MOTION_EXTENSIONS,
    RIGS,
    STYLES,
    SUPPORTED_FPS,
    SYNTHS,
)
from choreo.contracts.plan import Plan
from choreo.contracts.summary import DanceSummary
from choreo.models import merged_style_note, shipped_merged_styles
from choreo.service.libraries import LibraryState, list_libraries
from choreo.service.records import JobOptions, JobState

__all__ = ["install_studio", "router", "studio_dir"]

log = logging.getLogger(__name__)

router = APIRouter(prefix="/v1", tags=["studio"])

_REPO_STUDIO = Path(__file__).resolve().parents[2] / "studio" / "dist"

_CHOICES: dict[str, list[Any]] = {
    "fps": list(SUPPORTED_FPS),
    "formats": list(JobOptions.known_formats()),
    "style": [AUTO, *STYLES],
    "rig": list(RIGS),
    "energy": list(ENERGY_LEVELS),
    "synth": list(SYNTHS),
}
"""Choices the model checks in validators (its schema cannot say them); enums speak for themselves."""


class OptionField(BaseModel):
    name: str
    type: str = Field(description="integer, number, boolean, string or array")
    default: Any = None
    choices: list[Any] | None = None
    multiple: bool = Field(default=False, description="A list of choices (formats).")
    nullable: bool = Field(default=False, description="May be left unset (null): the option's own default.")
    minimum: float | None = None
    maximum: float | None = None
    description: str = ""
    notes: dict[str, str] = Field(
        default_factory=dict, description="Notes on some choices, by choice: a deprecated style says so."
    )


class LibraryOption(BaseModel):
    """One of the caller's team libraries a job may name in ``options.library``, with its styles."""

    id: str
    name: str
    sha256: str
    styles: list[str]


class OptionList(BaseModel):
    fields: list[OptionField]
    audio_extensions: list[str] = Field(description="File extensions accepted as songs.")
    motion_extensions: list[str] = Field(description="File extensions a library is built from.")
    libraries: list[LibraryOption] = Field(
        default_factory=list, description="The team's built libraries (when a key is sent), newest first."
    )


def _field(name: str, schema: dict[str, Any], defs: dict[str, Any], default: Any) -> OptionField:
    ref = schema.get("$ref") or next((s.get("$ref") for s in schema.get("allOf", []) if "$ref" in s), None)
    if ref:
        schema = defs[ref.rsplit("/", 1)[-1]] | {k: v for k, v in schema.items() if k != "allOf"}
    branches = schema.get("anyOf", [])
    nullable = any(b.get("type") == "null" for b in branches)
    if branches:  # an optional field: describe its one non-null form
        schema = next((b for b in branches if b.get("type") != "null"), {}) | {
            k: v for k, v in schema.items() if k != "anyOf"
        }
    multiple = schema.get("type") == "array"
    inner = schema.get("items", {}) if multiple else schema
    choices = inner.get("enum") or _CHOICES.get(name)
    return OptionField(
        name=name,
        type=schema.get("type") or inner.get("type") or "string",
        default=default,
        choices=list(choices) if choices else None,
        multiple=multiple,
        nullable=nullable,
        minimum=schema.get("minimum", schema.get("exclusiveMinimum")),
        maximum=schema.get("maximum", schema.get("exclusiveMaximum")),
        description=schema.get("description", ""),
    )


@router.get("/options", response_model=OptionList)
def job_options(request: Request) -> OptionList:
    """The render options a job takes, as the page's form shows them (no key needed; with one, the
    team's libraries and their styles too)."""
    schema = JobOptions.model_json_schema()
    defs = schema.get("$defs", {})
    defaults = JobOptions().model_dump(mode="json")
    fields = [_field(n, s, defs, defaults.get(n)) for n, s in schema["properties"].items()]
    for field in fields:
        if field.name == "style":
            _note_deprecated_styles(field)
    key = getattr(request.state, "api_key", None)
    libraries = [
        LibraryOption(id=r.id, name=r.name, sha256=r.sha256, styles=list(r.styles))
        for r in (list_libraries(get_ctx(request), key.team) if key is not None else [])
        if r.state == LibraryState.READY and r.sha256 is not None
    ]
    return OptionList(
        fields=fields,
        audio_extensions=list(AUDIO_EXTENSIONS),
        motion_extensions=list(MOTION_EXTENSIONS),
        libraries=libraries,
    )


def _note_deprecated_styles(field: OptionField) -> None:
    """Mark the styles the shipped library merged away, in the field's notes and its description."""
    merged = shipped_merged_styles()
    field.notes = {s: merged_style_note(s, merged[s]) for s in field.choices or [] if s in merged}
    if field.notes:
        notes = (f"{note.capitalize()}." for note in field.notes.values())
        field.description = " ".join([field.description, *notes])


class Phrase(BaseModel):
    start_s: float
    end_s: float
    label: str = ""


class Timeline(BaseModel):
    job_id: str
    duration_s: float
    fps: float
    tempo_bpm: float
    beat_times: list[float]
    bar_times: list[float] = Field(description="Where each bar starts (the downbeats), seconds.")
    phrases: list[Phrase] = Field(description="The plan's phrases, when the dance was planned.")


def _phrases(plan: Plan | None) -> list[Phrase]:
    """The plan's phrases (its segments) with their spans in the song and where they come from."""
    if plan is None:
        return []
    return [
        Phrase(start_s=seg.start_s, end_s=seg.end_s, label=seg.clip + (" (mirrored)" if seg.mirrored else ""))
        for seg in plan.segments
    ]


@router.get("/jobs/{job_id}/timeline", response_model=Timeline, tags=["jobs"])
def timeline(job: OwnedJob, ctx: Ctx) -> Timeline:
    """The beats, bars and plan phrases of a done job, read from its JSON summary file."""
    if job.state != JobState.DONE or "json" not in job.artifacts:
        state = job.state.value
        raise ApiError(409, "job_not_done", f"job {job.id} is {state}; its timeline exists once it is done")
    try:
        summary = DanceSummary.model_validate(ctx.storage.get_json(job.artifacts["json"]))
    except ValidationError as exc:
        log.warning("job %s: its summary does not validate: %s", job.id, exc)
        raise ApiError(
            409, "summary_unreadable", f"job {job.id}'s summary is of an older format; render it again"
        ) from None
    return Timeline(
        job_id=job.id,
        duration_s=summary.duration_s,
        fps=summary.fps,
        tempo_bpm=summary.tempo_bpm,
        beat_times=summary.beat_times,
        bar_times=summary.downbeat_times,
        phrases=_phrases(summary.plan),
    )


def studio_dir(configured: str = "") -> Path:
    """Where the built page is: ``CHOREO_STUDIO_DIR``, or ``studio/dist`` of this checkout."""
    return Path(configured) if configured else _REPO_STUDIO


class _StudioFiles(StaticFiles):
    """The built page's files; until it is built, a page saying how to build it (no restart needed)."""

    def __init__(self, folder: Path) -> None:
        super().__init__(directory=folder, html=True, check_dir=False)
        self.folder = folder

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not (self.folder / "index.html").is_file():
            page = HTMLResponse(
                "<!doctype html><title>Choreo Studio</title>"
                f"<p>The Studio page is not built in {self.folder}. Run <code>make studio</code> "
                "(npm ci and node build.mjs in studio/), then reload.</p>",
                status_code=503,
            )
            await page(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def install_studio(app: FastAPI, folder: Path) -> None:
    """Serve the built page at ``/studio/`` (and send ``/`` and ``/studio`` there)."""

    @app.get("/", include_in_schema=False)
    @app.get("/studio", include_in_schema=False)
    def _to_studio() -> RedirectResponse:
        return RedirectResponse("/studio/")

    app.mount("/studio", _StudioFiles(folder), name="studio")
