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
    """Decaying tone bursts at a steady tempo over faint noise.

    Every ``accent_every``-th click (starting with the first) is a loud 80 Hz
    thump, the others are 1 kHz ticks: a bar of four with a bass downbeat.

    Returns
    -------
    y : float32 [n] mono samples
    click_times_s : float [clicks], the start time of every click
    """
    rng = np.random.default_rng(seed)
    n = int(round(duration_s * sr))
    y = rng.normal(scale=noise_rms, size=n).astype(np.float32)
    times = np.arange(offset_s, duration_s - 0.05, 60.0 / bpm)
    t = np.arange(int(0.03 * sr)) / sr
    for index, start_s in enumerate(times):
        accent = index % accent_every == 0
        burst = (0.9 if accent else 0.5) * np.sin(2 * np.pi * (80.0 if accent else 1000.0) * t)
        burst *= np.exp(-t / 0.008)
        start = int(round(start_s * sr))
        stop = min(n, start + burst.size)
        y[start:stop] += burst[: stop - start].astype(np.float32)
    return y, times


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
