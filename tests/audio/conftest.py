"""Audio test helpers: a real music clip and constructed click tracks, written to tmp files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_SONG = REPO_ROOT / "demo" / "Kevin_MacLeod_-_Vibe_Ace.ogg"
"""A real CC BY 3.0 track (OGG Vorbis, 44.1 kHz stereo) committed with the repository."""

ClickWriter = Callable[..., np.ndarray]


def click_track(
    *,
    bpm: float,
    duration_s: float,
    sr: int,
    offset_s: float = 0.5,
    accent_every: int = 4,
    noise_rms: float = 1e-3,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Decaying tone bursts at a steady tempo over faint noise (:func:`clicks_at` on a steady grid).

    Returns
    -------
    y : float32 [n] mono samples
    click_times_s : float [clicks], the start time of every click
    """
    times = np.arange(offset_s, duration_s - 0.05, 60.0 / bpm)
    y = clicks_at(
        times, duration_s=duration_s, sr=sr, accent_every=accent_every, noise_rms=noise_rms, seed=seed
    )
    return y, times


def clicks_at(
    times_s: np.ndarray,
    *,
    duration_s: float,
    sr: int,
    accent_every: int = 4,
    noise_rms: float = 1e-3,
    seed: int = 0,
) -> np.ndarray:
    """A click at each of ``times_s`` over faint noise: float32 [n] mono samples.

    Every ``accent_every``-th click (starting with the first) is a loud 80 Hz
    thump, the others are 1 kHz ticks: a bar of ``accent_every`` with a bass downbeat.
    """
    rng = np.random.default_rng(seed)
    n = int(round(duration_s * sr))
    y = rng.normal(scale=noise_rms, size=n).astype(np.float32)
    t = np.arange(int(0.03 * sr)) / sr
    for index, start_s in enumerate(times_s):
        accent = index % accent_every == 0
        burst = (0.9 if accent else 0.5) * np.sin(2 * np.pi * (80.0 if accent else 1000.0) * t)
        burst *= np.exp(-t / 0.008)
        start = int(round(start_s * sr))
        stop = min(n, start + burst.size)
        y[start:stop] += burst[: stop - start].astype(np.float32)
    return y


def pop_bars(*, bpm: float, bars: int, sr: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A drum-and-chords loop: kick on beats 1 and 3, snare on 2 and 4, a new chord every bar.

    The kick alone cannot tell beat 1 from beat 3; the chord change can. Starts at 0.5 s,
    over faint noise, and rings one second past the last bar.

    Returns
    -------
    y : float32 [n] mono samples
    bar_times_s : float [bars], the time of each bar's first beat
    """
    rng = np.random.default_rng(seed)
    beat_s = 60.0 / bpm
    n = int((bars * 4 * beat_s + 1.0) * sr)
    y = rng.normal(scale=1e-3, size=n).astype(np.float32)
    t = np.arange(int(0.25 * sr)) / sr
    kick = 0.8 * np.sin(2 * np.pi * 55.0 * t) * np.exp(-t / 0.06)
    snare = 0.4 * rng.normal(size=t.size) * np.exp(-t / 0.04)
    chord_roots_hz = (261.63, 392.0, 440.0, 349.23)  # C, G, Am, F
    bar_times = 0.5 + np.arange(bars) * 4 * beat_s
    for index in range(bars * 4):
        start = int((0.5 + index * beat_s) * sr)
        hit = kick if index % 4 in (0, 2) else snare
        stop = min(n, start + hit.size)
        y[start:stop] += hit[: stop - start].astype(np.float32)
        if index % 4 == 0:
            stop = min(n, start + int(4 * beat_s * sr))
            tc = np.arange(stop - start) / sr
            ramp = np.minimum(1.0, np.minimum(tc, tc[-1] - tc) / 0.01)
            root = chord_roots_hz[(index // 4) % 4]
            for ratio in (1.0, 1.26, 1.5):  # a triad
                y[start:stop] += (0.08 * ramp * np.sin(2 * np.pi * root * ratio * tc)).astype(np.float32)
    return y, bar_times


@pytest.fixture
def write_click_track(tmp_path: Path) -> ClickWriter:
    """Write :func:`click_track` to ``tmp_path/name`` and return the click times."""

    def write(name: str = "clicks.wav", **kwargs: float) -> np.ndarray:
        y, times = click_track(**kwargs)  # type: ignore[arg-type]
        sf.write(tmp_path / name, y, int(kwargs["sr"]))
        return times

    return write


@pytest.fixture(scope="session")
def demo_song() -> Path:
    return DEMO_SONG


@pytest.fixture(scope="session")
def music_clip() -> tuple[np.ndarray, int]:
    """Six seconds of the real demo song from 20 s in, as float32 [n, 2] at its own 44.1 kHz."""
    with sf.SoundFile(DEMO_SONG) as handle:
        sr = handle.samplerate
        handle.seek(20 * sr)
        clip = handle.read(6 * sr, dtype="float32", always_2d=True)
    return clip, sr
