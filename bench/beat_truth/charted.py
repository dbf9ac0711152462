"""Recorded songs with a charted beat grid: the Frets on Fire song packs in Debian.

``fretsonfire-songs-muldjord`` (CC BY-SA 3.0, El Senator of Muldjord) and
``fretsonfire-songs-sectoid`` (MIT-style licence, Carlos Viola Iborra) ship
real recorded metal and rock songs, each with ``song.ogg`` (the band),
``guitar.ogg`` (the guitar stem) and ``notes.mid``, the game chart, whose
tempo map is the grid the game scrolls the notes on. Every chart here holds
one tempo from tick 0 (135-190 BPM), so the beats are ``tick_seconds`` of
every quarter note of the chart.

Verified before trusting (:func:`grid_offset_s`): the chart grid is laid over
a sharp spectral-flux envelope of the mix in 20-second windows and the shift
that puts the most onset on it is found in each. In every song the shift is
the same in all windows that lock to the beat (spread under 15 ms: the tempo
holds over the whole recording), and it is 0-3 ms for the Muldjord songs and
23-40 ms for the Sectoid ones (the audio slightly later than the chart, the
"delay" a player sets in the game). The truth is the chart grid moved by that
measured shift (a constant per song: the beats' spacing stays the chart's),
from the first beat where the music sounds to the last. Windows where the
off-beat carries the most onset show as shifts near half a beat and are left
out of the median: in three Sectoid songs the snare plays on the chart's
off-beats (a thrash beat: kick on the beat, snare on every "and"), the kick on
its beats.

Downbeats are not annotated for these songs: the charts' bar lines could not
be checked by ear, and the kick pattern does not settle which beat is one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mido
import numpy as np
import soundfile as sf
from scipy.signal import stft

from bench.beat_truth.midi import TempoEvent, tick_seconds

__all__ = ["CHART_ROOT", "ChartedSong", "active_span_s", "chart_beats_s", "charted_audio", "grid_offset_s"]

CHART_ROOT = Path("/usr/share/games/fretsonfire/data/songs")

VERIFY_WINDOW_S = 20.0
ACTIVE_DB = -35.0
"""Audio within this many dB of the song's loudest 0.1 s counts as music (for trimming the grid's ends)."""

CLICK_LAG_S = 0.006
"""How early the flux envelope of :func:`grid_offset_s` peaks before an onset (FluidSynth click)."""


@dataclass(frozen=True)
class ChartedSong:
    """One song of a Frets on Fire pack: its folder under :data:`CHART_ROOT` and its licence."""

    folder: str
    package: str
    licence: str


def charted_audio(song: ChartedSong) -> tuple[np.ndarray, int]:
    """The full mix (band plus guitar stem), stereo float32 [n, 2], and its sample rate."""
    folder = CHART_ROOT / song.folder
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is missing: apt-get install {song.package}")
    parts = []
    sr = 0
    for name in ("song.ogg", "guitar.ogg"):
        audio, sr = sf.read(CHART_ROOT / song.folder / name, dtype="float32", always_2d=True)
        parts.append(audio if audio.shape[1] == 2 else np.repeat(audio[:, :1], 2, axis=1))
    n = min(p.shape[0] for p in parts)
    mix = parts[0][:n] + parts[1][:n]
    return mix / max(1e-9, float(np.abs(mix).max())) * 0.9, sr


def chart_beats_s(song: ChartedSong) -> tuple[np.ndarray, float]:
    """Every quarter note of the chart in seconds (from 0 to the chart's end) and its tempo in BPM."""
    chart = mido.MidiFile(str(CHART_ROOT / song.folder / "notes.mid"))
    tempo, end_tick = [], 0
    for track in chart.tracks:
        tick = 0
        for message in track:
            tick += message.time
            if message.type == "set_tempo" and not (tempo and tempo[-1].tick == tick):
                tempo.append(TempoEvent(tick, mido.tempo2bpm(message.tempo)))
        end_tick = max(end_tick, tick)
    tempo.sort(key=lambda e: e.tick)
    ticks = np.arange(0, end_tick + 1, chart.ticks_per_beat)
    return tick_seconds(ticks, tempo, ppq=chart.ticks_per_beat), float(tempo[0].quarter_bpm)


def grid_offset_s(mono: np.ndarray, sr: int, beats_s: np.ndarray) -> tuple[float, list[float]]:
    """The shift of the beat grid that lands it on the audio's onsets: (median, per-window shifts).

    Spectral flux (positive log-magnitude rise, 1024-sample frames, 64-sample
    hop) is sampled at the grid shifted by -P/2..P/2 in 2 ms steps, per 20 s
    window; each window's best shift is kept. The chart says where the beat is:
    windows whose best shift is over a quarter beat (where the off-beat carries
    the most onset) are left out of the median, which measures only the small
    latency between chart and audio. The envelope's own lag (a click rendered by FluidSynth
    peaks 6 ms before its onset measured on the waveform) is corrected.
    """
    hop = 64
    _, times, spectrum = stft(mono, fs=sr, nperseg=1024, noverlap=1024 - hop, boundary=None, padded=False)
    level = 20 * np.log10(np.abs(spectrum) + 1e-6)
    flux = np.maximum(0.0, np.diff(level, axis=1)).mean(axis=0)
    flux_t = times[1:]
    period = float(np.median(np.diff(beats_s)))
    shifts = np.arange(-period / 2, period / 2, 0.002)
    found = []
    for start in np.arange(0.0, flux_t[-1] - VERIFY_WINDOW_S, VERIFY_WINDOW_S):
        grid = beats_s[(beats_s >= start + period) & (beats_s < start + VERIFY_WINDOW_S)]
        if grid.size < 8:
            continue
        score = [np.interp(grid + s, flux_t, flux).mean() for s in shifts]
        found.append(float(shifts[int(np.argmax(score))]))
    kept = [s for s in found if abs(s) < period / 4]
    return (float(np.median(kept)) if kept else 0.0) + CLICK_LAG_S, found


def active_span_s(mono: np.ndarray, sr: int) -> tuple[float, float]:
    """First and last time the 0.1 s RMS is within :data:`ACTIVE_DB` of its loudest."""
    block = int(0.1 * sr)
    rms = np.sqrt(np.mean(mono[: mono.size // block * block].reshape(-1, block) ** 2, axis=1))
    loud = np.flatnonzero(20 * np.log10(rms + 1e-12) > 20 * np.log10(rms.max()) + ACTIVE_DB)
    return float(loud[0] * 0.1), float((loud[-1] + 1) * 0.1)
