"""The measures of one dance that need more than the dance: its music, its plan and the styles.

:func:`score_in_context` gathers issue 11's measures of whether a dance follows
its music (beat alignment on own against mismatched beats, stalls while the
music plays on, holds on its breaks against another song's, structure
consistency), its plan (junction smoothness, repetition) and its style
(separability). Whatever context is missing, a measure that needs it is None:
mocap has no junctions and no plan, today's model has no plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from choreo.metrics.beat_contrast import beat_contrast
from choreo.metrics.break_holds import break_speed_ratio, in_breaks
from choreo.metrics.descriptor import windowed_descriptors
from choreo.metrics.downbeat_hits import downbeat_hits, section_start_times
from choreo.metrics.junctions import junction_jerk_ratio
from choreo.metrics.repetition import SourceSpan, distinct_source_seconds_per_minute
from choreo.metrics.stalls import stalls
from choreo.metrics.structure_consistency import structure_consistency
from choreo.metrics.style import STYLE_WINDOW_S, StyleCentroids, style_separability

__all__ = ["CONTEXT_KEYS", "DanceContext", "bar_values_at", "score_in_context"]

CONTEXT_KEYS = (
    "beat_align_own",
    "beat_align_mismatched",
    "beat_align_half_beat",
    "beat_align_own_minus_mismatched",
    "beat_align_own_minus_half_beat",
    "junction_jerk_ratio",
    "stall_s",
    "longest_stall_s",
    "downbeat_hit_own",
    "downbeat_hit_shifted",
    "downbeat_hit_own_minus_shifted",
    "section_start_hit",
    "break_speed_own",
    "break_speed_mismatched",
    "distinct_source_s_per_min",
    "style_separability",
    "structure_consistency",
)
"""The keys :func:`score_in_context` returns, each a float or None."""


@dataclass(frozen=True)
class DanceContext:
    """What one dance is measured against, all times on the dance's clock (seconds).

    ``bar_starts_s``, ``bar_energy`` and ``section_labels`` are the song's bars
    (:class:`~choreo.audio.structure.MusicStructure`) moved onto the dance's clock;
    the first bar may start before 0. ``breaks_s`` are the song's breaks on that clock (the music
    has stopped there: no stall), ``mismatched_breaks_s`` another song's, covering the dance.
    ``downbeats_s`` are the song's downbeats (the first beats of its steady bars) on that clock.
    """

    own_beats_s: np.ndarray
    mismatched_beats_s: np.ndarray | None
    bar_starts_s: np.ndarray
    bar_energy: np.ndarray
    section_labels: np.ndarray
    style: str | None = None
    centroids: StyleCentroids | None = None
    junction_times_s: np.ndarray | None = None
    source_spans: Sequence[SourceSpan] | None = None
    breaks_s: np.ndarray | None = None
    mismatched_breaks_s: np.ndarray | None = None
    downbeats_s: np.ndarray | None = None


def bar_values_at(times_s: np.ndarray, bar_starts_s: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The value of the bar each time falls in (the first bar's before it starts)."""
    index = np.searchsorted(np.asarray(bar_starts_s), np.asarray(times_s), side="right") - 1
    return np.asarray(values)[np.clip(index, 0, len(values) - 1)]


def score_in_context(positions: np.ndarray, context: DanceContext, *, fps: float) -> dict[str, float | None]:
    """Issue 11's context measures of one dance, keyed by :data:`CONTEXT_KEYS`.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres, frame ``k`` at ``k / fps``
    context : the dance's music, plan and style
    fps : frame rate of ``positions``
    """
    out: dict[str, float | None] = dict.fromkeys(CONTEXT_KEYS)
    frames = positions.shape[0]
    duration_s = frames / fps
    if context.own_beats_s.size >= 2:
        out.update(
            beat_contrast(positions, context.own_beats_s, context.mismatched_beats_s, fps=fps).to_dict()
        )
    if context.downbeats_s is not None and context.own_beats_s.size >= 2:
        sections = section_start_times(context.bar_starts_s, context.section_labels)
        out.update(
            downbeat_hits(
                positions, context.own_beats_s, context.downbeats_s, fps=fps, section_starts_s=sections
            ).to_dict()
        )
    inside = (context.bar_starts_s < duration_s) & (np.append(context.bar_starts_s[1:], np.inf) > 0)
    times = np.arange(frames) / fps
    music = bar_values_at(times, context.bar_starts_s, context.bar_energy)
    if context.breaks_s is not None:
        music = np.where(in_breaks(times, context.breaks_s), 0.0, music)
        out["break_speed_own"] = break_speed_ratio(positions, context.breaks_s, fps=fps)
    if context.mismatched_breaks_s is not None:
        out["break_speed_mismatched"] = break_speed_ratio(positions, context.mismatched_breaks_s, fps=fps)
    found = stalls(positions, music, fps=fps)
    out["stall_s"], out["longest_stall_s"] = found.total_s, found.longest_s
    starts = np.maximum(context.bar_starts_s[inside], 0.0)
    out["structure_consistency"] = structure_consistency(
        positions, starts, context.section_labels[inside], fps=fps
    )
    if context.junction_times_s is not None:
        out["junction_jerk_ratio"] = junction_jerk_ratio(positions, context.junction_times_s, fps=fps)
    if context.source_spans is not None:
        out["distinct_source_s_per_min"] = distinct_source_seconds_per_minute(
            context.source_spans, dance_duration_s=duration_s
        )
    if context.centroids is not None and context.style in context.centroids.styles:
        windows = windowed_descriptors(positions, fps=fps, window_s=STYLE_WINDOW_S)
        out["style_separability"] = style_separability(windows, context.style, context.centroids)
    return out
