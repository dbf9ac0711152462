"""Evaluation rows, diversity and the goal check, shared by ``choreo eval`` and its JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from choreo.metrics.diversity import mean_pairwise_distance, standardiser
from choreo.metrics.score import DanceScores

__all__ = ["GOALS", "EvalRow", "diversity_report", "format_table", "goal_report", "mean_of"]

GOALS = {
    "beat_align_min": 0.24,
    "foot_skate_max_vs_reference": 1.2,
    "jerk_max_vs_reference": 1.2,
    "freeze_ratio_min": 0.7,
}
"""Goals on the held-out songs at 30 fps (the model issue's targets)."""

_COLUMNS = ("beat_align", "foot_skate", "pfc", "jerk", "freeze_ratio", "limit_violations", "energy")


@dataclass(frozen=True)
class EvalRow:
    """One scored dance: a song and seed (generated), or a retimed mocap clip (reference).

    ``beat_align_by_fps`` holds the beat alignment of the same dance at every
    rate it was measured at (it moves with the fps), besides ``scores`` at the
    row's own rate.
    """

    song: str
    seed: int | None
    scores: DanceScores
    clip: str | None = None
    style: str | None = None
    beat_align_by_fps: dict[int, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        row: dict[str, object] = {"song": self.song, "seed": self.seed}
        if self.clip is not None:
            row["clip"] = self.clip
        if self.style is not None:
            row["style"] = self.style
        row.update(self.scores.to_dict())
        for fps, score in sorted(self.beat_align_by_fps.items()):
            row[f"beat_align_{fps}fps"] = round(score, 4)
        return row


def mean_of(rows: Sequence[EvalRow], key: str) -> float | None:
    """Mean of one measure over rows, skipping ``None`` (freeze ratio of short songs)."""
    values = [getattr(r.scores, key) for r in rows]
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def diversity_report(rows: Sequence[EvalRow], reference: Sequence[EvalRow]) -> dict[str, float | None]:
    """Diversity between songs and between seeds, in kinetic features.

    Features are standardised by the reference clips' mean and spread when
    there are at least two (so generated and real diversity share one scale),
    otherwise by the generated dances' own.
    """
    out: dict[str, float | None] = {"between_songs": None, "between_seeds": None}
    ref_feats = np.array([r.scores.kinetic for r in reference])
    mean = scale = None
    if len(reference) >= 2:
        mean, scale = standardiser(ref_feats)
        out["reference_between_songs"] = _rounded(
            mean_pairwise_distance(ref_feats, [r.clip for r in reference], same_group=False)
        )
        out["normalised_by"] = "reference"
    else:
        out["normalised_by"] = "generated"
    if rows:
        feats = np.array([r.scores.kinetic for r in rows])
        songs = [r.song for r in rows]
        out["between_songs"] = _rounded(
            mean_pairwise_distance(feats, songs, same_group=False, mean=mean, scale=scale)
        )
        out["between_seeds"] = _rounded(
            mean_pairwise_distance(feats, songs, same_group=True, mean=mean, scale=scale)
        )
    return out


def goal_report(rows: Sequence[EvalRow], reference: Sequence[EvalRow]) -> dict[str, object]:
    """Means of generated and reference dances and whether each goal is met (``None``: cannot tell)."""
    generated = {key: _rounded(mean_of(rows, key)) for key in _COLUMNS}
    real = {key: _rounded(mean_of(reference, key)) for key in _COLUMNS}
    for means, group in ((generated, rows), (real, reference)):
        for fps in sorted({fps for r in group for fps in r.beat_align_by_fps}):
            values = [r.beat_align_by_fps[fps] for r in group if fps in r.beat_align_by_fps]
            means[f"beat_align_{fps}fps"] = _rounded(float(np.mean(values)))
    freeze = [r.scores.freeze_ratio for r in rows if r.scores.freeze_ratio is not None]
    beat_align = generated["beat_align"]
    met: dict[str, bool | None] = {
        "beat_align": None if beat_align is None else beat_align >= GOALS["beat_align_min"],
        "freeze_ratio": min(freeze) >= GOALS["freeze_ratio_min"] if freeze else None,
        "limit_violations": all(r.scores.limit_violations == 0 for r in rows) if rows else None,
    }
    for key, limit in (("foot_skate", "foot_skate_max_vs_reference"), ("jerk", "jerk_max_vs_reference")):
        if generated[key] is None or real[key] is None:
            met[key] = None
        else:
            met[key] = generated[key] <= GOALS[limit] * real[key]
    return {"generated_mean": generated, "reference_mean": real, "goals": dict(GOALS), "met": met}


def format_table(rows: Sequence[EvalRow], title: str) -> str:
    """A fixed-width text table of rows, one line each."""
    names = " ".join(f"{c[:10]:>10}" for c in _COLUMNS)
    header = f"{'song':<44} {'seed':>4} {'fps':>3} {'dur_s':>7} {names}"
    lines = [title, header, "-" * len(header)]
    for row in rows:
        name = row.song if row.clip is None else f"{row.clip} @ {row.song}"
        seed = "-" if row.seed is None else str(row.seed)
        s = row.scores
        cells = [s.beat_align, s.foot_skate, s.pfc, s.jerk, s.freeze_ratio, s.limit_violations, s.energy]
        lines.append(
            f"{name[:44]:<44} {seed:>4} {s.fps:>3g} {s.duration_s:>7.1f} " + " ".join(_cell(c) for c in cells)
        )
    return "\n".join(lines)


def _cell(value: float | int | None) -> str:
    if value is None:
        return f"{'-':>10}"
    if isinstance(value, int | np.integer):
        return f"{value:>10d}"
    return f"{value:>10.4g}"


def _rounded(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)
