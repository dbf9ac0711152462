"""The beat-truth set: which songs, in which category, and building them into the cache.

Make-up (56 songs; each counts in one category only):

==============  =====  ==========================================================================
category        songs  what
==============  =====  ==========================================================================
drum-led          6    rock, funk, house, boom-bap, drum and bass, punk (88-186 BPM)
latin             6    son montuno, salsa, bossa nova, samba, cha-cha-cha, dembow (94-182 BPM)
orchestral        6    march, string ostinato (fast and slow), baroque, pizzicato serenade, fanfare
piano             6    Alberti sonatina, arpeggio ballad, stride, syncopated pop, minimalist, boogie
swing             6    medium swing (two), big band, brushes ballad, shuffle blues, gypsy jazz; 2:1 feel
triple            6    3/4: Viennese waltz, jazz waltz, mazurka; 6/8: jig, ballad, tarantella
tempo-change      6    accelerando, ritardando, sudden jumps up and down, tempo steps, ramp then jump
free-intro        6    8-20 s of pad and flourishes with no pulse, then a groove (six styles)
charted-rock      8    recorded metal and rock, Frets on Fire packs in Debian (95-190 BPM)
==============  =====  ==========================================================================

The first 48 are composed here (:mod:`bench.beat_truth.compose`) and rendered
with FluidSynth; the last 8 are real recordings whose grid is their game
chart's (:mod:`bench.beat_truth.charted`). A song's ``seed`` also splits the
set: odd seeds are the **held-out** half (never looked at while tuning a
tracker), even seeds the tuning half; every category has half of each.

:func:`build` writes each song's audio (FLAC) and truth (JSON: beat and
downbeat times in seconds, meter, tempo range) into a cache folder, skipping
songs already there with the same recipe, and returns the manifest.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from bench.beat_truth.charted import ChartedSong, active_span_s, chart_beats_s, charted_audio, grid_offset_s
from bench.beat_truth.compose import Recipe, compose
from bench.beat_truth.midi import write_midi
from bench.beat_truth.render import RENDER_SR, master, render_midi

__all__ = ["CATEGORIES", "SONGS", "BUILD_VERSION", "Song", "build", "truth_of"]

BUILD_VERSION = 1
"""Bump to rebuild every cached song (a change in composing, rendering or mastering)."""

CATEGORIES = (
    "drum-led", "latin", "orchestral", "piano", "swing", "triple", "tempo-change", "free-intro",
    "charted-rock",
)  # fmt: skip

COMPOSED_LICENCE = "Apache-2.0 (composed by this repository's code; FluidR3 GM soundfont, MIT)"
MULDJORD = "CC BY-SA 3.0 (El Senator, Muldjord; Debian fretsonfire-songs-muldjord)"
SECTOID = "MIT-style (Carlos Viola Iborra, Sectoid; Debian fretsonfire-songs-sectoid)"


@dataclass(frozen=True)
class Song:
    """One song of the set: a composed recipe or a charted recording."""

    id: str
    category: str
    seed: int
    recipe: Recipe | None = None
    chart: ChartedSong | None = None

    @property
    def held_out(self) -> bool:
        return self.seed % 2 == 1

    @property
    def licence(self) -> str:
        return self.chart.licence if self.chart else COMPOSED_LICENCE

    @property
    def source(self) -> str:
        return f"charted: {self.chart.package} {self.chart.folder}" if self.chart else "composed"


def _composed(
    category: str, rows: list[tuple[str, float, float, str, str, float]], first_seed: int
) -> list[Song]:
    """Songs from (style, bpm, seconds, meter, tempo shape, intro seconds) rows, seeds counting up."""
    songs = []
    for k, (style, bpm, seconds, meter, tempo, intro) in enumerate(rows):
        seed = first_seed + k
        recipe = Recipe(style, seed, bpm, seconds, meter=meter, tempo=tempo, intro_s=intro)
        songs.append(Song(f"{category}-{k + 1:02d}-{style}", category, seed, recipe=recipe))
    return songs


SONGS: tuple[Song, ...] = tuple(
    _composed("drum-led", [
        ("rock", 124, 55, "4/4", "steady", 0), ("funk", 104, 55, "4/4", "steady", 0),
        ("house", 126, 50, "4/4", "steady", 0), ("hiphop", 88, 60, "4/4", "steady", 0),
        ("breakbeat", 174, 50, "4/4", "steady", 0), ("punk", 186, 45, "4/4", "steady", 0),
    ], 1)
    + _composed("latin", [
        ("son_montuno", 96, 55, "4/4", "steady", 0), ("son_montuno", 182, 45, "4/4", "steady", 0),
        ("bossa", 132, 55, "4/4", "steady", 0), ("samba", 100, 55, "4/4", "steady", 0),
        ("cha_cha", 120, 55, "4/4", "steady", 0), ("dembow", 94, 55, "4/4", "steady", 0),
    ], 7)
    + _composed("orchestral", [
        ("march", 116, 55, "4/4", "steady", 0), ("string_ostinato", 148, 50, "4/4", "steady", 0),
        ("baroque", 100, 55, "4/4", "steady", 0), ("pizzicato_serenade", 108, 55, "4/4", "steady", 0),
        ("fanfare", 92, 55, "4/4", "steady", 0), ("string_ostinato", 66, 60, "4/4", "steady", 0),
    ], 13)
    + _composed("piano", [
        ("alberti", 112, 55, "4/4", "steady", 0), ("arpeggio_ballad", 64, 60, "4/4", "steady", 0),
        ("stride", 150, 50, "4/4", "steady", 0), ("syncopated_pop", 96, 55, "4/4", "steady", 0),
        ("minimalist", 140, 50, "4/4", "steady", 0), ("boogie", 168, 50, "4/4", "steady", 0),
    ], 19)
    + _composed("swing", [
        ("medium_swing", 132, 55, "4/4", "steady", 0), ("big_band", 176, 50, "4/4", "steady", 0),
        ("ballad_swing", 62, 60, "4/4", "steady", 0), ("shuffle_blues", 96, 55, "4/4", "steady", 0),
        ("gypsy_jazz", 188, 45, "4/4", "steady", 0), ("medium_swing", 110, 55, "4/4", "steady", 0),
    ], 25)
    + _composed("triple", [
        ("waltz", 168, 50, "3/4", "steady", 0), ("jazz_waltz", 144, 50, "3/4", "steady", 0),
        ("mazurka", 126, 55, "3/4", "steady", 0), ("jig", 116, 50, "6/8", "steady", 0),
        ("ballad_68", 60, 60, "6/8", "steady", 0), ("tarantella", 150, 50, "6/8", "steady", 0),
    ], 31)
    + _composed("tempo-change", [
        ("rock", 90, 60, "4/4", "ramp:140", 0), ("alberti", 120, 60, "4/4", "rit:0.6", 0),
        ("march", 100, 60, "4/4", "jump:140", 0), ("son_montuno", 120, 60, "4/4", "jump:90", 0),
        ("funk", 100, 60, "4/4", "steps:120/90", 0), ("waltz", 120, 60, "3/4", "ramp_jump:176/110", 0),
    ], 37)
    + _composed("free-intro", [
        ("house", 122, 45, "4/4", "steady", 16), ("bossa", 128, 45, "4/4", "steady", 10),
        ("string_ostinato", 140, 40, "4/4", "steady", 20), ("stride", 100, 45, "4/4", "steady", 12),
        ("medium_swing", 150, 45, "4/4", "steady", 14), ("rock", 160, 45, "4/4", "steady", 8),
    ], 43)
    + [
        Song(f"charted-rock-{k + 1:02d}-{folder.split('/')[1].lower().replace(' ', '_')}", "charted-rock",
             49 + k,
             chart=ChartedSong(folder, package, licence))
        for k, (folder, package, licence) in enumerate([
            ("muldjord/armygeddon", "fretsonfire-songs-muldjord", MULDJORD),
            ("sectoid/Escape from chaosland", "fretsonfire-songs-sectoid", SECTOID),
            ("muldjord/chaos_god", "fretsonfire-songs-muldjord", MULDJORD),
            ("sectoid/Feelings", "fretsonfire-songs-sectoid", SECTOID),
            ("muldjord/internal_degeneration", "fretsonfire-songs-muldjord", MULDJORD),
            ("sectoid/Metal madness", "fretsonfire-songs-sectoid", SECTOID),
            ("muldjord/mutilated_mime", "fretsonfire-songs-muldjord", MULDJORD),
            ("sectoid/War of freedom", "fretsonfire-songs-sectoid", SECTOID),
        ])
    ]
)  # fmt: skip


def _key(song: Song) -> str:
    """What the cached files were built from; a mismatch rebuilds the song."""
    described = {
        "version": BUILD_VERSION,
        "recipe": asdict(song.recipe) if song.recipe else None,
        "chart": asdict(song.chart) if song.chart else None,
    }
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:16]


def truth_of(cache: Path, song: Song) -> dict:
    """The cached truth record of ``song`` (after :func:`build`)."""
    return json.loads((cache / f"{song.id}.json").read_text(encoding="utf-8"))


def build(cache: Path, songs: tuple[Song, ...] = SONGS, *, log=print) -> list[dict]:
    """Build every song missing or stale in ``cache``; return the manifest rows (truth without the times)."""
    cache.mkdir(parents=True, exist_ok=True)
    manifest = []
    for song in songs:
        truth_path = cache / f"{song.id}.json"
        key = _key(song)
        if not (
            truth_path.is_file()
            and json.loads(truth_path.read_text())["key"] == key
            and (cache / f"{song.id}.flac").is_file()
        ):
            log(f"building {song.id}")
            record = _build_composed(cache, song, song.recipe) if song.recipe else _build_charted(cache, song)
            record |= {
                "id": song.id,
                "category": song.category,
                "seed": song.seed,
                "held_out": song.held_out,
                "source": song.source,
                "licence": song.licence,
                "key": key,
            }
            truth_path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        record = truth_of(cache, song)
        manifest.append({k: v for k, v in record.items() if k not in ("beats_s", "downbeats_s", "key")})
    return manifest


def _tempo_range(beats: np.ndarray) -> list[float]:
    bpm = 60.0 / np.diff(beats)
    return [round(float(bpm.min()), 1), round(float(bpm.max()), 1)]


def _build_composed(cache: Path, song: Song, recipe: Recipe) -> dict:
    score = compose(recipe)
    midi = cache / f"{song.id}.mid"
    wav = cache / f"{song.id}.render.wav"
    write_midi(score, midi)
    rng = np.random.default_rng(recipe.seed + 1000)
    audio = render_midi(midi, wav, reverb_room=float(rng.uniform(0.1, 0.7)))
    wav.unlink()
    sf.write(cache / f"{song.id}.flac", master(audio, sr=RENDER_SR, rng=rng), RENDER_SR, subtype="PCM_16")
    beats, downbeats = score.beat_times_s(), score.downbeat_times_s()
    return {
        "style": recipe.style,
        "meter": recipe.meter,
        "tempo_shape": recipe.tempo,
        "intro_s": recipe.intro_s,
        "beats_per_bar": score.beats_per_bar,
        "tempo_bpm": _tempo_range(beats),
        "duration_s": round(audio.shape[0] / RENDER_SR, 2),
        "beats_s": beats.round(6).tolist(),
        "downbeats_s": downbeats.round(6).tolist(),
    }


def _build_charted(cache: Path, song: Song) -> dict:
    chart = song.chart
    if chart is None:
        raise ValueError(f"song {song.id} has neither a recipe nor a chart")
    audio, sr = charted_audio(chart)
    sf.write(cache / f"{song.id}.flac", audio, sr, subtype="PCM_16")
    mono = audio.mean(axis=1)
    grid, bpm = chart_beats_s(chart)
    offset, window_offsets = grid_offset_s(mono, sr, grid)
    start, stop = active_span_s(mono, sr)
    beats = grid + offset
    beats = beats[(beats >= start - 0.05) & (beats <= stop)]
    return {
        "style": "recorded rock/metal",
        "meter": "4/4",
        "tempo_shape": "steady",
        "intro_s": 0.0,
        "beats_per_bar": 4,
        "tempo_bpm": [round(bpm, 1), round(bpm, 1)],
        "chart_offset_ms": round(offset * 1e3, 1),
        "window_offsets_ms": [round(s * 1e3) for s in window_offsets],
        "duration_s": round(audio.shape[0] / sr, 2),
        "beats_s": beats.round(6).tolist(),
        "downbeats_s": None,
    }
