"""Measures of a dance: one module per measure, each a pure function with its fps stated.

:mod:`.beat_align` (Bailando's beat alignment score), :mod:`.foot_skate`
(share of skating frames), :mod:`.pfc` (EDGE's physical foot contact score),
:mod:`.jerk`, :mod:`.freeze` (freeze ratio), :mod:`.speed` (mean joint speed), :mod:`.diversity` (kinetic
features and pairwise distances), :mod:`.limits` (joint-limit violations) and
:mod:`.score` (all of them for one dance).

Issue 11's measures of whether a dance dances: :mod:`.spread` (pose spread and
reach, also in the pelvis heading frame), :mod:`.beat_contrast` (beat alignment
on own, mismatched and half-beat-shifted beats), :mod:`.junctions` (jerk at
phrase junctions over jerk inside phrases), :mod:`.stalls`, :mod:`.repetition`
(distinct source seconds per minute), :mod:`.style` (nearest-centroid style
separability over :mod:`.descriptor` windows) and :mod:`.structure_consistency`.
"""

from choreo.metrics.beat_align import beat_align_score, kinematic_beats
from choreo.metrics.beat_contrast import BeatContrast, beat_contrast
from choreo.metrics.diversity import kinetic_features, mean_pairwise_distance
from choreo.metrics.foot_skate import foot_skate_ratio
from choreo.metrics.freeze import freeze_ratio
from choreo.metrics.jerk import mean_jerk
from choreo.metrics.junctions import junction_jerk_ratio
from choreo.metrics.limits import limit_violations
from choreo.metrics.pfc import pfc_score
from choreo.metrics.repetition import SourceSpan, distinct_source_seconds_per_minute
from choreo.metrics.score import DanceScores, score_motion
from choreo.metrics.speed import mean_joint_speed
from choreo.metrics.spread import Reach, pose_spread, reach
from choreo.metrics.stalls import Stalls, stalls
from choreo.metrics.structure_consistency import structure_consistency
from choreo.metrics.style import StyleCentroids, style_centroids, style_separability

__all__ = [
    "BeatContrast",
    "DanceScores",
    "Reach",
    "SourceSpan",
    "Stalls",
    "StyleCentroids",
    "beat_align_score",
    "beat_contrast",
    "distinct_source_seconds_per_minute",
    "foot_skate_ratio",
    "freeze_ratio",
    "junction_jerk_ratio",
    "kinematic_beats",
    "kinetic_features",
    "limit_violations",
    "mean_jerk",
    "mean_joint_speed",
    "mean_pairwise_distance",
    "pfc_score",
    "pose_spread",
    "reach",
    "score_motion",
    "stalls",
    "structure_consistency",
    "style_centroids",
    "style_separability",
]
