"""A composed song as MIDI: notes on a tick grid, a tempo map, and the beat times it implies.

The truth of every composed song is its tempo map: a beat is a tick on the
song's beat grid, and its time in seconds is the integral of the MIDI tempo
(microseconds per quarter note) up to that tick, exactly as a MIDI player
(FluidSynth here) schedules the note-ons. :func:`tick_seconds` does that
integral; :func:`write_midi` writes the same tempo events the integral used,
so the rendered audio and the annotation cannot disagree by more than the
player's scheduling (FluidSynth: one 64-sample block, 1.5 ms at 44.1 kHz).

Ticks: :data:`PPQ` per quarter note. A beat is a quarter note in 4/4 and 3/4
and a dotted quarter (``1.5 * PPQ``) in 6/8, where the beat a listener taps
is the dotted quarter; a song's tempo in BPM is always in its beat unit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import mido
import numpy as np

__all__ = [
    "PPQ",
    "DRUM_CHANNEL",
    "Note",
    "Part",
    "Score",
    "TempoEvent",
    "tick_seconds",
    "write_midi",
]

PPQ = 480
"""Ticks per quarter note."""

DRUM_CHANNEL = 9
"""General MIDI's percussion channel (channel 10, counted from 1)."""


@dataclass(frozen=True)
class TempoEvent:
    """From ``tick`` on, the song plays at ``quarter_bpm`` quarter notes per minute."""

    tick: int
    quarter_bpm: float

    @property
    def us_per_quarter(self) -> int:
        """The MIDI ``set_tempo`` value: microseconds per quarter note, an integer as MIDI stores it."""
        return round(60_000_000 / self.quarter_bpm)


@dataclass(frozen=True)
class Note:
    """One note: start tick, length in ticks, MIDI pitch (a GM drum key on the drum channel), velocity."""

    tick: int
    length: int
    pitch: int
    velocity: int


@dataclass
class Part:
    """One instrument: a GM program on a channel, its notes, mix settings and expression (CC 11) curve."""

    name: str
    program: int
    channel: int
    volume: int = 100
    pan: int = 64
    notes: list[Note] = field(default_factory=list)
    expression: list[tuple[int, int]] = field(default_factory=list)
    """(tick, CC 11 value 0-127): swells and fades without new note-ons."""

    def add(self, tick: int, length: int, pitch: int, velocity: int) -> None:
        """Add a note, clamping velocity to 1-127 and pitch to 0-127 and the length to at least one tick."""
        self.notes.append(
            Note(int(tick), max(1, int(length)), int(np.clip(pitch, 0, 127)), int(np.clip(velocity, 1, 127)))
        )


@dataclass
class Score:
    """A whole composed song: its parts, tempo map, meter and the beat and bar ticks that are its truth.

    ``beat_ticks`` and ``downbeat_ticks`` are where the beat is: a free-time
    intro has notes but no beat ticks.
    """

    parts: list[Part]
    tempo: list[TempoEvent]
    beats_per_bar: int
    beat_ticks_per_beat: int
    beat_ticks: list[int]
    downbeat_ticks: list[int]
    end_tick: int
    time_signature: tuple[int, int] = (4, 4)

    def beat_times_s(self) -> np.ndarray:
        """Seconds of every beat tick under the tempo map."""
        return tick_seconds(np.asarray(self.beat_ticks), self.tempo)

    def downbeat_times_s(self) -> np.ndarray:
        """Seconds of every bar start tick under the tempo map."""
        return tick_seconds(np.asarray(self.downbeat_ticks), self.tempo)


def tick_seconds(ticks: np.ndarray, tempo: list[TempoEvent], *, ppq: int = PPQ) -> np.ndarray:
    """Seconds at ``ticks`` under a tempo map, as a MIDI player computes them.

    Parameters
    ----------
    ticks : np.ndarray [shape=(n,)], ticks >= 0, any order
    tempo : tempo events, the first at tick 0, ticks increasing; each holds until the next.
        The integer ``us_per_quarter`` is used, as written to the file.
    ppq : ticks per quarter note

    Returns
    -------
    seconds : np.ndarray [shape=(n,)]
    """
    if not tempo or tempo[0].tick != 0:
        raise ValueError("the tempo map must start with an event at tick 0")
    starts = np.array([event.tick for event in tempo], dtype=np.int64)
    if np.any(np.diff(starts) < 0):
        raise ValueError("tempo events must be in tick order")
    s_per_tick = np.array([event.us_per_quarter for event in tempo], dtype=np.float64) / 1e6 / ppq
    # Seconds at the start of each tempo segment.
    offsets = np.concatenate([[0.0], np.cumsum(np.diff(starts) * s_per_tick[:-1])])
    values = np.asarray(ticks, dtype=np.int64)
    segment = np.searchsorted(starts, values, side="right") - 1
    return offsets[segment] + (values - starts[segment]) * s_per_tick[segment]


def write_midi(score: Score, path: Path) -> None:
    """Write ``score`` as a type-1 MIDI file: a conductor track (tempo, meter), then one track per part."""
    song = mido.MidiFile(type=1, ticks_per_beat=PPQ)
    conductor = [
        (
            0,
            mido.MetaMessage(
                "time_signature", numerator=score.time_signature[0], denominator=score.time_signature[1]
            ),
        )
    ]
    conductor += [(e.tick, mido.MetaMessage("set_tempo", tempo=e.us_per_quarter)) for e in score.tempo]
    conductor.append((score.end_tick, mido.MetaMessage("end_of_track")))
    song.tracks.append(_track(conductor))
    for part in score.parts:
        events: list[tuple[int, mido.Message | mido.MetaMessage]] = [
            (0, mido.MetaMessage("track_name", name=part.name)),
            (0, mido.Message("control_change", channel=part.channel, control=7, value=part.volume)),
            (0, mido.Message("control_change", channel=part.channel, control=10, value=part.pan)),
        ]
        if part.channel != DRUM_CHANNEL:
            events.append((0, mido.Message("program_change", channel=part.channel, program=part.program)))
        events += [
            (tick, mido.Message("control_change", channel=part.channel, control=11, value=int(value)))
            for tick, value in part.expression
        ]
        for note in part.notes:
            events.append(
                (
                    note.tick,
                    mido.Message("note_on", channel=part.channel, note=note.pitch, velocity=note.velocity),
                )
            )
            events.append(
                (
                    note.tick + note.length,
                    mido.Message("note_off", channel=part.channel, note=note.pitch, velocity=0),
                )
            )
        events.append((score.end_tick, mido.MetaMessage("end_of_track")))
        song.tracks.append(_track(events))
    song.save(str(path))


def _track(events: list[tuple[int, mido.Message | mido.MetaMessage]]) -> mido.MidiTrack:
    """A track from absolute-tick events; at one tick, note-offs go before note-ons."""

    def order(item: tuple[int, mido.Message | mido.MetaMessage]) -> tuple[int, int]:
        tick, message = item
        rank = 0 if message.is_meta else 1 if message.type in ("control_change", "program_change") else 2
        if message.type == "note_off":
            rank = 1
        if message.type == "end_of_track":
            rank = 3
        return tick, rank

    track = mido.MidiTrack()
    now = 0
    for tick, message in sorted(events, key=order):
        if message.type == "end_of_track" and tick < now:
            tick = now
        track.append(message.copy(time=tick - now))
        now = tick
    return track
