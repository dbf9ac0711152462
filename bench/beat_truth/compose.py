"""A composed song from its recipe: a style's arrangement on a tempo map, with an optional free-time intro.

:class:`Recipe` is what the catalogue lists for a composed song (style, seed,
tempo, tempo shape, meter, intro); :func:`compose` turns it into a
:class:`~bench.beat_truth.midi.Score`, deterministically for the seed.

Tempo shapes (the ``tempo`` field), in the beat unit:

* ``steady``: ``bpm`` throughout.
* ``ramp:B``: from ``bpm`` to ``B`` linearly over the song (accelerando or
  ritardando), the tempo re-set every half beat.
* ``rit:F``: steady, then the last eight bars slow to ``F`` times ``bpm``.
* ``jump:B``: ``bpm`` for the first half, ``B`` from the bar at the middle on.
* ``steps:B1/B2/...``: a new tempo every eight bars, cycling ``bpm``, ``B1``, ``B2``...
* ``ramp_jump:B/C``: ramps to ``B`` over the first half, then jumps to ``C``.

A free-time intro (``intro_s`` > 0) is sustained pad chords and harp-like
flourishes at random, non-periodic times: no pulse, and no beats in the truth.
The beat starts at the first bar after it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.beat_truth.arrange import Bars, Harmony
from bench.beat_truth.midi import PPQ, Part, Score, TempoEvent
from bench.beat_truth.styles import STYLES

__all__ = ["Recipe", "compose"]

METERS = {"4/4": (4, PPQ, (4, 4)), "3/4": (3, PPQ, (3, 4)), "6/8": (2, PPQ * 3 // 2, (6, 8))}
"""Meter -> (beats per bar, ticks per beat, MIDI time signature). 6/8 has two dotted-quarter beats."""

INTRO_PROGRAMS = (89, 91, 49, 52, 94, 88)
"""Warm pad, choir pad, slow strings, choir aahs, halo pad, new-age pad: sounds without a sharp attack."""

FLOURISH_PROGRAMS = (46, 8, 11, 14)
"""Harp, celesta, vibraphone, tubular bells: the irregular ornaments over the intro's pad."""


@dataclass(frozen=True)
class Recipe:
    """How to compose one song; ``seed`` fixes every random choice."""

    style: str
    seed: int
    bpm: float
    duration_s: float
    meter: str = "4/4"
    tempo: str = "steady"
    intro_s: float = 0.0


def compose(recipe: Recipe) -> Score:
    """The score of ``recipe``: notes, tempo map, and the beat and bar ticks of its beat part."""
    rng = np.random.default_rng(recipe.seed)
    beats_per_bar, beat, signature = METERS[recipe.meter]
    harmony = Harmony.random(rng)
    quarter_per_beat = beat / PPQ
    intro_ticks = _beat_round(recipe.intro_s * recipe.bpm / 60.0 * beat, beat * beats_per_bar)
    count = max(8, round(recipe.duration_s * _mean_bpm(recipe) / 60.0 / beats_per_bar / 4) * 4)
    bars = Bars(intro_ticks, count, beats_per_bar, beat)
    parts = STYLES[recipe.style](rng, bars, harmony)
    if intro_ticks:
        parts += _free_intro(rng, intro_ticks, harmony, recipe.bpm * quarter_per_beat)
    _assign_channels(parts)
    tempo = _tempo_map(recipe, bars, quarter_per_beat)
    end = max(n.tick + n.length for p in parts for n in p.notes) + PPQ
    return Score(parts, tempo, beats_per_bar, beat, bars.beat_ticks(), bars.downbeat_ticks(), end, signature)


def _beat_round(ticks: float, bar_ticks: int) -> int:
    """Intro length rounded up to whole bars (so the beat part's bars start on the grid of its own meter)."""
    return int(np.ceil(ticks / bar_ticks) * bar_ticks) if ticks > 0 else 0


def _mean_bpm(recipe: Recipe) -> float:
    numbers = [float(x) for x in recipe.tempo.partition(":")[2].split("/") if x]
    if recipe.tempo.startswith("rit"):
        return recipe.bpm
    return float(np.mean([recipe.bpm, *numbers]))


def _tempo_map(recipe: Recipe, bars: Bars, quarter_per_beat: float) -> list[TempoEvent]:
    """Tempo events for the recipe's shape; BPM in the beat unit converted to MIDI quarter notes."""
    shape, _, arguments = recipe.tempo.partition(":")
    values = [float(x) for x in arguments.split("/")] if arguments else []
    half = bars.beat // 2
    ticks = np.arange(bars.start, bars.end + bars.bar_ticks, half)
    where = (ticks - bars.start) / max(1, bars.end - bars.start)  # 0 at the first beat, 1 at the end
    bpm = np.full(ticks.size, recipe.bpm)
    middle = bars.bar(bars.count // 2)
    if shape == "ramp":
        bpm = recipe.bpm + (values[0] - recipe.bpm) * np.clip(where, 0, 1)
    elif shape == "rit":
        slow_from = bars.bar(bars.count - 8)
        fraction = np.clip((ticks - slow_from) / (bars.end - slow_from), 0, 1)
        bpm = recipe.bpm * (1 + (values[0] - 1) * fraction)
    elif shape == "jump":
        bpm = np.where(ticks >= middle, values[0], recipe.bpm)
    elif shape == "steps":
        cycle = [recipe.bpm, *values]
        bpm = np.array([cycle[int((t - bars.start) // (8 * bars.bar_ticks)) % len(cycle)] for t in ticks])
    elif shape == "ramp_jump":
        ramp = recipe.bpm + (values[0] - recipe.bpm) * np.clip(
            (ticks - bars.start) / (middle - bars.start), 0, 1
        )
        bpm = np.where(ticks >= middle, values[1], ramp)
    elif shape != "steady":
        raise ValueError(f"unknown tempo shape {recipe.tempo!r}")
    events = [TempoEvent(0, recipe.bpm * quarter_per_beat)]
    for tick, value in zip(ticks, bpm, strict=True):
        if abs(value * quarter_per_beat - events[-1].quarter_bpm) > 1e-6:
            events.append(TempoEvent(int(tick), float(value * quarter_per_beat)))
    return events


def _free_intro(rng: np.random.Generator, length: int, harmony: Harmony, quarter_bpm: float) -> list[Part]:
    """Sustained, overlapping pad chords and scattered flourishes: no pulse for ``length`` ticks."""
    ticks_per_s = quarter_bpm / 60.0 * PPQ
    pad = Part("intro pad", int(rng.choice(INTRO_PROGRAMS)), 0, volume=int(rng.integers(80, 110)))
    time = 0.0
    bar = 0
    while time < length:
        hold = rng.uniform(2.0, 5.0) * ticks_per_s
        for pitch in harmony.chord(bar, octave=4, size=4):
            pad.add(int(time), int(min(hold * 1.3, length - time)), pitch, int(rng.integers(45, 75)))
        time += hold * rng.uniform(0.6, 1.1)
        bar += 1
    flourish = Part(
        "intro flourish", int(rng.choice(FLOURISH_PROGRAMS)), 0, volume=int(rng.integers(70, 100))
    )
    time = rng.uniform(0.5, 2.0) * ticks_per_s
    while time < length - ticks_per_s:
        step = int(rng.integers(0, 7))
        for _ in range(int(rng.integers(3, 9))):  # a run of notes at irregular gaps
            flourish.add(
                int(time), int(ticks_per_s * 0.8), harmony.scale(step, octave=5), int(rng.integers(40, 80))
            )
            step += int(rng.choice([-1, 1, 2]))
            time += rng.uniform(0.07, 0.35) * ticks_per_s
        time += rng.uniform(1.0, 4.0) * ticks_per_s
    return [pad, flourish]


def _assign_channels(parts: list[Part]) -> None:
    """Give each melodic part its own channel (drums stay on 9); parts of one program share one."""
    free = iter([c for c in range(16) if c != 9])
    by_program: dict[int, int] = {}
    for part in parts:
        if part.channel == 9:
            continue
        if part.program not in by_program:
            by_program[part.program] = next(free)
        part.channel = by_program[part.program]
