"""What each style of a phrase library can dance: the tempi its phrases fit, and the songs it fills.

The planner (:mod:`choreo.choreography.planner`) fits a phrase of ``n`` beats
over song beats when its beat ratio is 1 (or 2 and 1/2, double and half time)
and the remaining stretch is within :data:`~choreo.choreography.planner.MIN_STRETCH`
to :data:`~choreo.choreography.planner.MAX_STRETCH`; so a phrase danced at its
own pace of ``t`` BPM fits songs from ``MIN_STRETCH * t`` to ``MAX_STRETCH * t``
BPM. A style's **tempo range** is where at least :data:`MIN_FITTING_SHARE`
of its moving phrases fit at their own pace (with half and double time, the
range widens).

A song of a given length is danced **without stalls** when the style has
enough moving material (its phrases that are not held poses,
:attr:`~choreo.choreography.library.PhraseLibrary.phrase_still`): the planner
never dances a source second again within
:data:`~choreo.choreography.planner.REUSE_BARS` bars, so the style needs that
many bars of moving motion at the song's tempo, and ``auto`` passes over a
style with under :data:`~choreo.choreography.style_choice.MIN_SOURCE_S_PER_MIN`
seconds of it per minute of the song (it would loop its moves). A style short
of either fills bars with its held poses, or with another style's phrases.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.choreography.library import LIBRARY_FPS, PhraseLibrary
from choreo.choreography.planner import MAX_STRETCH, MIN_STRETCH, REUSE_BARS
from choreo.choreography.style_choice import MIN_SOURCE_S_PER_MIN

__all__ = ["MIN_FITTING_SHARE", "StyleFit", "describe_library", "style_fits"]

MIN_FITTING_SHARE = 0.1
"""A tempo is in a style's range when at least this share of its moving phrases fit it."""

_BEATS_PER_BAR = 4
_TEMPI = np.arange(40.0, 241.0)


@dataclass(frozen=True)
class StyleFit:
    """One style's reach: its moving material, the tempi it fits, the songs it fills."""

    style: str
    moving_s: float
    """Seconds of source motion in the style's moving phrases (held poses left out)."""
    tempo_bpm: tuple[float, float] | None
    """Lowest and highest song tempo its phrases fit at their own pace; None when none does."""
    tempo_bpm_half_double: tuple[float, float] | None
    """The same with half and double time."""

    def needed_s(self, duration_s: float, tempo_bpm: float) -> float:
        """Moving seconds a song of ``duration_s`` at ``tempo_bpm`` needs to be danced without stalls."""
        window_s = REUSE_BARS * _BEATS_PER_BAR * 60.0 / tempo_bpm
        return max(min(window_s, duration_s), MIN_SOURCE_S_PER_MIN * duration_s / 60.0)

    def fills(self, duration_s: float, tempo_bpm: float | None = None) -> bool:
        """Whether the style dances a song of ``duration_s`` (at ``tempo_bpm``, default the middle of
        its range) without stalls: enough moving material, the tempo in range (half and double time)."""
        if self.tempo_bpm is None or self.tempo_bpm_half_double is None:
            return False
        tempo = tempo_bpm if tempo_bpm is not None else float(np.sqrt(np.prod(self.tempo_bpm)))
        lo, hi = self.tempo_bpm_half_double
        return lo <= tempo <= hi and self.moving_s >= self.needed_s(duration_s, tempo)

    def describe(self, duration_s: float, tempo_bpm: float | None = None) -> dict:
        """The fit as JSON-ready numbers, with the verdict for a song of ``duration_s``."""
        tempo = (
            tempo_bpm if tempo_bpm is not None or self.tempo_bpm is None else np.sqrt(np.prod(self.tempo_bpm))
        )
        return {
            "moving_minutes": round(self.moving_s / 60.0, 2),
            "tempo_bpm": list(self.tempo_bpm) if self.tempo_bpm else None,
            "tempo_bpm_half_double": list(self.tempo_bpm_half_double) if self.tempo_bpm_half_double else None,
            "song_s": round(duration_s, 1),
            "song_tempo_bpm": round(float(tempo), 1) if tempo is not None else None,
            "needs_moving_minutes": round(self.needed_s(duration_s, float(tempo)) / 60.0, 2)
            if tempo
            else None,
            "fills_without_stalls": self.fills(duration_s, tempo_bpm),
        }


def _range(counts: np.ndarray, n_phrases: int) -> tuple[float, float] | None:
    fits = np.nonzero((counts >= MIN_FITTING_SHARE * n_phrases) & (counts > 0))[0]
    return (float(_TEMPI[fits[0]]), float(_TEMPI[fits[-1]])) if fits.size else None


def _fitting(own_bpm: np.ndarray) -> np.ndarray:
    """Per tempo of the grid, how many phrases of these own tempi fit it within the stretch limits."""
    grid = _TEMPI[:, None]
    return np.sum((grid >= MIN_STRETCH * own_bpm) & (grid <= MAX_STRETCH * own_bpm), axis=1)


def style_fits(library: PhraseLibrary) -> dict[str, StyleFit]:
    """Each style's :class:`StyleFit`, from its phrases that are not mirror images or held poses."""
    own_bpm = 60.0 * library.phrase_beats / np.maximum(library.phrase_duration_s, 1e-6)
    first, last = library.phrase_frames
    out = {}
    for s, name in enumerate(library.styles):
        moving = (library.phrase_style == s) & ~library.phrase_mirrored & ~library.phrase_still
        frames = np.zeros(int(library.clip_stop.max(initial=0)) + 1, dtype=bool)
        for a, b in zip(first[moving], last[moving], strict=True):
            frames[a : b + 1] = True
        tempo = own_bpm[moving]
        at = [_fitting(tempo * f) for f in (1.0, 0.5, 2.0)]
        out[name] = StyleFit(
            style=name,
            moving_s=float(frames.sum()) / LIBRARY_FPS,
            tempo_bpm=_range(at[0], tempo.size),
            tempo_bpm_half_double=_range(np.maximum.reduce(at), tempo.size),
        )
    return out


def describe_library(
    library: PhraseLibrary, *, song_s: float = 240.0, tempo_bpm: float | None = None
) -> dict:
    """A library's version, hash, per-style coverage and reach (:meth:`StyleFit.describe` for a song of
    ``song_s`` at ``tempo_bpm``), merged styles and credits: what ``choreo library show`` prints and the
    service keeps in a library's record."""
    fits = style_fits(library)
    styles = {
        name: coverage | fits[name].describe(song_s, tempo_bpm)
        for name, coverage in library.coverage().items()
    }
    return {
        "version": library.version,
        "sha256": library.sha256,
        "styles": styles,
        "merged_styles": library.merged_styles,
        "credits": list(library.credits),
    }
