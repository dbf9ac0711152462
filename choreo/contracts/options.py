"""``RenderOptions``: what to render, one validated model for the command line and the service.

Every option has the default a silent caller gets. The choices themselves
(frame rates, formats, rigs, energy levels, synthesizers) are
:mod:`choreo.contracts.choices`. The
service's job options (:class:`choreo.service.records.JobOptions`) are these
options, narrowed to the formats a worker uploads.

Validators raise :class:`~choreo.errors.ParameterError` (a ``ValueError``), so
pydantic reports a bad field as a ``ValidationError`` naming it, which the API
answers with a 422; :meth:`RenderOptions.parse` turns it into one
``ParameterError`` line for the command line.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from choreo.contracts.choices import (
    AUTO,
    DANCE_FORMATS,
    DEFAULT_FPS,
    ENERGY_LEVELS,
    PREVIEW_FORMATS,
    RIGS,
    STYLES,
    SUPPORTED_FPS,
    SYNTHS,
    Energy,
    Synth,
)
from choreo.contracts.routine import IMPACTS, ROUTINE_PROFILES, Impact, parse_profile
from choreo.errors import ParameterError
from choreo.models.energy import DEFAULT_BODY_MASS_KG

__all__ = ["RenderOptions"]

_STYLE_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")


class RenderOptions(BaseModel):
    """What to render.

    Parameters
    ----------
    fps : one of :data:`~choreo.contracts.choices.SUPPORTED_FPS`
    formats : file extensions from :data:`~choreo.contracts.choices.DANCE_FORMATS` and
        :data:`~choreo.contracts.choices.PREVIEW_FORMATS`, duplicates dropped
    seed : 0 <= seed < 2**63; same song, same seed, same dance
    style : ``auto`` (chosen from the tempo) or a style of the phrase library (checked when it plans)
    rig : one of :data:`~choreo.contracts.choices.RIGS`
    units : ``m`` or ``cm``; None means the rig's own (metres for smpl)
    in_place : keep the dancer on the spot (no horizontal root motion)
    video_start_s, video_length_s : the mp4's excerpt, from ``video_start_s`` for ``video_length_s``
        seconds; a length of None renders to the end of the song
    energy : how big the moves are, from :data:`~choreo.contracts.choices.ENERGY_LEVELS` (``auto``: the music)
    synth : one of :data:`~choreo.contracts.choices.SYNTHS`, who performs the plan of real mocap phrases:
        ``blend`` joins them (the default), ``model`` is the guided LSTM
    routine : None for a dance; a workout's profile (:data:`~choreo.contracts.routine.ROUTINE_PROFILES`)
        or custom curve (numbers 1 to 10 per minute, ``"3,5,7,5"``), see :mod:`choreo.contracts.routine`
    body_mass_kg : the body mass a workout's energy estimate is for (kilocalories)
    impact : a workout's impact, from :data:`~choreo.contracts.routine.IMPACTS` (``low``: no flight)
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    fps: int = Field(default=DEFAULT_FPS, description=f"One of {', '.join(map(str, SUPPORTED_FPS))}.")
    formats: tuple[str, ...] = Field(default=("bvh",), min_length=1, description="File extensions.")
    seed: int = Field(default=0, ge=0, lt=2**63, description="Same song, same seed, same dance.")
    style: str = Field(default=AUTO, description=f"{AUTO} or one of {', '.join(STYLES)}.")
    rig: str = Field(default="smpl", description=f"One of {', '.join(RIGS)}.")
    units: Literal["m", "cm"] | None = Field(default=None, description="m or cm; unset: the rig's own.")
    in_place: bool = Field(default=False, description="Keep the dancer on the spot.")
    video_start_s: float = Field(default=0.0, ge=0, description="mp4: where the excerpt starts, seconds.")
    video_length_s: float | None = Field(
        default=30.0, gt=0, description="mp4: the excerpt's length, seconds; unset: to the end of the song."
    )
    energy: Energy = Field(default="auto", description=f"How big the moves are: {', '.join(ENERGY_LEVELS)}.")
    synth: Synth = Field(
        default="blend",
        description="Who performs the plan: blend (joined phrases) or model (the LSTM).",
    )
    routine: str | None = Field(
        default=None,
        description=f"A workout: {', '.join(ROUTINE_PROFILES)} or numbers 1-10 per minute; unset: a dance.",
    )
    impact: Impact = Field(default="low", description=f"A workout's impact: {', '.join(IMPACTS)}.")
    body_mass_kg: float = Field(
        default=DEFAULT_BODY_MASS_KG,
        ge=20,
        le=300,
        description="A workout's kilocalories are for this body mass.",
    )

    @field_validator("routine", mode="before")
    @classmethod
    def _known_routine(cls, routine: Any) -> Any:
        if routine is None or routine == "":
            return None
        if not isinstance(routine, str):
            raise ParameterError(f"routine must be a profile name or a curve, got {routine!r}")
        name, curve = parse_profile(routine)
        return name if not curve else ",".join(f"{v:g}" for v in curve)

    @field_validator("impact", mode="before")
    @classmethod
    def _known_impact(cls, impact: Any) -> Any:
        if impact not in IMPACTS:
            raise ParameterError(f"unknown impact {impact!r}; choose one of {', '.join(IMPACTS)}")
        return impact

    @field_validator("fps")
    @classmethod
    def _known_fps(cls, fps: int) -> int:
        if fps not in SUPPORTED_FPS:
            raise ParameterError(f"unsupported fps {fps}; choose one of {', '.join(map(str, SUPPORTED_FPS))}")
        return fps

    @field_validator("formats")
    @classmethod
    def _known_formats(cls, formats: tuple[str, ...]) -> tuple[str, ...]:
        known = cls.known_formats()
        unknown = [f for f in formats if f not in known]
        if unknown:
            raise ParameterError(f"unknown format {', '.join(unknown)}; choose from {', '.join(known)}")
        return tuple(dict.fromkeys(formats))

    @field_validator("style")
    @classmethod
    def _style_name(cls, style: str) -> str:
        if not _STYLE_NAME.fullmatch(style):
            raise ParameterError(f"style must be a name of letters, digits, - or _, got {style!r}")
        return style

    @field_validator("energy", mode="before")
    @classmethod
    def _known_energy(cls, energy: Any) -> Any:
        if energy not in ENERGY_LEVELS:
            raise ParameterError(f"unknown energy {energy!r}; choose one of {', '.join(ENERGY_LEVELS)}")
        return energy

    @field_validator("synth", mode="before")
    @classmethod
    def _known_synth(cls, synth: Any) -> Any:
        if synth not in SYNTHS:
            raise ParameterError(f"unknown synthesizer {synth!r}; choose one of {', '.join(SYNTHS)}")
        return synth

    @field_validator("units", mode="before")
    @classmethod
    def _blank_units_are_unset(cls, units: Any) -> Any:
        # A form's empty text field means what leaving the option out means: the rig's own units.
        return None if units == "" else units

    @field_validator("rig")
    @classmethod
    def _known_rig(cls, rig: str) -> str:
        if rig not in RIGS:
            raise ParameterError(f"unknown rig {rig!r}; choose one of {', '.join(RIGS)}")
        return rig

    @classmethod
    def known_formats(cls) -> tuple[str, ...]:
        """The formats these options may ask for."""
        return (*DANCE_FORMATS, *PREVIEW_FORMATS)

    @classmethod
    def parse(cls, **values: Any) -> RenderOptions:
        """Validate user input; raises one :class:`ParameterError` naming each bad option.

        Examples
        --------
        >>> RenderOptions.parse(fps=29)
        Traceback (most recent call last):
        ...
        choreo.errors.ParameterError: fps: unsupported fps 29; choose one of 24, 25, 30, 50, 60
        """
        try:
            return cls(**values)
        except ValidationError as exc:
            raise ParameterError(_describe(exc)) from None


def _describe(exc: ValidationError) -> str:
    """One line naming every bad field of a pydantic validation error and why."""
    parts = []
    for error in exc.errors():
        field = ".".join(str(p) for p in error["loc"]) or "options"
        message = str(error["msg"]).removeprefix("Value error, ")
        parts.append(f"{field}: {message}")
    return "; ".join(parts)
