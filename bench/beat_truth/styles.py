"""Arrangements: each style fills a run of bars with a full band (drums, bass, chords, melody) in its idiom.

A style is a function ``(rng, bars, harmony) -> list[Part]``. Every note sits
exactly on the tick grid (no timing jitter: the beat truth is the note-on
grid); what varies by seed is the key, progression, patterns, fills, voicings,
velocities and the mix. Swing places the off-beat eighth at two thirds of the
beat (a 2:1 feel); compound meters (6/8) divide the beat in three.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bench.beat_truth.arrange import Bars, Harmony, Kit, drum_part, play_pattern
from bench.beat_truth.midi import Part

__all__ = ["STYLES", "Style", "melody"]

Style = Callable[[np.random.Generator, Bars, Harmony], list[Part]]

# GM programs (0-based).
PIANO, BRIGHT_PIANO, EPIANO, HARPSICHORD, ORGAN, ACCORDION = 0, 1, 4, 6, 16, 21
NYLON, STEEL, JAZZ_GTR, CLEAN_GTR, OVERDRIVE, DISTORTION = 24, 25, 26, 27, 29, 30
ACOUSTIC_BASS, FINGER_BASS, PICK_BASS, SYNTH_BASS = 32, 33, 34, 38
VIOLIN, CELLO, CONTRABASS, PIZZICATO, STRINGS, SLOW_STRINGS, TIMPANI = 40, 42, 43, 45, 48, 49, 47
TRUMPET, TROMBONE, HORN, BRASS = 56, 57, 60, 61
ALTO_SAX, TENOR_SAX, CLARINET, FLUTE, OBOE, WHISTLE = 65, 66, 71, 73, 68, 78
SQUARE_LEAD, SAW_LEAD, PAD_WARM, PAD_POLY = 80, 81, 89, 90
VIBES, MARIMBA = 11, 12


def _choice(rng: np.random.Generator, options: list | tuple):
    return options[int(rng.integers(0, len(options)))]


def _vel(rng: np.random.Generator, low: int, high: int) -> int:
    return int(rng.integers(low, high + 1))


def melody(
    rng: np.random.Generator,
    bars: Bars,
    harmony: Harmony,
    *,
    program: int,
    channel: int,
    steps_per_beat: int,
    rhythms: list[str],
    octave: int = 5,
    velocity: int = 90,
    volume: int = 100,
    rest_bars: int = 0,
    name: str = "melody",
) -> Part:
    """A motif-based tune: a few bar rhythms repeated in phrases of four, pitches walking the scale.

    Strong steps prefer chord tones; each phrase repeats the first's rhythm with
    new pitches, as tunes do. ``rest_bars`` leaves the first bars of every
    eight silent (the melody enters later).
    """
    part = Part(name, program, channel, volume=volume, pan=_vel(rng, 40, 88))
    motifs = [_choice(rng, rhythms) for _ in range(2)]
    step = int(rng.integers(0, 5))
    step_ticks = round(bars.beat / steps_per_beat)
    for bar in range(bars.count):
        if bar % 8 < rest_bars:
            continue
        rhythm = motifs[(bar // 2) % 2] if bar % 4 != 3 else motifs[0][: len(motifs[0]) // 2]
        hits = [i for i, c in enumerate(rhythm.replace(" ", "")) if c != "."]
        chord = {p % 12 for p in harmony.chord(bar, octave=4, size=3)}
        for n, index in enumerate(hits):
            step += int(rng.choice([-2, -1, -1, 0, 1, 1, 2]))
            step = int(np.clip(step, -3, 9))
            pitch = harmony.scale(step, octave=octave)
            if index % steps_per_beat == 0 and pitch % 12 not in chord:
                pitch = min(
                    (p for p in range(pitch - 2, pitch + 3) if p % 12 in chord),
                    key=lambda p: abs(p - pitch),
                    default=pitch,
                )
            following = hits[n + 1] if n + 1 < len(hits) else len(rhythm.replace(" ", ""))
            length = max(1, following - index) * step_ticks - 10
            accent = 1.0 if index % steps_per_beat == 0 else 0.85
            part.add(bars.bar(bar) + index * step_ticks, length, pitch, velocity * accent + rng.normal(0, 6))
    return part


def _fill(drums: Part, rng: np.random.Generator, start: int, beat: int, beats: int, velocity: int) -> None:
    """A tom-and-snare fill of sixteenths over the last ``beats`` beats before ``start + beats * beat``."""
    toms = [Kit["snare"], Kit["tom_hi"], Kit["tom_mid"], Kit["tom_lo"], Kit["floor"]]
    kind = int(rng.integers(0, 3))
    for k in range(beats * 4):
        if kind == 2 and k % 2:
            continue
        drum = Kit["snare"] if kind == 0 else toms[min(len(toms) - 1, k * len(toms) // (beats * 4))]
        drums.add(start + k * beat // 4, beat // 4, drum, velocity * (0.7 + 0.3 * k / (beats * 4)))


def _kit(
    rng: np.random.Generator,
    bars: Bars,
    groove: dict[str, str],
    *,
    steps_per_beat: int = 4,
    velocity: int = 100,
    fill_every: int = 4,
    crash_every: int = 8,
) -> Part:
    """A drum kit playing ``groove`` (drum name -> bar pattern), with fills and crashes on section starts."""
    drums = drum_part(volume=_vel(rng, 95, 120))
    fill_beats = int(rng.integers(1, 3))
    normal = [b for b in range(bars.count) if not (fill_every and b % fill_every == fill_every - 1)]
    filled = [b for b in range(bars.count) if b not in normal]
    keep = bars.beats_per_bar - fill_beats
    for name, pattern in groove.items():
        for bar in normal:
            play_pattern(
                drums,
                bars,
                pattern,
                pitch=Kit[name],
                steps_per_beat=steps_per_beat,
                velocity=velocity,
                rng=rng,
                bar_indices=range(bar, bar + 1),
            )
        cut = pattern.replace(" ", "")[: keep * steps_per_beat]
        for bar in filled:
            play_pattern(
                drums,
                bars,
                cut,
                pitch=Kit[name],
                steps_per_beat=steps_per_beat,
                velocity=velocity,
                rng=rng,
                bar_indices=range(bar, bar + 1),
            )
    for bar in filled:
        _fill(drums, rng, bars.bar(bar) + keep * bars.beat, bars.beat, fill_beats, velocity)
    for bar in range(0, bars.count, crash_every):
        drums.add(bars.bar(bar), bars.beat * 2, Kit["crash"], velocity)
    return drums


def _bass_line(
    rng: np.random.Generator,
    bars: Bars,
    harmony: Harmony,
    pattern: str,
    *,
    program: int,
    steps_per_beat: int,
    velocity: int = 100,
    fifths: bool = True,
    octave: int = 2,
) -> Part:
    """Bass on the bar's root (and its fifth or octave on weaker hits) in a step pattern."""
    bass = Part("bass", program, 1, volume=_vel(rng, 90, 115))
    hits = [(i, c) for i, c in enumerate(pattern.replace(" ", "")) if c != "."]
    step_ticks = round(bars.beat / steps_per_beat)
    for bar in range(bars.count):
        root = harmony.root(bar, octave=octave)
        for n, (index, char) in enumerate(hits):
            following = hits[n + 1][0] if n + 1 < len(hits) else len(pattern.replace(" ", ""))
            pitch = root if (char in "Xx" or not fifths) else root + _choice(rng, [7, 12, 7, 0])
            accent = {"X": 1.0, "x": 0.85, "o": 0.75, "g": 0.55}[char]
            bass.add(
                bars.bar(bar) + index * step_ticks,
                (following - index) * step_ticks - 15,
                pitch,
                velocity * accent + rng.normal(0, 5),
            )
    return bass


def _chords(
    rng: np.random.Generator,
    bars: Bars,
    harmony: Harmony,
    pattern: str,
    *,
    program: int,
    channel: int,
    steps_per_beat: int,
    velocity: int = 75,
    octave: int = 4,
    size: int = 3,
    length: int | None = None,
    name: str = "chords",
) -> Part:
    """The bar's chord struck on every hit of ``pattern``."""
    part = Part(name, program, channel, volume=_vel(rng, 75, 105), pan=_vel(rng, 30, 98))
    for bar in range(bars.count):
        play_pattern(
            part,
            bars,
            pattern,
            pitch=harmony.chord(bar, octave=octave, size=size),
            steps_per_beat=steps_per_beat,
            velocity=velocity,
            rng=rng,
            bar_indices=range(bar, bar + 1),
            length=length,
        )
    return part


def _pad(
    rng: np.random.Generator,
    bars: Bars,
    harmony: Harmony,
    *,
    program: int,
    channel: int,
    velocity: int = 60,
    size: int = 4,
) -> Part:
    """A sustained chord per bar (no new attack inside the bar)."""
    part = Part("pad", program, channel, volume=_vel(rng, 60, 90))
    for bar in range(bars.count):
        for pitch in harmony.chord(bar, octave=4, size=size):
            part.add(bars.bar(bar), bars.bar_ticks - 20, pitch, velocity + rng.normal(0, 4))
    return part


# ---------------------------------------------------------------------------------------------- drum-led

STRAIGHT_TUNES = [
    "x.x.x...x.x.x...",
    "x...x.x.x...x...",
    "x..x..x.x.......",
    "x.x.x.x.x.x.x...",
    "..x.x.x.x..x.x..",
]


def rock(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Rock: kick on 1 and 3, snare backbeat, eighth hats or ride, eighth-note bass, power chords, lead."""
    kick = _choice(rng, ["X.....x.X.......", "X.......X.x.....", "X.....x.X..x...."])
    groove = {"kick": kick, "snare": "....X.......X...", _choice(rng, ["hat", "ride"]): "x.x.x.x.x.x.x.x."}
    return [
        _kit(rng, bars, groove, velocity=_vel(rng, 95, 115)),
        _bass_line(
            rng,
            bars,
            harmony,
            "x.o.x.o.x.o.x.o.",
            program=_choice(rng, [FINGER_BASS, PICK_BASS]),
            steps_per_beat=4,
        ),
        _chords(
            rng,
            bars,
            harmony,
            _choice(rng, ["x.......x.......", "x.....x...x.....", "x.x.x.x.x.x.x.x."]),
            program=_choice(rng, [DISTORTION, OVERDRIVE, CLEAN_GTR]),
            channel=2,
            steps_per_beat=4,
            size=2,
            octave=3,
        ),
        melody(
            rng,
            bars,
            harmony,
            program=_choice(rng, [SAW_LEAD, OVERDRIVE, TENOR_SAX]),
            channel=3,
            steps_per_beat=4,
            rhythms=STRAIGHT_TUNES,
            rest_bars=2,
        ),
    ]


def funk(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Funk: sixteenth hats, syncopated kick, ghost-note snare, slap-style bass, clavinet-like stabs."""
    groove = {
        "kick": _choice(rng, ["X..x..x...x.....", "X.x....x..x..x..", "X..x...x.x......"]),
        "snare": "....X..g.g..X..g",
        "hat": "xgxgxgxgxgxgxoxg",
    }
    return [
        _kit(rng, bars, groove, velocity=_vel(rng, 90, 110)),
        _bass_line(
            rng,
            bars,
            harmony,
            _choice(rng, ["X..x..x.x.x..x..", "X.x..xx...x.x..x"]),
            program=_choice(rng, [FINGER_BASS, 36]),
            steps_per_beat=4,
        ),
        _chords(
            rng,
            bars,
            harmony,
            _choice(rng, [".x..x.x..x..x.x.", "..x...x...x..x.x"]),
            program=_choice(rng, [7, CLEAN_GTR, EPIANO]),
            channel=2,
            steps_per_beat=4,
            size=4,
            length=90,
        ),
        melody(
            rng,
            bars,
            harmony,
            program=_choice(rng, [ALTO_SAX, TRUMPET, SQUARE_LEAD]),
            channel=3,
            steps_per_beat=4,
            rhythms=STRAIGHT_TUNES,
            rest_bars=4,
        ),
    ]


def house(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """House / four on the floor: kick on every beat, open hat on the off-beats, clap on 2 and 4, bass off."""
    groove = {
        "kick": "X...X...X...X...",
        "clap": "....x.......x...",
        "open": "..x...x...x...x.",
        "hat": "x.x.x.x.x.x.x.x." if rng.random() < 0.5 else "xxxxxxxxxxxxxxxx",
    }
    return [
        _kit(rng, bars, groove, velocity=_vel(rng, 95, 115), fill_every=8),
        _bass_line(
            rng, bars, harmony, "..x...x...x...x.", program=SYNTH_BASS, steps_per_beat=4, fifths=False
        ),
        _chords(
            rng,
            bars,
            harmony,
            _choice(rng, ["x..x..x...x..x..", "..x..x....x..x.."]),
            program=_choice(rng, [PAD_POLY, EPIANO, ORGAN]),
            channel=2,
            steps_per_beat=4,
            size=4,
            length=200,
        ),
        melody(
            rng,
            bars,
            harmony,
            program=_choice(rng, [SQUARE_LEAD, SAW_LEAD, VIBES]),
            channel=3,
            steps_per_beat=4,
            rhythms=STRAIGHT_TUNES,
            rest_bars=4,
            velocity=80,
        ),
    ]


def hiphop(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Boom-bap: heavy kick on 1 and the and-of-2, snare on 2 and 4, sixteenth hats, long bass, piano loop."""
    groove = {
        "kick": _choice(rng, ["X.....x...x.....", "X..x......x..x.."]),
        "snare": "....X.......X...",
        "hat": "x.xgx.xgx.xgx.xg",
    }
    return [
        _kit(rng, bars, groove, velocity=_vel(rng, 100, 120), fill_every=8),
        _bass_line(
            rng,
            bars,
            harmony,
            "X.....x...x.....",
            program=_choice(rng, [SYNTH_BASS, FINGER_BASS]),
            steps_per_beat=4,
            fifths=False,
            octave=1,
        ),
        _chords(
            rng,
            bars,
            harmony,
            "x.....x.....x...",
            program=_choice(rng, [EPIANO, PIANO, VIBES]),
            channel=2,
            steps_per_beat=4,
            size=4,
            length=300,
        ),
        melody(
            rng,
            bars,
            harmony,
            program=_choice(rng, [FLUTE, VIBES, EPIANO]),
            channel=3,
            steps_per_beat=4,
            rhythms=["x...x.x.........", "x..x..x.x.......", "x.......x..x...."],
            rest_bars=2,
            velocity=75,
        ),
    ]


def breakbeat(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Drum and bass / breakbeat at a fast tempo: two-step kick, snare on 2 and 4, busy hats, sub bass."""
    groove = {
        "kick": _choice(rng, ["X.........x.....", "X.......X.x....."]),
        "snare": "....X..g....X...",
        "hat": "x.xxx.x.x.xxx.x.",
        "ride": "x...x...x...x...",
    }
    return [
        _kit(rng, bars, groove, velocity=_vel(rng, 95, 115)),
        _bass_line(rng, bars, harmony, "X.......x.x.....", program=SYNTH_BASS, steps_per_beat=4, octave=1),
        _pad(rng, bars, harmony, program=_choice(rng, [PAD_WARM, SLOW_STRINGS]), channel=2),
        melody(
            rng,
            bars,
            harmony,
            program=_choice(rng, [VIBES, FLUTE, SQUARE_LEAD]),
            channel=3,
            steps_per_beat=4,
            rhythms=["x.......x.......", "x...x.......x..."],
            rest_bars=4,
            velocity=70,
        ),
    ]


def punk(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Punk: kick and snare alternating eighths, crash-ride eighths, root eighths on bass and guitar."""
    groove = {"kick": "x...x...x...x...", "snare": "..x...x...x...x.", "ride": "x.x.x.x.x.x.x.x."}
    return [
        _kit(rng, bars, groove, velocity=_vel(rng, 100, 120), fill_every=8),
        _bass_line(rng, bars, harmony, "x.x.x.x.x.x.x.x.", program=PICK_BASS, steps_per_beat=4, fifths=False),
        _chords(
            rng,
            bars,
            harmony,
            "x.x.x.x.x.x.x.x.",
            program=DISTORTION,
            channel=2,
            steps_per_beat=4,
            size=2,
            octave=3,
            length=100,
        ),
        melody(
            rng,
            bars,
            harmony,
            program=OVERDRIVE,
            channel=3,
            steps_per_beat=4,
            rhythms=["x...x...x...x...", "x.x.x...x......."],
            rest_bars=4,
        ),
    ]


# ---------------------------------------------------------------------------------------------- Latin


def _clave(rng: np.random.Generator, bars: Bars, two_bar: tuple[str, str], drum: str, velocity: int) -> Part:
    part = drum_part("clave", volume=_vel(rng, 80, 110))
    for bar in range(bars.count):
        play_pattern(
            part,
            bars,
            two_bar[bar % 2],
            pitch=Kit[drum],
            steps_per_beat=2,
            velocity=velocity,
            rng=rng,
            bar_indices=range(bar, bar + 1),
        )
    return part


SON_CLAVE_32 = ("x..x..x.", "..x.x...")
RUMBA_CLAVE_32 = ("x..x...x", "..x.x...")


def son_montuno(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Son montuno / salsa: 3-2 clave, conga tumbao, anticipated bass tumbao (no bass on 1), piano montuno."""
    clave = _choice(rng, [SON_CLAVE_32, RUMBA_CLAVE_32])
    congas = drum_part("congas", volume=_vel(rng, 85, 110))
    play_pattern(congas, bars, "g.x.g.x.", pitch=Kit["conga_mute"], steps_per_beat=2, velocity=80, rng=rng)
    play_pattern(congas, bars, "......xx", pitch=Kit["conga_open"], steps_per_beat=2, velocity=95, rng=rng)
    play_pattern(congas, bars, "...x....", pitch=Kit["conga_lo"], steps_per_beat=2, velocity=85, rng=rng)
    bell = drum_part("bell", volume=_vel(rng, 70, 100))
    play_pattern(
        bell,
        bars,
        _choice(rng, ["x.x.x.x.", "X.xxX.xx"]),
        pitch=Kit[_choice(rng, ["cowbell", "agogo_hi"])],
        steps_per_beat=2,
        velocity=85,
        rng=rng,
    )
    play_pattern(bell, bars, "xxxxxxxx", pitch=Kit["guiro"], steps_per_beat=2, velocity=55, rng=rng)
    bass = Part("bass", _choice(rng, [ACOUSTIC_BASS, FINGER_BASS]), 1, volume=_vel(rng, 95, 115))
    for bar in range(bars.count):
        nxt = harmony.root(bar + 1, octave=2)
        bass.add(bars.bar(bar) + 3 * bars.beat // 2, bars.beat * 3 // 2, harmony.root(bar, octave=2) + 7, 95)
        bass.add(bars.bar(bar) + 3 * bars.beat, bars.beat * 3 // 2, nxt, 100)  # anticipates the next chord
    montuno = _chords(
        rng,
        bars,
        harmony,
        _choice(rng, ["x.xx.x.xx.x.xx.x", ".x.x.xx..x.x.xx."]),
        program=_choice(rng, [PIANO, BRIGHT_PIANO]),
        channel=2,
        steps_per_beat=4,
        size=3,
        octave=5,
        length=100,
        name="montuno",
    )
    horns = melody(
        rng,
        bars,
        harmony,
        program=_choice(rng, [TRUMPET, TROMBONE, FLUTE]),
        channel=3,
        steps_per_beat=4,
        rhythms=["x..x..x...x.x...", "..x.x..x..x.....", "x.x...x..x..x..."],
        rest_bars=4,
    )
    return [_clave(rng, bars, clave, "claves", 95), congas, bell, bass, montuno, horns]


def bossa(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Bossa nova: rim-shot bossa clave, shaker sixteenths, bass on 1 and the and-of-2, nylon guitar."""
    kit = drum_part("kit", volume=_vel(rng, 80, 105))
    play_pattern(kit, bars, "X..x..X.", pitch=Kit["kick"], steps_per_beat=2, velocity=75, rng=rng)
    play_pattern(
        kit,
        bars,
        "xgxgxgxgxgxgxgxg",
        pitch=Kit[_choice(rng, ["shaker", "cabasa", "hat"])],
        steps_per_beat=4,
        velocity=60,
        rng=rng,
    )
    rim = ("x..x..x.", "..x..x..")
    bass = _bass_line(rng, bars, harmony, "x..x..x.", program=ACOUSTIC_BASS, steps_per_beat=2)
    guitar = _chords(
        rng,
        bars,
        harmony,
        _choice(rng, ["x.xx.x.x", "x.x..x.x"]),
        program=NYLON,
        channel=2,
        steps_per_beat=2,
        size=4,
        octave=4,
        length=200,
        name="guitar",
    )
    tune = melody(
        rng,
        bars,
        harmony,
        program=_choice(rng, [FLUTE, ALTO_SAX, VIBES]),
        channel=3,
        steps_per_beat=2,
        rhythms=["x..x..x.", "x.x...x.", "..x.x..x"],
        velocity=75,
        rest_bars=2,
    )
    return [kit, _clave(rng, bars, rim, "rim", 80), bass, guitar, tune]


def samba(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Samba (two beats a bar felt in four here): surdo on 2 and 4, tamborim, shaker sixteenths."""
    kit = drum_part("batucada", volume=_vel(rng, 90, 115))
    play_pattern(kit, bars, "x...X...x...X...", pitch=Kit["floor"], steps_per_beat=4, velocity=100, rng=rng)
    play_pattern(kit, bars, "XgxxXgxxXgxxXgxx", pitch=Kit["shaker"], steps_per_beat=4, velocity=70, rng=rng)
    play_pattern(
        kit,
        bars,
        _choice(rng, ["x.x..x.x.x..x.x.", "x.xx.x.x.xx.x.x."]),
        pitch=Kit["tamb"],
        steps_per_beat=4,
        velocity=80,
        rng=rng,
    )
    play_pattern(kit, bars, "x.x.xx.x", pitch=Kit["agogo_lo"], steps_per_beat=2, velocity=70, rng=rng)
    bass = _bass_line(rng, bars, harmony, "x..ox..ox..ox..o", program=ACOUSTIC_BASS, steps_per_beat=4)
    guitar = _chords(
        rng,
        bars,
        harmony,
        "x.xx.x.xx.x.x.x.",
        program=_choice(rng, [NYLON, STEEL]),
        channel=2,
        steps_per_beat=4,
        size=3,
        length=90,
        name="cavaquinho",
    )
    tune = melody(
        rng,
        bars,
        harmony,
        program=_choice(rng, [FLUTE, TRUMPET, WHISTLE]),
        channel=3,
        steps_per_beat=4,
        rhythms=["x.x..x.x..x.x...", "..x..x..x.x....."],
        rest_bars=4,
    )
    return [kit, bass, guitar, tune]


def cha_cha(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Cha-cha-cha: cowbell quarters, guiro long-short, the cha-cha on 4-and, tumbao bass, piano guajeo."""
    kit = drum_part("percussion", volume=_vel(rng, 85, 110))
    play_pattern(kit, bars, "x.x.x.x.", pitch=Kit["cowbell"], steps_per_beat=2, velocity=85, rng=rng)
    play_pattern(kit, bars, "x.xxx.xx", pitch=Kit["guiro"], steps_per_beat=2, velocity=65, rng=rng)
    play_pattern(kit, bars, "......xx", pitch=Kit["conga_open"], steps_per_beat=2, velocity=95, rng=rng)
    play_pattern(kit, bars, "..g...g.", pitch=Kit["conga_mute"], steps_per_beat=2, velocity=75, rng=rng)
    bass = _bass_line(
        rng, bars, harmony, "...x..x.", program=_choice(rng, [ACOUSTIC_BASS, FINGER_BASS]), steps_per_beat=2
    )
    piano = _chords(
        rng,
        bars,
        harmony,
        "x.x..x.xx.x..x.x",
        program=PIANO,
        channel=2,
        steps_per_beat=4,
        size=3,
        octave=5,
        length=100,
        name="guajeo",
    )
    tune = melody(
        rng,
        bars,
        harmony,
        program=_choice(rng, [VIOLIN, FLUTE]),
        channel=3,
        steps_per_beat=2,
        rhythms=["x.x.x.xx", "x..x.xx.", "x.x.x..."],
        rest_bars=2,
    )
    return [kit, bass, piano, tune]


def dembow(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Reggaeton dembow: kick on every beat, snare on the 3-3-2 of each half bar, synth bass and lead."""
    groove = {"kick": "X...X...X...X...", "snare": "...x..x....x..x.", "hat": "x.x.x.x.x.x.x.x."}
    return [
        _kit(rng, bars, groove, velocity=_vel(rng, 95, 115), fill_every=8),
        _bass_line(
            rng, bars, harmony, "X..x..x.X..x..x.", program=SYNTH_BASS, steps_per_beat=4, fifths=False
        ),
        _pad(rng, bars, harmony, program=PAD_POLY, channel=2),
        melody(
            rng,
            bars,
            harmony,
            program=_choice(rng, [SQUARE_LEAD, MARIMBA, NYLON]),
            channel=3,
            steps_per_beat=4,
            rhythms=["x..x..x.x..x..x.", "x.x..x..x......."],
            rest_bars=2,
            velocity=80,
        ),
    ]


# ---------------------------------------------------------------------------------------------- orchestral


def _swell(part: Part, bars: Bars, rng: np.random.Generator, *, phrase_bars: int = 4) -> None:
    """Expression (CC 11) swelling through each phrase and easing at its end: dynamics without new attacks."""
    for phrase in range(0, bars.count, phrase_bars):
        low, high = _vel(rng, 55, 80), _vel(rng, 100, 127)
        span = phrase_bars * bars.bar_ticks
        for k in range(9):
            shape = np.sin(np.pi * k / 8) if rng.random() < 0.5 else k / 8
            part.expression.append((bars.bar(phrase) + k * span // 9, int(low + (high - low) * shape)))


def march(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Military march: timpani on 1 and 3, snare-drum rudiments, brass chords on the beats, strings tune."""
    perc = drum_part("percussion", volume=_vel(rng, 85, 110))
    play_pattern(perc, bars, "X.g.x.gg", pitch=Kit["snare"], steps_per_beat=2, velocity=80, rng=rng)
    play_pattern(
        perc,
        bars,
        "x...x...",
        pitch=Kit["crash"],
        steps_per_beat=2,
        velocity=55,
        rng=rng,
        bar_indices=range(0, bars.count, 4),
    )
    timpani = Part("timpani", TIMPANI, 4, volume=_vel(rng, 95, 120))
    for bar in range(bars.count):
        timpani.add(bars.bar(bar), bars.beat, harmony.root(bar, octave=2), 110)
        timpani.add(bars.bar(bar) + 2 * bars.beat, bars.beat, harmony.root(bar, octave=2) + 7, 95)
    brass = _chords(
        rng,
        bars,
        harmony,
        "x.x.x.x.",
        program=_choice(rng, [BRASS, TROMBONE, HORN]),
        channel=2,
        steps_per_beat=2,
        size=3,
        octave=4,
        length=200,
        name="brass",
    )
    _swell(brass, bars, rng)
    tune = melody(
        rng,
        bars,
        harmony,
        program=_choice(rng, [STRINGS, TRUMPET, FLUTE]),
        channel=3,
        steps_per_beat=4,
        rhythms=["x..xx.x.x...x...", "x.x.x.x.x.......", "x...x..xx...x..."],
    )
    bass = _bass_line(
        rng, bars, harmony, "x...x...", program=_choice(rng, [CONTRABASS, TROMBONE]), steps_per_beat=2
    )
    return [perc, timpani, brass, tune, bass]


def string_ostinato(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Film-score ostinato: strings in driving eighths, horns sustaining, timpani on downbeats, no kit."""
    strings = Part("strings", STRINGS, 2, volume=_vel(rng, 85, 110))
    for bar in range(bars.count):
        chord = harmony.chord(bar, octave=3, size=3)
        figure = [
            chord[0],
            chord[0] + 12,
            chord[1],
            chord[0] + 12,
            chord[2],
            chord[0] + 12,
            chord[1],
            chord[2],
        ]
        for k, pitch in enumerate(figure[: 2 * bars.beats_per_bar]):
            strings.add(
                bars.bar(bar) + k * bars.beat // 2,
                bars.beat // 2 - 20,
                pitch,
                (100 if k % 2 == 0 else 78) + rng.normal(0, 5),
            )
    _swell(strings, bars, rng)
    horns = _pad(rng, bars, harmony, program=_choice(rng, [HORN, BRASS]), channel=4, velocity=70, size=3)
    _swell(horns, bars, rng, phrase_bars=8)
    timpani = Part("timpani", TIMPANI, 5, volume=_vel(rng, 90, 115))
    for bar in range(bars.count):
        timpani.add(bars.bar(bar), bars.beat, harmony.root(bar, octave=2), 105)
        if bar % 2:
            timpani.add(
                bars.bar(bar) + (bars.beats_per_bar - 1) * bars.beat,
                bars.beat // 2,
                harmony.root(bar, octave=2),
                80,
            )
    cellos = _bass_line(rng, bars, harmony, "x.x.x.x.", program=CELLO, steps_per_beat=2, octave=2)
    tune = melody(
        rng,
        bars,
        harmony,
        program=_choice(rng, [TRUMPET, HORN, OBOE]),
        channel=3,
        steps_per_beat=2,
        rhythms=["x...x.x.", "x.......", "x..xx..."],
        rest_bars=4,
    )
    return [strings, horns, timpani, cellos, tune]


def baroque(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Baroque concerto: walking continuo in eighths, harpsichord on the beats, running violins."""
    continuo = _bass_line(
        rng, bars, harmony, "xoxoxoxo", program=_choice(rng, [CELLO, CONTRABASS]), steps_per_beat=2, octave=2
    )
    harpsichord = _chords(
        rng,
        bars,
        harmony,
        "x.x.x.x.",
        program=HARPSICHORD,
        channel=2,
        steps_per_beat=2,
        size=3,
        octave=4,
        length=150,
    )
    violins = Part("violins", _choice(rng, [VIOLIN, STRINGS]), 3, volume=_vel(rng, 85, 110))
    for bar in range(bars.count):
        chord = harmony.chord(bar, octave=5, size=3)
        for k in range(4 * bars.beats_per_bar):
            pitch = chord[k % 3] + (12 if (k // 3) % 2 else 0) if bar % 2 == 0 else harmony.scale(7 - k % 8)
            violins.add(
                bars.bar(bar) + k * bars.beat // 4,
                bars.beat // 4 - 10,
                pitch,
                (92 if k % 4 == 0 else 72) + rng.normal(0, 5),
            )
    _swell(violins, bars, rng)
    return [continuo, harpsichord, violins]


def pizzicato_serenade(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Light orchestral: pizzicato bass and after-beats, woodwind tune, a triangle on downbeats."""
    pizz = Part("pizzicato", PIZZICATO, 2, volume=_vel(rng, 95, 120))
    for bar in range(bars.count):
        pizz.add(bars.bar(bar), bars.beat, harmony.root(bar, octave=2), 105)
        pizz.add(bars.bar(bar) + 2 * bars.beat, bars.beat, harmony.root(bar, octave=2) + 7, 95)
        for beat in (1, 3):
            for pitch in harmony.chord(bar, octave=4):
                pizz.add(bars.bar(bar) + beat * bars.beat, bars.beat // 2, pitch, 80 + rng.normal(0, 5))
    tune = melody(
        rng,
        bars,
        harmony,
        program=_choice(rng, [CLARINET, FLUTE, OBOE]),
        channel=3,
        steps_per_beat=4,
        rhythms=["x.x.x.x.x...x...", "x..xx.x.x.......", "x.xxx.x.x.x.x..."],
    )
    _swell(tune, bars, rng)
    bell = drum_part("triangle", volume=_vel(rng, 60, 90))
    play_pattern(bell, bars, "x.......", pitch=Kit["triangle"], steps_per_beat=2, velocity=70, rng=rng)
    return [pizz, tune, bell, _pad(rng, bars, harmony, program=SLOW_STRINGS, channel=4, velocity=50, size=3)]


def fanfare(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Brass fanfare: trumpet triplet calls, trombone chords on 1 and 3, timpani rolls into downbeats."""
    calls = melody(
        rng,
        bars,
        harmony,
        program=TRUMPET,
        channel=3,
        steps_per_beat=4,
        rhythms=["x.xxx...x...x...", "x...x.xxx.......", "x..xx..xx...x..."],
        octave=5,
        velocity=100,
    )
    trombones = _chords(
        rng,
        bars,
        harmony,
        _choice(rng, ["x.......x.......", "x...x...x...x..."]),
        program=TROMBONE,
        channel=2,
        steps_per_beat=4,
        size=3,
        octave=3,
        length=420,
    )
    _swell(trombones, bars, rng)
    timpani = Part("timpani", TIMPANI, 4, volume=_vel(rng, 95, 120))
    for bar in range(bars.count):
        timpani.add(bars.bar(bar), bars.beat, harmony.root(bar, octave=2), 115)
        if bar % 4 == 3:
            for k in range(8):
                timpani.add(
                    bars.bar(bar) + 2 * bars.beat + k * bars.beat // 4,
                    bars.beat // 4,
                    harmony.root(bar, octave=2),
                    60 + 6 * k,
                )
    strings = _pad(rng, bars, harmony, program=STRINGS, channel=5, velocity=65)
    _swell(strings, bars, rng, phrase_bars=8)
    perc = drum_part("cymbals", volume=_vel(rng, 70, 100))
    play_pattern(
        perc,
        bars,
        "x.......",
        pitch=Kit["crash"],
        steps_per_beat=2,
        velocity=70,
        rng=rng,
        bar_indices=range(0, bars.count, 2),
    )
    return [calls, trombones, timpani, strings, perc]


# ---------------------------------------------------------------------------------------------- piano


def _piano(rng: np.random.Generator) -> Part:
    return Part("piano", _choice(rng, [PIANO, PIANO, BRIGHT_PIANO]), 0, volume=_vel(rng, 95, 120))


def alberti(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Classical sonatina: Alberti-bass eighths (low-high-middle-high) under a singing right hand."""
    piano = _piano(rng)
    for bar in range(bars.count):
        low, mid, high = harmony.chord(bar, octave=3)
        for k in range(2 * bars.beats_per_bar):
            piano.add(
                bars.bar(bar) + k * bars.beat // 2,
                bars.beat // 2 - 10,
                (low, high, mid, high)[k % 4],
                (70 if k % 2 == 0 else 55) + rng.normal(0, 4),
            )
    tune = melody(
        rng,
        bars,
        harmony,
        program=piano.program,
        channel=0,
        steps_per_beat=4,
        octave=5,
        rhythms=["x...x...x.x.x...", "x.x.x.x.x.......", "x..xx...x...x..."],
        velocity=85,
    )
    piano.notes += tune.notes
    return [piano]


def arpeggio_ballad(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Pop ballad piano: bass octave on 1, sixteenth arpeggios rising and falling, a tune with held notes."""
    piano = _piano(rng)
    for bar in range(bars.count):
        root = harmony.root(bar, octave=2)
        piano.add(bars.bar(bar), bars.bar_ticks - 40, root, 90)
        piano.add(bars.bar(bar), bars.bar_ticks - 40, root + 12, 75)
        chord = harmony.chord(bar, octave=4, size=3)
        rising = [
            chord[0],
            chord[1],
            chord[2],
            chord[0] + 12,
            chord[1] + 12,
            chord[0] + 12,
            chord[2],
            chord[1],
        ]
        for k in range(4 * bars.beats_per_bar):
            piano.add(
                bars.bar(bar) + k * bars.beat // 4,
                bars.beat // 2,
                rising[k % 8],
                (62 if k % 4 == 0 else 48) + rng.normal(0, 4),
            )
    tune = melody(
        rng,
        bars,
        harmony,
        program=piano.program,
        channel=0,
        steps_per_beat=2,
        octave=5,
        rhythms=["x...x.x.", "x.......", "x..x..x."],
        velocity=90,
        rest_bars=2,
    )
    piano.notes += tune.notes
    return [piano]


def stride(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Stride / ragtime: low bass on 1 and 3, mid chords on 2 and 4, syncopated sixteenth right hand."""
    piano = _piano(rng)
    for bar in range(bars.count):
        root = harmony.root(bar, octave=2)
        for beat in range(bars.beats_per_bar):
            if beat % 2 == 0:
                piano.add(
                    bars.bar(bar) + beat * bars.beat, bars.beat - 30, root + (0 if beat == 0 else 7), 95
                )
            else:
                for pitch in harmony.chord(bar, octave=3, size=3):
                    piano.add(bars.bar(bar) + beat * bars.beat, bars.beat // 2, pitch + 12, 72)
    tune = melody(
        rng,
        bars,
        harmony,
        program=piano.program,
        channel=0,
        steps_per_beat=4,
        octave=5,
        rhythms=["x.xx..x.x.x..x..", "..x.x..xx..x.x..", "x..x..x...x.x..."],
        velocity=88,
    )
    piano.notes += tune.notes
    return [piano]


def syncopated_pop(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Pop piano with pushed chords (1, and-of-2, 4) over a left hand on 1 and the and-of-3."""
    piano = _piano(rng)
    for bar in range(bars.count):
        root = harmony.root(bar, octave=2)
        piano.add(bars.bar(bar), bars.beat * 5 // 2, root, 90)
        piano.add(bars.bar(bar) + bars.beat * 5 // 2, bars.beat * 3 // 2, root + 12, 78)
    chords = _chords(
        rng,
        bars,
        harmony,
        _choice(rng, ["x..x..x...x.x...", "x.....x...x.x..."]),
        program=piano.program,
        channel=0,
        steps_per_beat=4,
        size=3,
        octave=4,
        length=300,
    )
    tune = melody(
        rng,
        bars,
        harmony,
        program=piano.program,
        channel=0,
        steps_per_beat=4,
        octave=5,
        rhythms=["..x.x..x..x.....", "x..x..x.x.......", "...x..x...x.x..."],
        velocity=85,
        rest_bars=2,
    )
    piano.notes += chords.notes + tune.notes
    return [piano]


def minimalist(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Minimalist piano: repeated eighth-note figures of the chord in both hands, accents shifting by bar."""
    piano = _piano(rng)
    for bar in range(bars.count):
        chord = harmony.chord(bar, octave=3, size=3) + harmony.chord(bar, octave=4, size=3)
        accent = bar % 3
        for k in range(2 * bars.beats_per_bar):
            piano.add(
                bars.bar(bar) + k * bars.beat // 2,
                bars.beat // 2 - 10,
                chord[k % len(chord)],
                (85 if k % 3 == accent else 58) + rng.normal(0, 4),
            )
        piano.add(bars.bar(bar), bars.bar_ticks - 40, harmony.root(bar, octave=2), 80)
    return [piano]


def boogie(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Boogie-woogie left hand (rolling root-fifth-sixth eighths), right-hand chord stabs and riffs."""
    piano = _piano(rng)
    for bar in range(bars.count):
        root = harmony.root(bar, octave=2)
        for k, interval in enumerate((0, 7, 9, 7, 10, 7, 9, 7)[: 2 * bars.beats_per_bar]):
            piano.add(
                bars.bar(bar) + k * bars.beat // 2,
                bars.beat // 2 - 10,
                root + interval,
                (90 if k % 2 == 0 else 70) + rng.normal(0, 4),
            )
    stabs = _chords(
        rng,
        bars,
        harmony,
        _choice(rng, ["..x...x...x...x.", "x..x..x.....x..."]),
        program=piano.program,
        channel=0,
        steps_per_beat=4,
        size=3,
        octave=5,
        length=120,
    )
    piano.notes += stabs.notes
    return [piano]


# ---------------------------------------------------------------------------------------------- swing

SWING_TUNES = ["x.xx.xx.x...", "x..x.xx.xx..", "..xx.xx..x..", "x.xx.x..xx.x"]
"""Tunes on the triplet grid (three steps a beat): ``x.x`` is a swung pair of eighths."""


def _walking_bass(
    rng: np.random.Generator, bars: Bars, harmony: Harmony, *, program: int = ACOUSTIC_BASS
) -> Part:
    """Walking bass: a quarter note on every beat, root on 1, chord tones, an approach to the next root."""
    bass = Part("bass", program, 1, volume=_vel(rng, 95, 118))
    for bar in range(bars.count):
        root, target = harmony.root(bar, octave=2), harmony.root(bar + 1, octave=2)
        steps = [root, root + _choice(rng, [3, 4]), root + 7, target + _choice(rng, [-1, 1, 2])]
        for beat in range(bars.beats_per_bar):
            bass.add(
                bars.bar(bar) + beat * bars.beat,
                bars.beat - 30,
                steps[beat % 4],
                (100 if beat == 0 else 88) + rng.normal(0, 5),
            )
    return bass


def _swing_kit(rng: np.random.Generator, bars: Bars, *, brushes: bool = False) -> Part:
    """Jazz time: ride 'ding ding-a ding ding-a' on the triplet grid, hi-hat foot on 2 and 4, light kick."""
    groove = {"ride": "x..x.xx..x.x", "pedal": "...x.....x..", "kick": "g.....g....."}
    if brushes:
        groove = {"snare": "x.gx.gx.gx.g", "pedal": "...x.....x..", "kick": "g..........."}
    comp = _choice(rng, ["....g.....g.", "..g.....g...", "......x....."])
    groove["snare" if not brushes else "rim"] = comp
    return _kit(
        rng, bars, groove, steps_per_beat=3, velocity=_vel(rng, 80, 100), fill_every=8, crash_every=16
    )


def medium_swing(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Medium swing combo: ride and hi-hat, walking bass, Charleston piano comping, a swung sax tune."""
    comp = _chords(
        rng,
        bars,
        harmony,
        _choice(rng, ["x....x......", "..x.....x...", "x.....x....x"]),
        program=_choice(rng, [PIANO, JAZZ_GTR, EPIANO]),
        channel=2,
        steps_per_beat=3,
        size=4,
        octave=4,
        length=200,
        name="comping",
    )
    tune = melody(
        rng,
        bars,
        harmony,
        program=_choice(rng, [TENOR_SAX, ALTO_SAX, TRUMPET]),
        channel=3,
        steps_per_beat=3,
        rhythms=SWING_TUNES,
        rest_bars=2,
    )
    return [_swing_kit(rng, bars), _walking_bass(rng, bars, harmony), comp, tune]


def big_band(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Big band shout: brass section hits on swung off-beats, sax section riff, walking bass, drums."""
    brass = _chords(
        rng,
        bars,
        harmony,
        _choice(rng, ["..x..x....x.", "x....x..x...", "..x.....x..x"]),
        program=BRASS,
        channel=2,
        steps_per_beat=3,
        size=4,
        octave=4,
        length=150,
        name="brass",
    )
    saxes = melody(
        rng,
        bars,
        harmony,
        program=ALTO_SAX,
        channel=3,
        steps_per_beat=3,
        rhythms=SWING_TUNES,
        octave=4,
        name="saxes",
    )
    return [
        _swing_kit(rng, bars),
        _walking_bass(rng, bars, harmony),
        brass,
        saxes,
        _chords(
            rng,
            bars,
            harmony,
            "x..x..x..x..",
            program=JAZZ_GTR,
            channel=4,
            steps_per_beat=3,
            size=3,
            octave=3,
            length=150,
            name="rhythm guitar",
            velocity=55,
        ),
    ]


def ballad_swing(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Slow swing ballad with brushes: swished snare on the triplet grid, walking bass, soft vibes tune."""
    comp = _chords(
        rng,
        bars,
        harmony,
        "x.....x.....",
        program=_choice(rng, [PIANO, EPIANO]),
        channel=2,
        steps_per_beat=3,
        size=4,
        octave=4,
        length=500,
        velocity=60,
    )
    tune = melody(
        rng,
        bars,
        harmony,
        program=_choice(rng, [VIBES, TENOR_SAX, CLARINET]),
        channel=3,
        steps_per_beat=3,
        rhythms=["x.xx.....x..", "x.....x.x...", "x..x.x......"],
        velocity=78,
    )
    return [_swing_kit(rng, bars, brushes=True), _walking_bass(rng, bars, harmony), comp, tune]


def shuffle_blues(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Shuffle blues: shuffled hats and guitar boogie (root-fifth / root-sixth pairs), backbeat snare."""
    groove = {"kick": "X.....x.....", "snare": "...X.....X..", "hat": "x.xx.xx.xx.x"}
    guitar = Part("guitar", _choice(rng, [OVERDRIVE, CLEAN_GTR]), 2, volume=_vel(rng, 85, 110))
    for bar in range(bars.count):
        root = harmony.root(bar, octave=3)
        for beat in range(bars.beats_per_bar):
            sixth = 9 if beat % 2 else 7
            for offset, length, vel in (
                (0, bars.beat * 2 // 3, 90),
                (bars.beat * 2 // 3, bars.beat // 3, 70),
            ):
                guitar.add(bars.bar(bar) + beat * bars.beat + offset, length - 10, root, vel)
                guitar.add(bars.bar(bar) + beat * bars.beat + offset, length - 10, root + sixth, vel)
    tune = melody(
        rng,
        bars,
        harmony,
        program=_choice(rng, [TENOR_SAX, 22, OVERDRIVE]),
        channel=3,
        steps_per_beat=3,
        rhythms=SWING_TUNES,
        rest_bars=4,
    )
    bass = _bass_line(rng, bars, harmony, "x.ox.ox.ox.o", program=FINGER_BASS, steps_per_beat=3)
    return [_kit(rng, bars, groove, steps_per_beat=3, velocity=_vel(rng, 90, 110)), guitar, tune, bass]


def gypsy_jazz(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Gypsy jazz: la pompe guitar (bass note on 1 and 3, chord chops on 2 and 4), violin on swung eighths."""
    pompe = Part("pompe", JAZZ_GTR, 2, volume=_vel(rng, 95, 118))
    for bar in range(bars.count):
        for beat in range(bars.beats_per_bar):
            for pitch in harmony.chord(bar, octave=3, size=3):
                pompe.add(bars.bar(bar) + beat * bars.beat, 90, pitch, 95 if beat % 2 else 72)
    tune = melody(rng, bars, harmony, program=VIOLIN, channel=3, steps_per_beat=3, rhythms=SWING_TUNES)
    return [pompe, _walking_bass(rng, bars, harmony), tune]


# ---------------------------------------------------------------------------------------------- 3/4 and 6/8


def waltz(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Waltz: oom-pah-pah (bass on 1, chords on 2 and 3) under a strings or accordion tune."""
    accomp = Part("oom-pah", _choice(rng, [PIANO, PIZZICATO, ACCORDION]), 2, volume=_vel(rng, 90, 115))
    for bar in range(bars.count):
        accomp.add(bars.bar(bar), bars.beat - 30, harmony.root(bar, octave=2), 100)
        for beat in (1, 2):
            for pitch in harmony.chord(bar, octave=4):
                accomp.add(bars.bar(bar) + beat * bars.beat, bars.beat // 2, pitch, 68 + rng.normal(0, 4))
    tune = melody(
        rng,
        bars,
        harmony,
        program=_choice(rng, [STRINGS, VIOLIN, FLUTE, ACCORDION]),
        channel=3,
        steps_per_beat=2,
        rhythms=["x.x.x.", "x...x.", "x.....", "x.xxx."],
    )
    _swell(tune, bars, rng)
    return [accomp, tune]


def jazz_waltz(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Jazz waltz: swung ride in three, bass on 1 (and 3), piano comping on the and-of-1."""
    groove = {"ride": "x..x.xx..", "pedal": "...x..x..", "kick": "x........"}
    kit = _kit(rng, bars, groove, steps_per_beat=3, velocity=_vel(rng, 80, 100), fill_every=8, crash_every=16)
    bass = _bass_line(rng, bars, harmony, "x.....x..", program=ACOUSTIC_BASS, steps_per_beat=3)
    comp = _chords(
        rng,
        bars,
        harmony,
        "..x.....x",
        program=_choice(rng, [PIANO, VIBES]),
        channel=2,
        steps_per_beat=3,
        size=4,
        length=200,
    )
    tune = melody(
        rng,
        bars,
        harmony,
        program=_choice(rng, [ALTO_SAX, FLUTE]),
        channel=3,
        steps_per_beat=3,
        rhythms=["x.xx.x...", "x.....x.x", "x..x.xx.."],
    )
    return [kit, bass, comp, tune]


def mazurka(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Mazurka-like 3/4 on solo piano: dotted figure on 1, accent on beat 2 or 3, bass on 1."""
    piano = _piano(rng)
    strong = int(rng.integers(1, 3))
    for bar in range(bars.count):
        piano.add(bars.bar(bar), bars.beat - 30, harmony.root(bar, octave=2), 85)
        for beat in (1, 2):
            for pitch in harmony.chord(bar, octave=3):
                piano.add(
                    bars.bar(bar) + beat * bars.beat, bars.beat // 2, pitch + 12, 88 if beat == strong else 62
                )
    tune = melody(
        rng,
        bars,
        harmony,
        program=piano.program,
        channel=0,
        steps_per_beat=4,
        octave=5,
        rhythms=["x..xx...x...", "x.xxx...x.x.", "x...x.x.x..."],
        velocity=86,
    )
    piano.notes += tune.notes
    return [piano]


def jig(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """6/8 jig: fiddle or whistle in running eighths, bodhran-like drum, guitar chords on the two beats."""
    tune = Part("fiddle", _choice(rng, [VIOLIN, WHISTLE, FLUTE, ACCORDION]), 3, volume=_vel(rng, 95, 120))
    step = 4
    for bar in range(bars.count):
        for k in range(6):
            step = int(np.clip(step + rng.choice([-2, -1, 1, 1, 2, -1]), 0, 11))
            tune.add(
                bars.bar(bar) + k * bars.beat // 3,
                bars.beat // 3 - 10,
                harmony.scale(step, octave=4),
                (100 if k % 3 == 0 else 74) + rng.normal(0, 5),
            )
    drum = drum_part("bodhran", volume=_vel(rng, 80, 105))
    play_pattern(
        drum,
        bars,
        _choice(rng, ["Xgxxgx", "Xgx Xgx", "X.xX.x"]),
        pitch=Kit["floor"],
        steps_per_beat=3,
        velocity=90,
        rng=rng,
    )
    guitar = _chords(
        rng,
        bars,
        harmony,
        "x..x..",
        program=_choice(rng, [STEEL, NYLON]),
        channel=2,
        steps_per_beat=3,
        size=3,
        length=300,
        name="guitar",
    )
    bass = _bass_line(rng, bars, harmony, "x..o..", program=ACOUSTIC_BASS, steps_per_beat=3)
    return [tune, drum, guitar, bass]


def ballad_68(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Slow 6/8 ballad: broken-chord eighths in threes, kick on 1, snare on 2 (the fourth eighth)."""
    groove = {"kick": "X.....", "snare": "...X..", "hat": "xgxxgx"}
    kit = _kit(rng, bars, groove, steps_per_beat=3, velocity=_vel(rng, 75, 100), fill_every=8, crash_every=8)
    keys = Part("keys", _choice(rng, [PIANO, EPIANO, NYLON]), 2, volume=_vel(rng, 85, 110))
    for bar in range(bars.count):
        chord = harmony.chord(bar, octave=3)
        for k, pitch in enumerate([chord[0], chord[2], chord[0] + 12, chord[1] + 12, chord[2], chord[1]]):
            keys.add(
                bars.bar(bar) + k * bars.beat // 3, bars.beat // 3 * 2, pitch, (80 if k % 3 == 0 else 60)
            )
    tune = melody(
        rng,
        bars,
        harmony,
        program=_choice(rng, [STRINGS, ALTO_SAX, FLUTE]),
        channel=3,
        steps_per_beat=3,
        rhythms=["x..x.x", "x.....", "x.xx.."],
        rest_bars=2,
    )
    bass = _bass_line(rng, bars, harmony, "x.....", program=FINGER_BASS, steps_per_beat=3)
    return [kit, keys, tune, bass]


def tarantella(rng: np.random.Generator, bars: Bars, harmony: Harmony) -> list[Part]:
    """Fast 6/8 tarantella: tambourine on every eighth, accordion chords on the beats, mandolin-like runs."""
    perc = drum_part("tambourine", volume=_vel(rng, 85, 110))
    play_pattern(perc, bars, "Xgx Xgx", pitch=Kit["tamb"], steps_per_beat=3, velocity=85, rng=rng)
    accordion = _chords(
        rng, bars, harmony, "x..x..", program=ACCORDION, channel=2, steps_per_beat=3, size=3, length=200
    )
    tune = melody(
        rng,
        bars,
        harmony,
        program=_choice(rng, [STEEL, VIOLIN, CLARINET]),
        channel=3,
        steps_per_beat=3,
        rhythms=["xxxxxx", "x.xx.x", "xxxx.."],
        velocity=88,
    )
    bass = _bass_line(rng, bars, harmony, "x..o..", program=ACOUSTIC_BASS, steps_per_beat=3)
    return [perc, accordion, tune, bass]


STYLES: dict[str, Style] = {
    "rock": rock, "funk": funk, "house": house, "hiphop": hiphop, "breakbeat": breakbeat, "punk": punk,
    "son_montuno": son_montuno, "bossa": bossa, "samba": samba, "cha_cha": cha_cha, "dembow": dembow,
    "march": march, "string_ostinato": string_ostinato, "baroque": baroque,
    "pizzicato_serenade": pizzicato_serenade, "fanfare": fanfare,
    "alberti": alberti, "arpeggio_ballad": arpeggio_ballad, "stride": stride,
    "syncopated_pop": syncopated_pop,
    "minimalist": minimalist, "boogie": boogie,
    "medium_swing": medium_swing, "big_band": big_band, "ballad_swing": ballad_swing,
    "shuffle_blues": shuffle_blues, "gypsy_jazz": gypsy_jazz,
    "waltz": waltz, "jazz_waltz": jazz_waltz, "mazurka": mazurka, "jig": jig, "ballad_68": ballad_68,
    "tarantella": tarantella,
}  # fmt: skip
"""Every arrangement by name; a song names its style in the catalogue."""
