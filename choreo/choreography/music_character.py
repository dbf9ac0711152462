"""What a song is like, in numbers a style can be matched to: its drive, lilt and flow.

Read from the music analysis' public outputs only (:class:`~choreo.audio.MusicFeatures`
and :class:`~choreo.audio.structure.MusicStructure`), never from the beat
tracker's insides. The measures, each mapped onto 0..1 over the range real
songs span (a click track or silence sits at an end):

- **activity**: the onset envelope's mean (dB of rise per frame): how busy
  and percussive the attacks are (drum kits near 1, bowed strings near 0);
- **noisiness**: how little of the sound is pitched (the chroma's peak over
  its mean, low for drums and distorted guitars, high for strings and piano);
- **beat clarity**: attacks on the beats against the sixteenths between them;
- **syncopation**: attacks on the off-beat eighths against the beats
  (hi-hats, montuno, clave); **swing**: at two thirds of the beat against one half;
- **steadiness**: the share of bars with a steady beat (rubato lowers it);
- **onset density** (attacks per second), **meter** (3 or 4) and **energy**
  (the bars' mean energy), for the record.

Three scores in 0..1 come from them, each what a body answers differently:

- **drive** = steadiness x (activity + noisiness) / 2: drum-led music, to be
  hit hard;
- **lilt** = steadiness x max(syncopation, swing) x (1 - noisiness): accents off
  the beat over pitched, steady music (Latin, swing), to be stepped and turned;
- **flow** = (1 - activity) x (1 - noisiness / 2) + (1 - steadiness), at most 1:
  sparse, legato or rubato music (orchestral, piano), to reach and glide to.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.audio import MusicFeatures
from choreo.audio.music_features import CHROMA_COLUMNS, ONSET_ENVELOPE_COLUMN, ONSET_PEAK_COLUMN
from choreo.audio.structure import MusicStructure

__all__ = ["MusicCharacter", "music_character"]


@dataclass(frozen=True)
class MusicCharacter:
    """A song's character (see the module docstring for each number)."""

    tempo_bpm: float
    activity: float
    noisiness: float
    beat_clarity: float
    syncopation: float
    swing: float
    steadiness: float
    onset_density_per_s: float
    meter: int
    energy: float

    @property
    def drive(self) -> float:
        return float(self.steadiness * (self.activity + self.noisiness) / 2.0)

    @property
    def lilt(self) -> float:
        return float(self.steadiness * max(self.syncopation, self.swing) * (1.0 - self.noisiness))

    @property
    def flow(self) -> float:
        return float(min((1.0 - self.activity) * (1.0 - self.noisiness / 2.0) + (1.0 - self.steadiness), 1.0))


def _squash(value: float, low: float, high: float) -> float:
    """``value`` mapped linearly from ``low..high`` onto 0..1, clipped."""
    return float(np.clip((value - low) / (high - low), 0.0, 1.0))


def _at_phase(envelope: np.ndarray, beats_s: np.ndarray, fps: float, phase: float) -> float:
    """Mean onset envelope (the loudest of three frames) at ``phase`` (0..1) of each beat-to-beat span."""
    if beats_s.size < 3:
        return 0.0
    frames = np.rint((beats_s[:-1] + phase * np.diff(beats_s)) * fps).astype(int)
    around = [envelope[np.clip(frames + d, 0, envelope.size - 1)] for d in (-1, 0, 1)]
    return float(np.max(around, axis=0).mean())


def music_character(features: MusicFeatures, structure: MusicStructure) -> MusicCharacter:
    """The character of one analysed song."""
    rows = features.features.astype(np.float64)
    envelope = rows[:, ONSET_ENVELOPE_COLUMN]
    chroma = rows[:, CHROMA_COLUMNS]
    beats = np.asarray(structure.beat_times, dtype=np.float64)
    at = {
        phase: _at_phase(envelope, beats, features.fps, phase) for phase in (0.0, 0.25, 0.5, 2.0 / 3.0, 0.75)
    }
    between = 0.5 * (at[0.25] + at[0.75]) + 1e-6
    pitched = float(np.median(chroma.max(axis=1) / (chroma.mean(axis=1) + 1e-6)))
    return MusicCharacter(
        tempo_bpm=float(features.tempo_bpm),
        activity=_squash(float(envelope.mean()), 0.9, 2.0),
        noisiness=1.0 - _squash(pitched, 3.2, 5.0),
        beat_clarity=_squash(at[0.0] / between, 1.0, 6.0),
        syncopation=_squash(at[0.5] / (at[0.0] + 1e-6), 0.3, 0.9),
        swing=_squash(at[2.0 / 3.0] / (at[0.5] + 1e-6), 1.0, 1.6),
        steadiness=float(np.mean(structure.steady)) if structure.steady.size else 0.0,
        onset_density_per_s=float(rows[:, ONSET_PEAK_COLUMN].sum()) / max(features.duration_s, 1e-6),
        meter=int(structure.beats_per_bar),
        energy=float(np.mean(structure.bar_energy)) if structure.bar_energy.size else 0.0,
    )
