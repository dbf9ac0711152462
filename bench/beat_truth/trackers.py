"""The beat trackers the bench scores: each maps a song file to (beat times, downbeat times or None).

* ``choreo``: what the planner follows - the steady bars' beats and
  downbeats of :func:`choreo.audio.structure.analyze_structure` on
  :func:`choreo.pipeline.prepare_song` (as ``bench/beat_agreement.py`` takes them);
* ``choreo-features``: the tracker's own output before the steady-bar filter
  (``MusicFeatures.beat_times`` / ``downbeat_times``);
* ``librosa``: ``librosa.beat.beat_track`` at 22050 Hz, hop 512, as the beat
  alignment scores take it (:func:`choreo.metrics.music_beats.librosa_beat_times`);
* ``librosa-plp``: the peaks of ``librosa.beat.plp`` (predominant local pulse);
* ``beat-pointer``: the research candidate of :mod:`bench.beat_pointer`.

Each tracker decodes the file itself, so its CPU time includes decoding.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

__all__ = ["TRACKERS", "Tracker"]

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


def librosa_beat_track(song: Path) -> tuple[np.ndarray, np.ndarray | None]:
    from choreo.metrics.music_beats import librosa_beat_times

    return librosa_beat_times(song), None


def librosa_plp(song: Path) -> tuple[np.ndarray, np.ndarray | None]:
    import librosa

    from choreo.audio import load_audio
    from choreo.metrics.music_beats import BEAT_TRACKER_SR

    y = load_audio(song, sr=BEAT_TRACKER_SR)
    onset = librosa.onset.onset_strength(y=y, sr=BEAT_TRACKER_SR, hop_length=512)
    pulse = librosa.beat.plp(onset_envelope=onset, sr=BEAT_TRACKER_SR, hop_length=512)
    peaks = np.flatnonzero(librosa.util.localmax(pulse))
    return librosa.frames_to_time(peaks, sr=BEAT_TRACKER_SR, hop_length=512), None


def beat_pointer(song: Path) -> tuple[np.ndarray, np.ndarray | None]:
    from bench.beat_pointer import track_song

    result = track_song(song)
    return result.beat_times, result.downbeat_times


TRACKERS: dict[str, Tracker] = {
    "choreo": choreo_planner,
    "choreo-features": choreo_features,
    "librosa": librosa_beat_track,
    "librosa-plp": librosa_plp,
    "beat-pointer": beat_pointer,
}
