"""Measures of a dance: one module per measure, each a pure function with its fps stated.

:mod:`.beat_align` (Bailando's beat alignment score), :mod:`.foot_skate`
(share of skating frames), :mod:`.pfc` (EDGE's physical foot contact score),
:mod:`.jerk`, :mod:`.freeze` (freeze ratio), :mod:`.diversity` (kinetic
features and pairwise distances), :mod:`.limits` (joint-limit violations) and
:mod:`.score` (all of them for one dance).
"""

from choreo.metrics.beat_align import beat_align_score, kinematic_beats
from choreo.metrics.diversity import kinetic_features, mean_pairwise_distance
from choreo.metrics.foot_skate import foot_skate_ratio
from choreo.metrics.freeze import freeze_ratio
from choreo.metrics.jerk import mean_jerk
from choreo.metrics.limits import limit_violations
from choreo.metrics.pfc import pfc_score
from choreo.metrics.score import DanceScores, score_motion

__all__ = [
    "DanceScores",
    "beat_align_score",
    "foot_skate_ratio",
    "freeze_ratio",
    "kinematic_beats",
    "kinetic_features",
    "limit_violations",
    "mean_jerk",
    "mean_pairwise_distance",
    "pfc_score",
    "score_motion",
]
