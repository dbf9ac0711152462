"""Music beats for scoring, taken the way the published beat-alignment numbers took them.

Bailando's evaluation (and the AIST++, Bailando and EDGE numbers quoted beside
ours) finds music beats with librosa's beat tracker. Choreo's own feature
extractor has its own tracker, tuned for the model's input; scoring with
librosa's keeps our beat-alignment score comparable with those anchors.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from choreo.audio import load_audio

__all__ = ["BEAT_TRACKER_SR", "librosa_beat_times"]

BEAT_TRACKER_SR = 22050
_HOP_LENGTH = 512


@lru_cache(maxsize=64)
def _beats_of(path: str) -> tuple[float, ...]:
    import librosa

    y = load_audio(Path(path), sr=BEAT_TRACKER_SR)
    _, beats = librosa.beat.beat_track(y=y, sr=BEAT_TRACKER_SR, hop_length=_HOP_LENGTH, units="time")
    return tuple(float(t) for t in beats)


def librosa_beat_times(song: Path) -> np.ndarray:
    """Beat times in seconds of ``song`` from ``librosa.beat.beat_track`` (22050 Hz, hop 512).

    Results are cached per resolved path, so scoring several seeds of one song
    tracks its beats once.
    """
    return np.array(_beats_of(str(Path(song).resolve())), dtype=np.float64)
