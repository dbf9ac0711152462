"""The plan: which phrase is danced over which bars, as data and as JSON.

A plan is what the planner decides and all the guide needs: per segment the
library phrase, whether it is mirrored (implied by the phrase), the song beats
its beats are pinned to, its stretch and beat ratio, and why it was chosen
when it is not the obvious choice (a style fallback, a repeated section).
The JSON form goes into the render's summary; ``choreo render --plan FILE``
reads it back (a saved summary or a plan alone), so an edited plan can be
re-rendered.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from choreo.contracts.routine import WorkoutPlan
from choreo.errors import ParameterError

__all__ = ["PLAN_FORMAT", "Plan", "Segment", "read_plan"]

PLAN_FORMAT = 1


@dataclass(frozen=True)
class Segment:
    """One phrase danced over consecutive bars."""

    phrase: int
    """Index into the library's phrase table."""
    start_bar: int
    n_bars: int
    song_beats_s: tuple[float, ...]
    """Song times the phrase's beats are pinned to, first and last included (the segment's span)."""
    clip: str
    source: str
    source_span_s: tuple[float, float]
    """First and last second of the phrase in its retargeted source clip."""
    mirrored: bool
    style: str
    phrase_beats: int
    beat_ratio: float
    """Phrase beats per song beat: 1, 2 (double time) or 0.5 (half time); 0 when free."""
    stretch: float
    """Song duration over source duration."""
    free: bool = False
    """The music has no steady beat here: the phrase runs at its own pace, ends pinned to the bars."""
    fallback: str | None = None
    """Why another style's phrase was taken, when it was."""
    repeat_of: int | None = None
    """Index of the segment this one dances again (a repeated section), when it does."""
    arm_amplitude: float = 1.0
    """How much of the phrase's arm movement is danced: 1 all of it, less brings the arms towards
    their mean pose over the segment (a workout's gentler 8-counts, ``choreo.workout.planner``)."""
    body_amplitude: float = 1.0
    """How big the phrase is danced above its feet: 1 as it is, less (more) scales the root's sway
    and bounce and the trunk's, head's and arms' rotations about their means over the segment, the
    feet kept where they step (:func:`choreo.choreography.guide.scale_body`; a workout's 8-counts
    following their target energy, :mod:`choreo.workout.intensity`)."""

    @property
    def start_s(self) -> float:
        return self.song_beats_s[0]

    @property
    def end_s(self) -> float:
        return self.song_beats_s[-1]


@dataclass(frozen=True)
class Plan:
    """A whole song's plan; segments are contiguous from 0 s to the song's end."""

    library_version: str
    library_sha256: str
    style: str
    energy: str
    seed: int
    duration_s: float
    segments: tuple[Segment, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    routine: WorkoutPlan | None = None
    """A workout's profile, impact and cue sheet (``choreo render --routine``); None for a dance."""
    breaks_s: tuple[tuple[float, float], ...] = ()
    """The song's breaks the dancer holds over, (start, end) s in order: it freezes in the pose it
    reached at the start (the last accent before the music stops) and comes back in at the end,
    where the music does (:mod:`choreo.choreography.holds`)."""

    def __post_init__(self) -> None:
        if not self.segments:
            raise ParameterError("a plan needs at least one segment")
        holds = np.asarray(self.breaks_s, dtype=np.float64).reshape(-1, 2)
        if np.any(holds[:, 1] <= holds[:, 0]) or np.any(holds[1:, 0] < holds[:-1, 1]):
            raise ParameterError("plan breaks must be (start, end) pairs that end after they start, in order")
        ends = np.array([(s.start_s, s.end_s) for s in self.segments])
        if np.any(ends[:, 1] <= ends[:, 0]):
            raise ParameterError("every plan segment must end after it starts")
        if np.any(np.abs(ends[1:, 0] - ends[:-1, 1]) > 1e-6):
            raise ParameterError("plan segments must follow each other without gaps")

    @property
    def junctions_s(self) -> np.ndarray:
        """Song times where one phrase hands over to the next, increasing."""
        return np.array([s.start_s for s in self.segments[1:]])

    @property
    def pulse_ratio(self) -> float | None:
        """The dancer's pulse over the song's beat: the ``beat_ratio`` danced for the most song seconds.

        1 steps on the song's beats, 2 in double time, 0.5 in half time (a 180 BPM song danced at 90);
        None where every segment is free (no beat to step to).
        """
        seconds: dict[float, float] = {}
        for segment in self.segments:
            if not segment.free and segment.beat_ratio > 0:
                ratio = float(segment.beat_ratio)
                seconds[ratio] = seconds.get(ratio, 0.0) + segment.end_s - segment.start_s
        return max(seconds, key=lambda ratio: seconds[ratio]) if seconds else None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; song times keep full precision, so a saved plan re-renders the same dance."""
        out = asdict(self)
        out["format"] = PLAN_FORMAT
        out["segments"], out["notes"] = list(out["segments"]), list(out["notes"])
        out["breaks_s"] = [list(pair) for pair in self.breaks_s]
        if out["routine"] is None:
            del out["routine"]
        else:
            out["routine"]["cues"] = list(out["routine"]["cues"])
            out["routine"]["curve"] = list(out["routine"]["curve"])
            out["routine"]["excluded_phrases"] = list(out["routine"]["excluded_phrases"])
        for seg in out["segments"]:
            seg["song_beats_s"] = list(seg["song_beats_s"])
            seg["source_span_s"] = list(seg["source_span_s"])
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Plan:
        """Inverse of :meth:`to_dict`.

        Raises
        ------
        ParameterError
            Naming the missing or malformed field.
        """
        if not isinstance(data, dict):
            raise ParameterError(f"a plan is a JSON object, not {type(data).__name__}")
        if data.get("format") != PLAN_FORMAT:
            raise ParameterError(f"plan format {data.get('format')!r} is not {PLAN_FORMAT}")
        try:
            segments = tuple(
                Segment(
                    **{
                        **seg,
                        "song_beats_s": tuple(float(t) for t in seg["song_beats_s"]),
                        "source_span_s": tuple(float(t) for t in seg["source_span_s"]),
                    }
                )
                for seg in data["segments"]
            )
            return cls(
                library_version=str(data["library_version"]),
                library_sha256=str(data["library_sha256"]),
                style=str(data["style"]),
                energy=str(data["energy"]),
                seed=int(data["seed"]),
                duration_s=float(data["duration_s"]),
                segments=segments,
                notes=tuple(data.get("notes", ())),
                routine=WorkoutPlan.from_dict(data["routine"]) if data.get("routine") else None,
                breaks_s=tuple((float(a), float(b)) for a, b in data.get("breaks_s", ())),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ParameterError(f"malformed plan: {exc!r}") from exc


def read_plan(path: Path) -> Plan:
    """A plan from a JSON file: a plan, or a render summary with a ``plan`` field.

    Raises
    ------
    ParameterError
        Naming the file, when it cannot be read or holds no valid plan.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ParameterError(f"--plan {path}: cannot read it as JSON ({exc})") from exc
    if isinstance(data, dict) and isinstance(data.get("plan"), dict):
        data = data["plan"]
    if not isinstance(data, dict):
        raise ParameterError(f"--plan {path}: holds no plan")
    try:
        return Plan.from_dict(data)
    except ParameterError as exc:
        raise ParameterError(f"--plan {path}: {exc}") from exc
