"""What a finished dance says about itself: one typed summary, in the JSON file and in the job record.

:class:`DanceSummary` is the ``<name>.json`` written beside every dance: the
provenance (which BVH has no slot for), the song's timing, the options, the
files and the plan, so a reader can match the dance to its song without the
audio. Its head, :class:`DanceBrief` (tempo, length, style, intensity, frames),
is what the service keeps in a job's record and its routines catalogue; the
brief is taken from the summary (:meth:`DanceSummary.brief`), never built
beside it. The finishing stage makes the summary (:meth:`DanceSummary.describe`),
the caller adds what only it knows (the command line its timings) and writes it
once; whoever reads it back validates it (``DanceSummary.model_validate``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator, WithJsonSchema

from choreo.contracts.contacts import ContactTrack
from choreo.contracts.generated import GeneratedMotion
from choreo.contracts.options import RenderOptions
from choreo.contracts.plan import Plan

__all__ = ["ContactSummary", "CueLine", "DanceBrief", "DanceSummary", "PlanField", "RoutineSheet"]


def _plan(value: Any) -> Plan:
    return value if isinstance(value, Plan) else Plan.from_dict(value)


PlanField = Annotated[
    Plan,
    PlainValidator(_plan),
    PlainSerializer(Plan.to_dict, return_type=dict),
    WithJsonSchema({"type": "object", "description": "A choreography plan (choreo.contracts.plan.Plan)."}),
]
"""A :class:`~choreo.contracts.plan.Plan` as a pydantic field: JSON in files, the typed plan in code."""


class CueLine(BaseModel):
    """One line of a workout's cue sheet: the plan's cue and what the finished motion did there."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int = Field(
        description="The 8-count's number, from 1; 0 for a free stretch without a steady beat."
    )
    start_s: float
    end_s: float
    move: int = Field(description="The move's number in the routine, from 1 (0: free).")
    name: str = Field(description="What the motion does, from its kinematics; one name per move.")
    side: str = Field(description="right (as first taught), left (mirrored) or - (free).")
    repeat: int = Field(description="Which repeat of the move on this side, from 1.")
    next_move_count: int | None = Field(description="The count (from 1) where the next move starts.")
    target: float = Field(description="The profile's intensity here, 0 to 1.")
    block: str = Field(description="teach, combine or free.")
    energy_m2_s2: float = Field(description="Mean squared joint speed of the finished motion here.")
    met: float
    level: str = Field(description="light, moderate or vigorous, from the MET value.")


class RoutineSheet(BaseModel):
    """A workout's report: its profile, the energy estimate, the cue sheet and the safety measured."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    profile: str
    curve: list[float] = Field(default_factory=list, description="A custom profile's numbers per minute.")
    impact: str
    body_mass_kg: float
    calibration: str = Field(description="The energy calibration's version (choreo/models/energy.py).")
    met: float = Field(description="MET value of the whole routine, from its motion energy.")
    kcal_per_min: float
    kcal_total: float
    intensity_level: str
    correlation_to_target: float = Field(description="Per 8-count motion energy against the target.")
    met_rms_error_to_target: float | None = Field(
        default=None,
        description="Root mean square of the 8-counts' MET against their target's (the plan's target "
        "energy through the calibration): the measure that still says something where the target is flat.",
    )
    safety: dict[str, int] = Field(description="Frames of the finished motion that break each rule.")
    excluded: dict[str, int] = Field(description="Library phrases left out, by reason.")
    cues: list[CueLine]


class DanceBrief(BaseModel):
    """What a finished dance is, in a line: the song's tempo and length, the style, the intensity."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tempo_bpm: float
    duration_s: float
    style: str = Field(description="The style the dance was generated in (auto resolved).")
    mean_joint_speed_m_per_s: float = Field(description="Mean speed of the 24 joints.")
    motion_energy_m2_s2: float = Field(
        default=0.0, description="Mean squared joint speed: what the energy estimate (MET) is made from."
    )
    frames: int
    fps: float
    model_version: str
    model_trained: bool
    routine: RoutineSheet | None = Field(default=None, description="A workout's cue sheet and estimate.")


class ContactSummary(BaseModel):
    """The finished dance's contact track: per point (``left_heel`` ... ``right_hand``), its
    contacts as ``[touch-down, lift-off]`` seconds, and its share of frames in contact."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    intervals_s: dict[str, list[tuple[float, float]]]
    share: dict[str, float]

    @classmethod
    def of(cls, track: ContactTrack) -> ContactSummary:
        """The summary of ``track`` (at the finished dance's fps)."""
        return cls(intervals_s=track.intervals_s(), share=track.share())


class DanceSummary(DanceBrief):
    """What ``<name>.json`` says about a dance (seconds, frames, fps, beats per minute).

    The song's tempo and beats (``tempo_bpm``, ``beat_times``) and the dancer's pulse
    (``pulse_ratio``, ``pulse_bpm``) are stated apart: the tempo the dance steps at is the dance's
    choice (half time on a 180 BPM song), the beats are the song's.
    """

    generator: str
    seed: int
    song_sha256: str
    data_credits: list[str]
    synthesizer: str = "model"
    energy: str = "auto"
    library_sha256: str = ""
    song: str
    beat_times: list[float]
    """The song's beats (``tempo_bpm`` is fitted on them), whatever pulse the dancer steps at."""
    downbeat_times: list[float]
    breaks_s: list[list[float]] = Field(
        default_factory=list,
        description="The song's breaks, [start, end] s (the last accent before the music stops, where "
        "it comes back): the dancer holds still over them.",
    )
    pulse_ratio: float | None = Field(
        default=None,
        description="The dancer's pulse over the song's beat (the plan's steps, by song seconds): "
        "1 on the beat, 0.5 half time, 2 double time; None where no segment steps to a beat.",
    )
    pulse_bpm: float | None = Field(
        default=None, description="The dancer's pulse in beats per minute: tempo_bpm times pulse_ratio."
    )
    options: RenderOptions
    files: dict[str, str]
    timings_s: dict[str, float] | None = None
    plan: PlanField | None = None
    """The choreography plan the dance performed (absent in summaries written before every dance had one)."""
    contacts: ContactSummary | None = None
    """Where heels, toes and hands touch the floor (footstep events); absent in older summaries."""

    @classmethod
    def describe(
        cls,
        generated: GeneratedMotion,
        *,
        frames: int,
        fps: float,
        mean_joint_speed_m_per_s: float,
        motion_energy_m2_s2: float = 0.0,
        routine: RoutineSheet | None = None,
        options: RenderOptions,
        files: dict[str, Path],
        song_name: str,
        contacts: ContactTrack,
    ) -> DanceSummary:
        """The summary of a finished dance of ``frames`` at ``fps`` made from ``generated``, whose
        ``contacts`` are the finished dance's (:func:`choreo.pipeline.finished_contacts`)."""
        provenance, song = generated.provenance, generated.song
        pulse = generated.plan.pulse_ratio
        return cls(
            generator=provenance.generator,
            model_version=provenance.model_version,
            seed=provenance.seed,
            style=provenance.style,
            song_sha256=provenance.song_sha256,
            data_credits=list(provenance.data_credits),
            model_trained=provenance.model_trained,
            synthesizer=provenance.synthesizer,
            energy=provenance.energy,
            library_sha256=provenance.library_sha256,
            song=song_name,
            duration_s=round(song.duration_s, 6),
            frames=frames,
            fps=fps,
            tempo_bpm=round(song.tempo_bpm, 3),
            mean_joint_speed_m_per_s=round(mean_joint_speed_m_per_s, 4),
            motion_energy_m2_s2=round(motion_energy_m2_s2, 4),
            routine=routine,
            beat_times=[round(float(t), 4) for t in song.beat_times],
            downbeat_times=[round(float(t), 4) for t in song.downbeat_times],
            breaks_s=[[round(a, 4), round(b, 4)] for a, b in generated.plan.breaks_s],
            pulse_ratio=pulse,
            pulse_bpm=None if pulse is None else round(song.tempo_bpm * pulse, 3),
            options=options,
            files={kind: p.name for kind, p in files.items()},
            plan=generated.plan,
            contacts=ContactSummary.of(contacts),
        )

    def brief(self) -> DanceBrief:
        """The summary's head, as the service keeps it in a job's record."""
        return DanceBrief.model_validate(self.model_dump(include=set(DanceBrief.model_fields)))

    def write(self, path: Path) -> Path:
        """Write the summary as indented JSON (no ``timings_s``, ``plan``, ``contacts`` or ``routine``
        key when there is none); returns ``path``."""
        unset = {name for name in ("timings_s", "plan", "contacts", "routine") if getattr(self, name) is None}
        path.write_text(self.model_dump_json(indent=2, exclude=unset) + "\n")
        return path
