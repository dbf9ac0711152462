"""The songs of one evaluation: their beats, tempi and structure, and which song mismatches which.

Beat alignment on the beats of *another* song needs every song's tempo before
the first dance is scored, and the retimed mocap needs the structure of the
song window it was retimed onto; :class:`MusicPool` computes each once.
Beats and structure are one analysis, the planner's
(:func:`choreo.audio.structure.analyze_structure` on the pipeline's features):
a dance is scored on the beats it was planned on, and those are the beats the
beat-truth benchmark ranks best (``bench/beats.py``, issue 20), not another
tracker's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from choreo.audio import MusicFeatures, probe_duration_s
from choreo.audio.structure import MusicStructure, analyze_structure
from choreo.errors import ChoreoError, ParameterError
from choreo.metrics.beat_contrast import pick_mismatched_song, tiled_beats
from choreo.metrics.break_holds import tiled_breaks
from choreo.metrics.context import DanceContext
from choreo.metrics.repetition import SourceSpan
from choreo.metrics.style import StyleCentroids

__all__ = ["MusicPool"]


class MusicPool:
    """Every song an evaluation may score against, by file name.

    Parameters
    ----------
    songs : the song files (held-out songs; names must be unique)
    features_of : how to get a song's features (the pipeline's ``prepare_song`` at the eval's rate)
    """

    def __init__(self, songs: Sequence[Path], features_of: Callable[[Path], MusicFeatures]) -> None:
        self._paths = {Path(p).name: Path(p) for p in songs}
        self._features_of = features_of
        self._structures: dict[str, MusicStructure] = {}
        self._tempi: dict[str, float] | None = None

    def beats(self, name: str) -> np.ndarray:
        """The song's beats, seconds: those of its steady bars, as the planner follows them."""
        return self.structure(name).beat_times

    def structure(self, name: str) -> MusicStructure:
        """The song's bars, energy and sections."""
        if name not in self._structures:
            self._structures[name] = analyze_structure(self._features_of(self._path(name)))
        return self._structures[name]

    def mismatched(self, name: str) -> str | None:
        """The pool's song whose tempo is furthest from ``name``'s (at least 10 % and no octave)."""
        if self._tempi is None:
            self._tempi = {}
            for song, path in sorted(self._paths.items()):
                try:
                    probe_duration_s(path)  # a song that cannot be read mismatches nothing
                except ChoreoError:
                    continue
                self._tempi[song] = _tempo_bpm(self.beats(song))
        return pick_mismatched_song(name, self._tempi) if name in self._tempi else None

    def mismatched_breaks(self, name: str) -> str | None:
        """The pool's other song with the most seconds of breaks (None where no other has any): whose
        breaks a dance on ``name`` is also measured against."""
        best, most = None, 0.0
        for song, path in sorted(self._paths.items()):
            if song == name:
                continue
            try:
                probe_duration_s(path)
            except ChoreoError:
                continue
            breaks = self.structure(song).breaks
            seconds = float((breaks[:, 1] - breaks[:, 0]).sum())
            if seconds > most:
                best, most = song, seconds
        return best

    def context(
        self,
        name: str,
        *,
        start_s: float = 0.0,
        duration_s: float,
        style: str | None = None,
        centroids: StyleCentroids | None = None,
        junction_times_s: np.ndarray | None = None,
        source_spans: Sequence[SourceSpan] | None = None,
    ) -> DanceContext:
        """The context of a dance of ``duration_s`` on song ``name`` from ``start_s`` (the dance's clock)."""
        own = self.beats(name) - start_s
        own = own[(own >= 0) & (own < duration_s)]
        other = self.mismatched(name)
        mismatched = None
        if other is not None:
            other_duration_s = probe_duration_s(self._path(other))
            mismatched = tiled_beats(self.beats(other), song_duration_s=other_duration_s, cover_s=duration_s)
        structure = self.structure(name)
        other_breaks = self.mismatched_breaks(name)
        mismatched_breaks = None
        if other_breaks is not None:
            mismatched_breaks = tiled_breaks(
                self.structure(other_breaks).breaks,
                song_duration_s=probe_duration_s(self._path(other_breaks)),
                cover_s=duration_s,
            )
        return DanceContext(
            own_beats_s=own,
            mismatched_beats_s=mismatched,
            bar_starts_s=structure.bar_starts - start_s,
            bar_energy=structure.bar_energy,
            section_labels=structure.section_labels,
            style=style,
            centroids=centroids,
            junction_times_s=junction_times_s,
            source_spans=source_spans,
            breaks_s=structure.breaks - start_s,
            mismatched_breaks_s=mismatched_breaks,
            downbeats_s=structure.downbeat_times - start_s,
        )

    def _path(self, name: str) -> Path:
        if name not in self._paths:
            raise ParameterError(f"song {name!r} is not among the evaluation's songs")
        return self._paths[name]


def _tempo_bpm(beats_s: np.ndarray) -> float:
    """60 over the median beat interval; 0 with fewer than two beats."""
    return 60.0 / float(np.median(np.diff(beats_s))) if beats_s.size >= 2 else 0.0
