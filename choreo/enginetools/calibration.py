"""The calibration set for INT8: real songs of different tempi and styles.

Post-training quantization fixes the int8 range of every quantized tensor
from the values seen on the calibration set, so that set must cover what the
model meets in service: slow and fast songs, and every style. This module
picks the songs (pure, testable without audio or a GPU) and turns them into
chunk feeds with the real recurrent state each chunk starts from.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from choreo.contracts.model_spec import ModelSpec
from choreo.errors import ParameterError
from engines.base import STATE_IN_PREFIX, Engine

__all__ = [
    "CalibrationSong",
    "SongCandidate",
    "calibration_chunks",
    "read_manifest",
    "select_calibration_songs",
]


@dataclass(frozen=True)
class SongCandidate:
    """A song that may go into the calibration set."""

    path: Path
    tempo_bpm: float
    duration_s: float


@dataclass(frozen=True)
class CalibrationSong:
    """A chosen song, the style it is danced in, and the seed of its latent."""

    path: Path
    tempo_bpm: float
    style: str
    seed: int


def read_manifest(music_dir: Path) -> list[SongCandidate]:
    """Candidates from ``music_dir/MANIFEST.tsv`` (columns ``file``, ``duration_s``, ``tempo_bpm_est``).

    Raises
    ------
    ParameterError
        When the folder or its manifest is missing or a row is malformed.
    """
    manifest = Path(music_dir) / "MANIFEST.tsv"
    if not manifest.is_file():
        raise ParameterError(
            f"calibration folder {music_dir} has no MANIFEST.tsv (file, duration_s, tempo_bpm_est)"
        )
    out = []
    with open(manifest, newline="") as f:
        for line, row in enumerate(csv.DictReader(f, delimiter="\t"), start=2):
            try:
                out.append(
                    SongCandidate(
                        Path(music_dir) / row["file"], float(row["tempo_bpm_est"]), float(row["duration_s"])
                    )
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise ParameterError(f"{manifest}:{line}: malformed row ({exc})") from exc
    return out


def select_calibration_songs(
    candidates: Sequence[SongCandidate],
    styles: Sequence[str],
    *,
    count: int = 8,
    max_duration_s: float = 400.0,
    seed: int = 0,
) -> list[CalibrationSong]:
    """Pick ``count`` songs spread evenly over the tempo range, and give each a style.

    The candidates (those no longer than ``max_duration_s``, to keep calibration
    quick) are sorted by tempo and taken at evenly spaced ranks, so the slowest
    and the fastest are always in. Styles go round-robin in tempo order, so every
    style is present once ``count >= len(styles)`` and each style meets both
    slow and fast songs. Deterministic for a given ``seed``.

    Raises
    ------
    ParameterError
        When fewer usable candidates than ``count`` are given, or ``count < 1``.
    """
    if count < 1:
        raise ParameterError(f"calibration needs at least one song, got count={count}")
    if not styles:
        raise ParameterError("calibration needs at least one style")
    usable = sorted(
        (c for c in candidates if c.duration_s <= max_duration_s), key=lambda c: (c.tempo_bpm, str(c.path))
    )
    if len(usable) < count:
        raise ParameterError(
            f"calibration needs {count} songs of at most {max_duration_s:.0f} s, only {len(usable)} given"
        )
    ranks = np.unique(np.round(np.linspace(0, len(usable) - 1, count)).astype(int))
    chosen = [usable[i] for i in ranks]
    rng = np.random.default_rng(seed)
    seeds = rng.integers(0, 2**31 - 1, size=len(chosen))
    return [
        CalibrationSong(c.path, c.tempo_bpm, styles[i % len(styles)], int(s))
        for i, (c, s) in enumerate(zip(chosen, seeds, strict=True))
    ]


def calibration_chunks(
    songs: Sequence[CalibrationSong],
    engine: Engine,
    song_inputs: Callable[[CalibrationSong, ModelSpec], dict[str, np.ndarray]],
    *,
    chunk_frames: int = 128,
    chunks_per_song: int = 4,
) -> list[dict[str, np.ndarray]]:
    """Chunk feeds for the whole chunk model, with the state each chunk really starts from.

    Every song is run from its start by the fp32 ``engine``; each of its first
    ``chunks_per_song`` chunks becomes one feed (conditioning plus ``state_in_*``),
    all songs stacked on the batch axis.

    Parameters
    ----------
    songs : the calibration songs
    engine : an fp32 engine of the model being quantized (ONNX Runtime)
    song_inputs : gives a song's per-frame inputs ``{name: [N, width]}`` at the model's fps
    """
    per_song = [song_inputs(song, engine.spec) for song in songs]
    frames = min(chunk_frames * chunks_per_song, *(x["music"].shape[0] for x in per_song))
    n_chunks = frames // chunk_frames
    if n_chunks < 1:
        raise ParameterError(f"calibration songs are shorter than one chunk of {chunk_frames} frames")
    stacked = {name: np.stack([x[name][:frames] for x in per_song]) for name in per_song[0]}
    state = engine.initial_state(len(songs))
    feeds = []
    for k in range(n_chunks):
        chunk = {name: value[:, k * chunk_frames : (k + 1) * chunk_frames] for name, value in stacked.items()}
        feed = {name: np.ascontiguousarray(v) for name, v in chunk.items()}
        feed.update({STATE_IN_PREFIX + name: np.asarray(v) for name, v in state.items()})
        feeds.append(feed)
        _, state = engine.run(chunk, state)
    return feeds
