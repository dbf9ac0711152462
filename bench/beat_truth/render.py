"""MIDI to audio: FluidSynth with the General MIDI soundfont, then light, seeded mastering.

FluidSynth renders the file faster than real time (``-F``) with its MIDI player
timed by the sample clock, so a note-on at ``t`` seconds of the tempo map
starts at sample ``t * sr`` to within one 64-sample block. The mastering then
makes the set less clean than a soundfont: a random tone tilt, a bus
compressor, soft clipping, a noise floor, and a level anywhere from quiet to
loud, all seeded. None of it moves a note in time (every filter is applied
forward and backward, so its phase delay cancels).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.ndimage import maximum_filter1d
from scipy.signal import butter, sosfiltfilt

__all__ = ["RENDER_SR", "SOUNDFONT", "fluidsynth_missing", "master", "render_midi"]

SOUNDFONT = Path("/usr/share/sounds/sf2/FluidR3_GM.sf2")
"""Debian's ``fluid-soundfont-gm`` (Frank Wen's FluidR3, MIT)."""

RENDER_SR = 44100


def fluidsynth_missing() -> str | None:
    """Why the set cannot be rendered here (``fluidsynth`` or the soundfont missing), or None."""
    if shutil.which("fluidsynth") is None:
        return "fluidsynth is not installed (apt-get install fluidsynth)"
    if not SOUNDFONT.is_file():
        return f"the General MIDI soundfont {SOUNDFONT} is missing (apt-get install fluid-soundfont-gm)"
    return None


def render_midi(midi: Path, wav: Path, *, reverb_room: float = 0.3, sr: int = RENDER_SR) -> np.ndarray:
    """Render ``midi`` to ``wav`` with FluidSynth; returns the stereo samples [n, 2] float32.

    ``reverb_room`` (0-1) is FluidSynth's reverb room size: how wet the mix sounds.
    """
    command = [
        "fluidsynth", "-ni", "-q", "-F", str(wav), "-r", str(sr), "-g", "0.5",
        "-o", "player.timing-source=sample", "-o", "synth.reverb.active=1",
        "-o", f"synth.reverb.room-size={reverb_room:.2f}", "-o", "synth.chorus.active=1",
        str(SOUNDFONT), str(midi),
    ]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    audio, file_sr = sf.read(wav, dtype="float32", always_2d=True)
    if file_sr != sr:
        raise RuntimeError(f"fluidsynth wrote {file_sr} Hz, asked for {sr}")
    return audio


def master(audio: np.ndarray, *, sr: int, rng: np.random.Generator) -> np.ndarray:
    """Tilt, compress, clip, add noise and set the level of stereo ``audio`` [n, 2]; returns a new array."""
    y = audio.astype(np.float64)
    y /= max(1e-9, float(np.abs(y).max()))
    # Tone: a low shelf and a high cut, zero-phase.
    low = sosfiltfilt(butter(2, 250.0, "low", fs=sr, output="sos"), y, axis=0)
    y = y + rng.uniform(-0.3, 0.5) * low
    y = sosfiltfilt(butter(2, rng.uniform(6000.0, 16000.0), "low", fs=sr, output="sos"), y, axis=0)
    # Bus compression: gain from a peak envelope (held 50 ms, symmetric, so no timing shift).
    envelope = maximum_filter1d(np.abs(y).max(axis=1), size=int(0.05 * sr))
    envelope = sosfiltfilt(butter(1, 8.0, "low", fs=sr, output="sos"), envelope)
    threshold, ratio = rng.uniform(0.2, 0.5), rng.uniform(1.5, 4.0)
    over = np.maximum(envelope, 1e-9) / threshold
    gain = np.where(over > 1, over ** (1 / ratio - 1), 1.0)
    y = y * gain[:, None]
    drive = 10 ** (rng.uniform(0.0, 9.0) / 20)
    y = np.tanh(drive * y / max(1e-9, float(np.abs(y).max()))) / np.tanh(drive)
    # Noise floor: pink-ish (integrated white, high-passed), 35-60 dB under the programme.
    white = rng.standard_normal(y.shape)
    pink = sosfiltfilt(butter(1, 500.0, "low", fs=sr, output="sos"), white, axis=0) * 8 + white * 0.3
    rms = float(np.sqrt(np.mean(y**2)))
    pink *= rms * 10 ** (-rng.uniform(35.0, 60.0) / 20) / max(1e-9, float(np.sqrt(np.mean(pink**2))))
    y = y + pink
    peak_dbfs = rng.uniform(-12.0, -0.3)
    return (y * 10 ** (peak_dbfs / 20) / float(np.abs(y).max())).astype(np.float32)
