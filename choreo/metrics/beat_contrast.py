"""Does the dance follow its own music? Beat alignment on its own beats against beats it never heard.

A dance that pauses often scores beat alignment on any beats at all (retimed
mocap scored 0.318 on its own song against 0.200 on another; the first model
0.406 against 0.395). So the dance is scored three times with the same code
(:func:`~choreo.metrics.beat_align.beat_align_score`): on its song's own beats,
on the beats of a different song whose tempo differs by at least
:data:`MIN_TEMPO_DIFFERENCE` (the *mismatched* beats), and on its own beats
shifted by half a beat. Two contrasts come of it: own minus mismatched (the dance
follows this song rather than any), and own minus half-beat (its stops fall on the
beats, not between them: a dance that stops twice a beat scores the same on both).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.errors import ParameterError
from choreo.metrics.beat_align import beat_align_score

__all__ = [
    "MIN_TEMPO_DIFFERENCE",
    "BeatContrast",
    "beat_contrast",
    "half_beat_shifted",
    "pick_mismatched_song",
    "tiled_beats",
]

MIN_TEMPO_DIFFERENCE = 0.10
"""Least relative tempo difference of the song whose beats are the mismatched ones."""


@dataclass(frozen=True)
class BeatContrast:
    """Beat alignment on own, mismatched and half-beat-shifted beats, and the two contrasts.

    ``mismatched`` is None when no song of a different enough tempo was there to score against.
    """

    own: float
    mismatched: float | None
    shifted: float

    @property
    def own_minus_mismatched(self) -> float | None:
        return None if self.mismatched is None else self.own - self.mismatched

    @property
    def own_minus_half_beat(self) -> float:
        return self.own - self.shifted

    def to_dict(self) -> dict[str, float | None]:
        return {
            "beat_align_own": _rounded(self.own),
            "beat_align_mismatched": _rounded(self.mismatched),
            "beat_align_half_beat": _rounded(self.shifted),
            "beat_align_own_minus_mismatched": _rounded(self.own_minus_mismatched),
            "beat_align_own_minus_half_beat": _rounded(self.own_minus_half_beat),
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def half_beat_shifted(beat_times_s: np.ndarray) -> np.ndarray:
    """The midpoints between consecutive beats: the beats moved by half a (local) beat."""
    beats = np.asarray(beat_times_s, dtype=np.float64)
    return 0.5 * (beats[1:] + beats[:-1])


def tiled_beats(beat_times_s: np.ndarray, *, song_duration_s: float, cover_s: float) -> np.ndarray:
    """A song's beats repeated end to end (period ``song_duration_s``) until they cover ``cover_s``.

    The mismatched song may be shorter than the dance; looping it keeps its beats' spacing.
    """
    beats = np.asarray(beat_times_s, dtype=np.float64)
    if beats.size == 0 or song_duration_s <= 0:
        raise ParameterError("the mismatched song has no beats to score against")
    loops = int(np.ceil(cover_s / song_duration_s))
    return np.concatenate([beats + k * song_duration_s for k in range(max(1, loops))])


def pick_mismatched_song(own: str, tempi_bpm: dict[str, float]) -> str | None:
    """The other song whose tempo is furthest (in log ratio) from ``own``'s, if it differs by >= 10 %.

    Tempi within 10 % of double or half the own tempo are skipped too: their beats
    fall on every other own beat. Ties go to the name first in sorted order.
    """
    mine = tempi_bpm[own]
    best, best_gap = None, 0.0
    for name in sorted(tempi_bpm):
        tempo = tempi_bpm[name]
        if name == own or tempo <= 0 or mine <= 0:
            continue
        ratios = [tempo / (mine * octave) for octave in (0.5, 1.0, 2.0)]
        gap = min(abs(np.log(r)) for r in ratios)
        if gap >= np.log(1.0 + MIN_TEMPO_DIFFERENCE) and gap > best_gap:
            best, best_gap = name, gap
    return best


def beat_contrast(
    positions: np.ndarray,
    own_beat_times_s: np.ndarray,
    mismatched_beat_times_s: np.ndarray | None,
    *,
    fps: float,
) -> BeatContrast:
    """Beat alignment of a dance on its own beats, on mismatched beats, and on its own shifted half a beat.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres
    own_beat_times_s : the song's beats, seconds on the dance's clock
    mismatched_beat_times_s : another song's beats on the same clock, covering the dance
        (see :func:`tiled_beats`); None where there is none (the mismatched score is then None)
    fps : frame rate of ``positions``

    Raises
    ------
    ParameterError
        If some set of beats has none within the dance.
    """
    own = np.asarray(own_beat_times_s, dtype=np.float64)
    return BeatContrast(
        own=beat_align_score(positions, own, fps=fps),
        mismatched=None
        if mismatched_beat_times_s is None
        else beat_align_score(positions, mismatched_beat_times_s, fps=fps),
        shifted=beat_align_score(positions, half_beat_shifted(own), fps=fps),
    )
