"""The decode forkserver's warm-up: imported by it (a preload of :mod:`worker.isolated`), it analyses
a few seconds of synthetic clicks once, so every child it forks starts where a second song would.

A child inherits the forkserver's memory as it was at the fork. What a first analysis computes and
keeps (the mel and chroma filterbanks, the STFT window and bands, scipy's FFT plans, the codecs'
first-use set-up) a child of a cold forkserver computes again for each song and throws away when it
exits; warmed here once, each child finds it made (``bench/decode_child.py`` measures both).

The warm-up is an optimisation, never a condition: if it fails, the failure is logged and the
forkserver starts as it would without it (cold), rather than failing every decode of the worker.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

from choreo.pipeline import prepare_song
from choreo.runners import native_fps

__all__ = ["warm_up"]

log = logging.getLogger(__name__)

_SECONDS = 4.0
_RATE = 44_100
_FORMATS = ("wav", "ogg")
"""The containers the songs most often come in: PCM and Vorbis, each decoded once."""


def _clicks(seconds: float, rate: int) -> np.ndarray:
    """A 110 Hz tone sounding for 50 ms on every half second: beats for the analysis to find."""
    t = np.arange(int(seconds * rate)) / rate
    return (0.5 * np.sin(2 * np.pi * 110 * t) * (np.mod(t, 0.5) < 0.05)).astype(np.float32)


def warm_up() -> None:
    """Analyse the clicks, in each of :data:`_FORMATS`, at the rate of each shipped synthesizer."""
    rates = sorted({native_fps("blend"), native_fps("model")})
    with tempfile.TemporaryDirectory(prefix="choreo-warm-") as tmp:
        for fmt in _FORMATS:
            song = Path(tmp) / f"clicks.{fmt}"
            sf.write(song, _clicks(_SECONDS, _RATE), _RATE)
            for fps in rates:
                prepare_song(song, fps=fps)


try:
    warm_up()
except Exception:  # noqa: BLE001 - see the module docstring: logged, and the forkserver starts cold
    log.warning("the decode forkserver's warm-up failed; its children start cold", exc_info=True)
