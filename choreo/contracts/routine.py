"""Workouts: the profiles and impact levels a caller picks, and the workout part of a plan.

A workout (``choreo render --routine PROFILE``, the job option ``routine``) is
danced in 8-counts shaped to an intensity curve over the song: a named profile
(:data:`ROUTINE_PROFILES`) or a custom curve, one number from 1 (easy) to 10
(all out) per minute of the song, written ``"3,5,7,5"``. What the planner
decided for it, the cue sheet above all, travels in :attr:`Plan.routine
<choreo.contracts.plan.Plan.routine>` as a :class:`WorkoutPlan`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from choreo.errors import ParameterError

__all__ = [
    "CURVE_MAX",
    "IMPACTS",
    "ROUTINE_PROFILES",
    "Cue",
    "Impact",
    "WorkoutPlan",
    "parse_profile",
]

Impact = Literal["low", "high"]
"""``low``: no flight phase and no jumps (a foot is always on the floor); ``high`` allows them."""

IMPACTS: tuple[Impact, ...] = get_args(Impact)

ROUTINE_PROFILES = ("steady", "pyramid", "intervals")
"""Named intensity curves: each a warm-up, a main part and a cool-down (``choreo.workout.curves``)."""

CURVE_MAX = 10.0
"""A custom curve's numbers run from 1 to this (an effort scale, the shape matters, not the unit)."""


def parse_profile(text: str) -> tuple[str, tuple[float, ...]]:
    """A profile name and, for a custom curve, its numbers per minute.

    Examples
    --------
    >>> parse_profile("pyramid")
    ('pyramid', ())
    >>> parse_profile("3, 5,7")
    ('custom', (3.0, 5.0, 7.0))

    Raises
    ------
    ParameterError
        For an unknown name or a curve that is not numbers from 1 to 10.
    """
    name = text.strip().lower()
    if name in ROUTINE_PROFILES:
        return name, ()
    parts = [p.strip() for p in name.split(",")]
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        raise ParameterError(
            f"unknown routine {text!r}; choose one of {', '.join(ROUTINE_PROFILES)} or give a curve, "
            "one number from 1 to 10 per minute (e.g. 3,5,7,5)"
        ) from None
    if not values or any(not 1.0 <= v <= CURVE_MAX for v in values):
        raise ParameterError(f"a routine curve's numbers run from 1 to {CURVE_MAX:g}, got {text!r}")
    return "custom", values


@dataclass(frozen=True)
class Cue:
    """One line of the cue sheet: an 8-count (or a free stretch without a steady beat)."""

    index: int
    """The 8-count's number in the routine, from 1; free stretches are numbered 0."""
    start_s: float
    end_s: float
    segment: int
    """The plan segment that dances it."""
    move: int
    """The move's number in the routine, from 1 in order of first appearance (0: free)."""
    name: str
    """What the motion does, from its kinematics (``choreo.workout.moves``); one name per move."""
    side: str
    """``right`` (the move as first taught), ``left`` (mirrored) or ``-`` (free)."""
    repeat: int
    """Which repeat of the move on this side this 8-count is, from 1."""
    next_move_count: int | None
    """The count (beats from the routine's first count, from 1) where the next move starts."""
    target: float
    """The profile's intensity here, 0 (rest) to 1 (all out)."""
    block: str
    """``teach`` (a move repeated, then mirrored), ``combine`` (two taught moves in turn) or ``free``."""


@dataclass(frozen=True)
class WorkoutPlan:
    """What the workout planner decided beyond the segments: profile, impact, cue sheet, exclusions."""

    profile: str
    curve: tuple[float, ...]
    """A custom profile's numbers per minute (empty for a named one)."""
    impact: str
    cues: tuple[Cue, ...]
    excluded: dict[str, int] = field(default_factory=dict)
    """Library phrases of the right length left out, counted by reason (one phrase may have several)."""
    excluded_phrases: tuple[dict[str, Any], ...] = ()
    """The excluded phrases of the routine's style, each with its clip, source span and reasons."""
    target_energy_m2_s2: tuple[float, float] = (0.0, 0.0)
    """The motion energy (mean squared joint speed) the planner aims at for intensity 0 and for 1:
    a cue's target in m^2/s^2 is the line between them, and in MET that through the calibration."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkoutPlan:
        """Inverse of ``dataclasses.asdict``; raises ``KeyError``/``TypeError`` on a malformed one."""
        low, high = data.get("target_energy_m2_s2", (0.0, 0.0))
        return cls(
            profile=str(data["profile"]),
            curve=tuple(float(v) for v in data.get("curve", ())),
            impact=str(data["impact"]),
            cues=tuple(Cue(**c) for c in data["cues"]),
            excluded={str(k): int(v) for k, v in data.get("excluded", {}).items()},
            excluded_phrases=tuple(data.get("excluded_phrases", ())),
            target_energy_m2_s2=(float(low), float(high)),
        )
