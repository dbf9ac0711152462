"""Repetition: how much different source material a dance built from recorded phrases uses.

Distinct source seconds per minute of dance: the union, per source clip, of the
source time spans the plan played (a mirrored phrase plays the same source
seconds, an overlapping cut the shared ones once), over the dance's minutes. A
dance that loops one 4-second phrase for a minute scores 4; one that never
repeats itself scores 60 (more where phrases were played faster than recorded).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import NamedTuple

from choreo.errors import ParameterError

__all__ = ["SourceSpan", "distinct_source_seconds", "distinct_source_seconds_per_minute"]


class SourceSpan(NamedTuple):
    """One phrase's source: the clip and the span of the clip's own clock it played, seconds."""

    clip: str
    start_s: float
    stop_s: float


def distinct_source_seconds(spans: Iterable[SourceSpan | tuple[str, float, float]]) -> float:
    """Seconds of source covered by the union of ``spans``, per clip, summed over clips.

    Raises
    ------
    ParameterError
        If a span ends before it starts.
    """
    by_clip: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for clip, start_s, stop_s in spans:
        if stop_s < start_s:
            raise ParameterError(f"source span of {clip!r} ends ({stop_s}) before it starts ({start_s})")
        by_clip[str(clip)].append((float(start_s), float(stop_s)))
    total = 0.0
    for intervals in by_clip.values():
        intervals.sort()
        reach = -float("inf")
        for start_s, stop_s in intervals:
            if stop_s > reach:
                total += stop_s - max(start_s, reach)
                reach = stop_s
    return total


def distinct_source_seconds_per_minute(
    spans: Iterable[SourceSpan | tuple[str, float, float]], *, dance_duration_s: float
) -> float:
    """Distinct source seconds per minute of dance.

    Parameters
    ----------
    spans : every phrase the plan played: (source clip, start, stop) on the clip's clock, seconds
    dance_duration_s : length of the dance, seconds, > 0

    Raises
    ------
    ParameterError
        If ``dance_duration_s`` is not positive or a span is reversed.
    """
    if not dance_duration_s > 0:
        raise ParameterError(f"dance_duration_s must be positive, got {dance_duration_s}")
    return distinct_source_seconds(spans) / (dance_duration_s / 60.0)
