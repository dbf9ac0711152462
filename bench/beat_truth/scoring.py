"""Scores of a tracker's beats and downbeats against the truth, with mir_eval (the field's scorer).

Per song:

* ``f``: beat F-measure, a hit within 70 ms (``mir_eval.beat.f_measure``);
* ``cmlt`` / ``amlt``: the share of beats in correctly tracked stretches at the
  annotated level and phase (CMLt), or at any of double, half and off-beat
  (AMLt) (``mir_eval.beat.continuity``);
* ``downbeat_f``: the F-measure (70 ms) of the downbeats, where the song has
  annotated downbeats and the tracker gives any (None otherwise);
* ``tempo_octave``: the tracker's tempo over the true tempo, the median over
  the tracker's beat intervals of the interval the truth has at that time over
  the tracker's, rounded to the nearest of :data:`OCTAVES` (``tempo_ratio``
  keeps it unrounded) - 1 is the right level, 0.5 half time, 2 double, 3 the
  eighths of a 6/8;
* ``off_beat_share``: the share of the tracker's beats (inside the annotated
  span) nearer the half-period-shifted grid than the grid itself: their phase
  in the annotated beat interval lies between a quarter and three quarters.

As mir_eval's ``evaluate`` does, both sequences are trimmed to beats after
5 s (``mir_eval.beat.trim_beats``) before every score; a free-time intro is
longer than that, so beats a tracker puts over it still count against it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["OCTAVES", "WINDOW_S", "off_beat_share", "score_song", "summarise", "tempo_ratio"]

WINDOW_S = 0.07
"""The F-measure's hit window either side (mir_eval's default)."""

OCTAVES = (1 / 3, 1 / 2, 2 / 3, 1.0, 3 / 2, 2.0, 3.0)

METRICS = ("f", "cmlt", "amlt", "downbeat_f", "off_beat_share")


def tempo_ratio(reference: np.ndarray, estimated: np.ndarray) -> float:
    """Median, over the tracker's intervals, of the true local beat interval over the tracker's (or nan)."""
    if reference.size < 2 or estimated.size < 2:
        return float("nan")
    middles = (estimated[1:] + estimated[:-1]) / 2
    inside = (middles > reference[0]) & (middles < reference[-1])
    if not inside.any():
        return float("nan")
    true_interval = np.interp(middles[inside], (reference[1:] + reference[:-1]) / 2, np.diff(reference))
    return float(np.median(true_interval / np.diff(estimated)[inside]))


def nearest_octave(ratio: float) -> float | None:
    """The entry of :data:`OCTAVES` nearest ``ratio`` on a log scale (None for nan)."""
    if not np.isfinite(ratio) or ratio <= 0:
        return None
    return min(OCTAVES, key=lambda octave: abs(np.log(ratio / octave)))


def off_beat_share(reference: np.ndarray, estimated: np.ndarray) -> float:
    """Share of estimated beats inside the annotated span whose phase in their beat is in [0.25, 0.75)."""
    inside = (
        estimated[(estimated >= reference[0]) & (estimated < reference[-1])] if reference.size > 1 else []
    )
    if len(inside) == 0:
        return 0.0
    index = np.searchsorted(reference, inside, side="right") - 1
    phase = (inside - reference[index]) / (reference[index + 1] - reference[index])
    return float(np.mean((phase >= 0.25) & (phase < 0.75)))


def score_song(
    reference_beats: np.ndarray,
    estimated_beats: np.ndarray,
    reference_downbeats: np.ndarray | None,
    estimated_downbeats: np.ndarray | None,
) -> dict[str, float | None]:
    """Every per-song score (module docstring) of one tracker on one song."""
    import mir_eval

    reference = mir_eval.beat.trim_beats(np.asarray(reference_beats, dtype=np.float64))
    estimated = mir_eval.beat.trim_beats(np.asarray(estimated_beats, dtype=np.float64))
    scores: dict[str, float | None] = {
        "f": mir_eval.beat.f_measure(reference, estimated, f_measure_threshold=WINDOW_S)
    }
    if reference.size > 1 and estimated.size > 1:
        _, cmlt, _, amlt = mir_eval.beat.continuity(reference, estimated)
    else:
        cmlt = amlt = 0.0
    scores |= {"cmlt": cmlt, "amlt": amlt, "downbeat_f": None}
    if reference_downbeats is not None and estimated_downbeats is not None:
        scores["downbeat_f"] = mir_eval.beat.f_measure(
            mir_eval.beat.trim_beats(np.asarray(reference_downbeats, dtype=np.float64)),
            mir_eval.beat.trim_beats(np.asarray(estimated_downbeats, dtype=np.float64)),
            f_measure_threshold=WINDOW_S,
        )
    ratio = tempo_ratio(reference, estimated)
    scores |= {
        "tempo_ratio": None if not np.isfinite(ratio) else round(ratio, 3),
        "tempo_octave": nearest_octave(ratio),
        "off_beat_share": off_beat_share(reference, estimated),
    }
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in scores.items()}


def summarise(rows: list[dict]) -> dict[str, float | int | None]:
    """Means of the scores over ``rows`` (each a per-song score dict), the share at the right tempo octave,
    and the worst song's off-beat share."""
    summary: dict[str, float | int | None] = {"songs": len(rows)}
    for metric in METRICS:
        values = [row[metric] for row in rows if row.get(metric) is not None]
        summary[metric] = round(float(np.mean(values)), 4) if values else None
    summary["max_off_beat_share"] = round(max(row["off_beat_share"] for row in rows), 4) if rows else None
    summary["octave_1_share"] = (
        round(float(np.mean([row["tempo_octave"] == 1.0 for row in rows])), 4) if rows else None
    )
    return summary
