"""Goal check and diversity report over evaluation rows."""

from __future__ import annotations

import numpy as np

from choreo.metrics.report import EvalRow, diversity_report, format_table, goal_report
from choreo.metrics.score import DanceScores


def _row(
    song: str, seed: int | None, *, skate: float, jerk: float, freeze: float | None, kin: float
) -> EvalRow:
    scores = DanceScores(
        fps=30.0,
        duration_s=150.0,
        beat_align=0.25,
        foot_skate=skate,
        pfc=1.0,
        jerk=jerk,
        freeze_ratio=freeze,
        limit_violations=0,
        energy=1.0,
        kinematic_beats_per_s=1.0,
        kinetic=np.full(72, kin),
    )
    clip = None if seed is not None else f"clip_{song}"
    return EvalRow(song, seed, scores, clip=clip, beat_align_by_fps={30: 0.25, 60: 0.2})


def test_goal_report_compares_with_the_reference() -> None:
    rows = [
        _row("a", 0, skate=0.2, jerk=100, freeze=0.9, kin=1),
        _row("b", 0, skate=0.4, jerk=100, freeze=None, kin=2),
    ]
    reference = [
        _row("a", None, skate=0.3, jerk=50, freeze=None, kin=1),
        _row("b", None, skate=0.2, jerk=70, freeze=None, kin=3),
    ]
    report = goal_report(rows, reference)
    assert report["generated_mean"]["foot_skate"] == 0.3 and report["reference_mean"]["foot_skate"] == 0.25
    assert report["generated_mean"]["beat_align_60fps"] == 0.2
    met = report["met"]
    assert met["beat_align"] is True and met["limit_violations"] is True
    assert met["foot_skate"] is True  # 0.3 <= 1.2 * 0.25
    assert met["jerk"] is False  # 100 > 1.2 * 60
    assert met["freeze_ratio"] is True  # the short song (None) is left out
    assert goal_report(rows, [])["met"]["jerk"] is None


def test_diversity_report_uses_the_reference_scale() -> None:
    rows = [
        _row(s, seed, skate=0, jerk=0, freeze=None, kin=k)
        for s, seed, k in [("a", 0, 1), ("a", 1, 1), ("b", 0, 3)]
    ]
    reference = [_row(s, None, skate=0, jerk=0, freeze=None, kin=k) for s, k in [("a", 1), ("b", 3)]]
    report = diversity_report(rows, reference)
    assert report["normalised_by"] == "reference"
    assert report["between_seeds"] == 0.0
    # Reference std per dimension is 1, so songs 2 apart in all 72 dimensions are 2 * sqrt(72) apart.
    assert report["between_songs"] == round(2 * np.sqrt(72), 4)
    assert report["reference_between_songs"] == round(2 * np.sqrt(72), 4)
    table = format_table(rows, "title")
    assert table.splitlines()[0] == "title" and len(table.splitlines()) == 3 + len(rows)
