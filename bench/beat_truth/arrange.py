"""Building blocks of the composed songs: a bar grid, step patterns, harmony, and the parts that play them.

A part's rhythm is written as a step pattern, one character per step of a
bar (``steps_per_beat`` steps to a beat): ``X`` accent, ``x`` normal, ``g``
ghost (soft), ``.`` rest. Sixteen steps make a 4/4 bar of sixteenths, six
steps a 6/8 bar of eighths, twelve steps at three to a beat a 4/4 bar of
triplet eighths (the swing grid: ``x.x`` is a 2:1 swung pair).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.beat_truth.midi import DRUM_CHANNEL, PPQ, Part

__all__ = [
    "Bars",
    "Harmony",
    "Kit",
    "chord_pitches",
    "pattern_steps",
    "play_pattern",
    "scale_pitch",
]

# General MIDI percussion keys.
Kit = {
    "kick": 36, "kick2": 35, "snare": 38, "snare2": 40, "rim": 37, "clap": 39, "hat": 42, "pedal": 44,
    "open": 46, "crash": 49, "ride": 51, "bell": 53, "tom_hi": 50, "tom_mid": 47, "tom_lo": 45,
    "floor": 41, "tamb": 54, "cowbell": 56, "bongo_hi": 60, "bongo_lo": 61, "conga_mute": 62,
    "conga_open": 63, "conga_lo": 64, "timbale_hi": 65, "timbale_lo": 66, "agogo_hi": 67, "agogo_lo": 68,
    "cabasa": 69, "maracas": 70, "guiro": 73, "claves": 75, "wood_hi": 76, "wood_lo": 77, "shaker": 82,
    "triangle": 81,
}  # fmt: skip

SCALES = {"major": (0, 2, 4, 5, 7, 9, 11), "minor": (0, 2, 3, 5, 7, 8, 10)}

PROGRESSIONS = {
    "major": ((0, 4, 5, 3), (0, 5, 3, 4), (1, 4, 0, 0), (0, 3, 4, 3), (5, 3, 0, 4), (0, 3, 0, 4)),
    "minor": ((0, 5, 2, 6), (0, 3, 4, 0), (0, 6, 5, 4), (0, 3, 6, 2), (0, 5, 3, 4)),
}
"""Chord progressions as scale degrees (0 = tonic), one chord a bar, repeated."""

_ACCENT = {"X": 1.0, "x": 0.78, "o": 0.62, "g": 0.3}


@dataclass(frozen=True)
class Bars:
    """A run of equal bars: ``count`` bars of ``beats_per_bar`` beats of ``beat`` ticks from ``start``."""

    start: int
    count: int
    beats_per_bar: int
    beat: int = PPQ

    @property
    def bar_ticks(self) -> int:
        return self.beats_per_bar * self.beat

    @property
    def end(self) -> int:
        return self.start + self.count * self.bar_ticks

    def bar(self, index: int) -> int:
        """Tick at which bar ``index`` (0-based within this run) starts."""
        return self.start + index * self.bar_ticks

    def beat_ticks(self) -> list[int]:
        return [self.start + k * self.beat for k in range(self.count * self.beats_per_bar)]

    def downbeat_ticks(self) -> list[int]:
        return [self.bar(k) for k in range(self.count)]


@dataclass(frozen=True)
class Harmony:
    """A key, a mode and a progression of one chord per bar (cycled)."""

    key: int
    mode: str
    progression: tuple[int, ...]

    @classmethod
    def random(cls, rng: np.random.Generator, mode: str | None = None) -> Harmony:
        mode = mode or str(rng.choice(["major", "minor"]))
        options = PROGRESSIONS[mode]
        return cls(int(rng.integers(0, 12)), mode, options[int(rng.integers(0, len(options)))])

    def degree(self, bar: int) -> int:
        return self.progression[bar % len(self.progression)]

    def chord(self, bar: int, *, octave: int = 4, size: int = 3) -> list[int]:
        """MIDI pitches of bar ``bar``'s chord, root position, root in ``octave`` (C4 = 60)."""
        return chord_pitches(self.key, self.mode, self.degree(bar), octave=octave, size=size)

    def root(self, bar: int, *, octave: int = 2) -> int:
        return self.chord(bar, octave=octave, size=1)[0]

    def scale(self, step: int, *, octave: int = 5) -> int:
        """Pitch of scale step ``step`` (0 = tonic of ``octave``; negative and beyond 7 wrap octaves)."""
        return scale_pitch(self.key, self.mode, step, octave=octave)


def scale_pitch(key: int, mode: str, step: int, *, octave: int) -> int:
    """MIDI pitch of scale step ``step`` counted from the tonic in ``octave``."""
    scale = SCALES[mode]
    return 12 * (octave + 1) + key + scale[step % 7] + 12 * (step // 7)


def chord_pitches(key: int, mode: str, degree: int, *, octave: int, size: int = 3) -> list[int]:
    """Stacked thirds on scale degree ``degree``: a triad (3), a seventh chord (4), or the root (1)."""
    return [scale_pitch(key, mode, degree + 2 * k, octave=octave) for k in range(size)]


def pattern_steps(pattern: str, *, steps_per_beat: int, beat: int = PPQ) -> list[tuple[int, float]]:
    """(tick offset in the bar, accent 0-1) of every hit in a step pattern (spaces are ignored)."""
    steps = pattern.replace(" ", "")
    return [
        (round(index * beat / steps_per_beat), _ACCENT[char])
        for index, char in enumerate(steps)
        if char != "."
    ]


def play_pattern(
    part: Part,
    bars: Bars,
    pattern: str,
    *,
    pitch: int | list[int],
    steps_per_beat: int,
    velocity: float,
    rng: np.random.Generator,
    length: int | None = None,
    bar_indices: range | None = None,
    humanise: float = 6.0,
) -> None:
    """Play a step pattern in every bar of ``bars`` (or ``bar_indices``), each hit one pitch or a chord.

    Velocities are ``velocity * accent`` with seeded jitter of ``humanise``; timing is exact.
    """
    hits = pattern_steps(pattern, steps_per_beat=steps_per_beat, beat=bars.beat)
    step_ticks = round(bars.beat / steps_per_beat)
    pitches = pitch if isinstance(pitch, list) else [pitch]
    for index in bar_indices if bar_indices is not None else range(bars.count):
        start = bars.bar(index)
        for offset, accent in hits:
            for p in pitches:
                part.add(start + offset, length or step_ticks, p, velocity * accent + rng.normal(0, humanise))


def drum_part(name: str = "drums", *, volume: int = 110) -> Part:
    """An empty GM drum kit part."""
    return Part(name, 0, DRUM_CHANNEL, volume=volume)
