"""The beat trackers the bench scores: each maps a song file to (beat times, downbeat times or None).

* ``choreo``: what the planner follows - the steady bars' beats and
  downbeats of :func:`choreo.audio.structure.analyze_structure` on
  :func:`choreo.pipeline.prepare_song` (as ``bench/beat_agreement.py`` takes them);
* ``choreo-features``: the tracker's own output before the steady-bar filter
  (``MusicFeatures.beat_times`` / ``downbeat_times``);
* ``librosa``: ``librosa.beat.beat_track`` at 22050 Hz, hop 512, as the beat
  alignment scores took it before issue 20 (:func:`librosa_beat_times`);
* ``librosa-plp``: the peaks of ``librosa.beat.plp`` (predominant local pulse);
* ``beat-pointer``: the research candidate of :mod:`bench.beat_pointer`;
* ``committee``: the three trackers above that give beats of their own
  (choreo-features, librosa, beat-pointer) run together, the beats of the one
  that agrees best with the other two kept (:func:`committee`).

Each tracker decodes the file itself, so its CPU time includes decoding.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

__all__ = ["BEAT_TRACKER_SR", "TRACKERS", "Tracker", "librosa_beat_times"]

BEAT_TRACKER_SR = 22050
"""librosa's beat tracker's rate, as Bailando's evaluation runs it."""

Tracker = Callable[[Path], tuple[np.ndarray, np.ndarray | None]]


def choreo_planner(song: Path) -> tuple[np.ndarray, np.ndarray | None]:
    from choreo.audio.structure import analyze_structure
    from choreo.pipeline import prepare_song

    structure = analyze_structure(prepare_song(song))
    return structure.beat_times, structure.downbeat_times


def choreo_features(song: Path) -> tuple[np.ndarray, np.ndarray | None]:
    from choreo.pipeline import prepare_song

    features = prepare_song(song)
    return features.beat_times, features.downbeat_times


def librosa_beat_times(song: Path) -> np.ndarray:
    """Beat times in seconds of ``song`` from ``librosa.beat.beat_track`` (22050 Hz, hop 512)."""
    import librosa

    from choreo.audio import load_audio

    y = load_audio(song, sr=BEAT_TRACKER_SR)
    _, beats = librosa.beat.beat_track(y=y, sr=BEAT_TRACKER_SR, hop_length=512, units="time")
    return np.asarray(beats, dtype=np.float64)


def librosa_beat_track(song: Path) -> tuple[np.ndarray, np.ndarray | None]:
    return librosa_beat_times(song), None


def librosa_plp(song: Path) -> tuple[np.ndarray, np.ndarray | None]:
    import librosa

    from choreo.audio import load_audio

    y = load_audio(song, sr=BEAT_TRACKER_SR)
    onset = librosa.onset.onset_strength(y=y, sr=BEAT_TRACKER_SR, hop_length=512)
    pulse = librosa.beat.plp(onset_envelope=onset, sr=BEAT_TRACKER_SR, hop_length=512)
    peaks = np.flatnonzero(librosa.util.localmax(pulse))
    return librosa.frames_to_time(peaks, sr=BEAT_TRACKER_SR, hop_length=512), None


def beat_pointer(song: Path) -> tuple[np.ndarray, np.ndarray | None]:
    from bench.beat_pointer import track_song

    result = track_song(song)
    return result.beat_times, result.downbeat_times


COMMITTEE = ("choreo-features", "librosa", "beat-pointer")


def committee(song: Path) -> tuple[np.ndarray, np.ndarray | None]:
    """The beats of whichever of :data:`COMMITTEE` agrees best with the others (mean mutual agreement).

    Agreement is mir_eval's beat F-measure of one tracker's beats against
    another's (Holzapfel et al. 2012 choose beats this way). Downbeats come from
    the chosen tracker, or, where it gives none, from the member that agrees best
    with it, kept where they fall within 70 ms of a chosen beat.
    """
    import mir_eval

    results = {name: TRACKERS[name](song) for name in COMMITTEE}

    def agreement(a: str, b: str) -> float:
        return float(mir_eval.beat.f_measure(results[a][0], results[b][0]))

    mean = {a: np.mean([agreement(a, b) for b in COMMITTEE if b != a]) for a in COMMITTEE}
    chosen = max(COMMITTEE, key=lambda name: mean[name])
    beats, downbeats = results[chosen]
    if downbeats is None:
        donor = max(
            (n for n in COMMITTEE if n != chosen and results[n][1] is not None),
            key=lambda n: agreement(chosen, n),
        )
        candidates = results[donor][1]
        near = np.min(np.abs(candidates[:, None] - beats[None, :]), axis=1) <= 0.07 if beats.size else []
        downbeats = candidates[near] if beats.size else candidates[:0]
    return beats, downbeats


TRACKERS: dict[str, Tracker] = {
    "choreo": choreo_planner,
    "choreo-features": choreo_features,
    "librosa": librosa_beat_track,
    "librosa-plp": librosa_plp,
    "beat-pointer": beat_pointer,
    "committee": committee,
}
