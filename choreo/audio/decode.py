"""Decode a song to mono float32 at one sample rate, block by block.

The file is read in blocks of :data:`BLOCK_FRAMES` frames (libsndfile in
process, or an ``ffmpeg`` pipe for AAC/M4A), each block is downmixed to mono
and pushed through a streaming resampler (``soxr.ResampleStream``) into one
preallocated float32 buffer. The whole song therefore never exists as
float64, nor as multichannel audio at the source rate: a 20-minute song at
15360 Hz costs its 74 MB of float32 output plus a few blocks.

The streaming resampler is linear-phase and delay-compensated, so output
sample ``n`` is the source at time ``n / sr``: resampling adds no offset.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Generator
from os import PathLike
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from choreo.audio.failures import CORRUPT_AUDIO, TOO_LONG, UNSUPPORTED_FORMAT, audio_error
from choreo.audio.formats import SourceInfo, inspect_source
from choreo.errors import ParameterError

__all__ = ["BLOCK_FRAMES", "load_audio"]

BLOCK_FRAMES = 65536
"""Source frames decoded per block (about 1.5 s at 44.1 kHz)."""

_DURATION_SLACK_S = 1.0
"""How far decoded audio may run past ``max_duration_s``: compressed headers can be off by a frame or two."""


def load_audio(path: str | PathLike[str], *, sr: int, max_duration_s: float | None = None) -> np.ndarray:
    """Decode ``path`` to mono float32 samples at ``sr`` Hz.

    Parameters
    ----------
    path : an audio file (WAV, FLAC, OGG Vorbis, Opus, MP3; AAC/M4A through ffmpeg)
    sr : int > 0, output sample rate in Hz
    max_duration_s : stop with ``too_long`` once the decoded audio runs more than
        one second past this, whatever the header claimed; None decodes everything

    Returns
    -------
    y : np.ndarray [shape=(n,), dtype=float32]
        Channels averaged. ``n = ceil(frames * sr / source_rate)`` for the
        ``frames`` decoded, so the duration ``n / sr`` is the source's duration
        rounded up to the next output sample and ``y[n]`` is the source at time
        ``n / sr``.

    Raises
    ------
    AudioError
        ``file_not_found``, ``unsupported_format``, ``corrupt_audio`` (a header
        that cannot be read, a decoding failure part-way, NaN or infinite
        samples) or ``too_long``; the message names the file.
    ParameterError
        ``sr`` is not a positive integer.
    """
    if isinstance(sr, bool) or not isinstance(sr, int | np.integer) or sr <= 0:
        raise ParameterError(f"sr must be a positive integer number of Hz, got {sr!r}")
    source = inspect_source(path)
    blocks = (
        _libsndfile_blocks(path, source) if source.backend == "libsndfile" else _ffmpeg_blocks(path, source)
    )
    return _resample_into_buffer(path, blocks, source, int(sr), max_duration_s)


def _resample_into_buffer(
    path: str | PathLike[str],
    blocks: Generator[np.ndarray, None, None],
    source: SourceInfo,
    sr: int,
    max_duration_s: float | None,
) -> np.ndarray:
    """Stream mono blocks at the source rate through soxr into one float32 buffer at ``sr``."""
    rate_in = source.sample_rate_hz
    limit_in = None if max_duration_s is None else int((max_duration_s + _DURATION_SLACK_S) * rate_in)
    resampler = None if rate_in == sr else soxr.ResampleStream(rate_in, sr, 1, dtype="float32", quality="HQ")
    expected_s = source.duration_s if limit_in is None else min(source.duration_s, limit_in / rate_in)
    buffer = np.empty(int(np.ceil(expected_s * sr)) + sr, dtype=np.float32)  # grows if the header is short
    filled = 0
    frames_in = 0
    try:
        for mono in blocks:
            if not np.isfinite(mono).all():
                raise audio_error(
                    path, CORRUPT_AUDIO, f"NaN or infinite samples near {frames_in / rate_in:.2f} s"
                )
            frames_in += mono.size
            if limit_in is not None and frames_in > limit_in:
                raise audio_error(
                    path, TOO_LONG, f"longer than the maximum of {max_duration_s:g} s once decoded"
                )
            out = mono if resampler is None else resampler.resample_chunk(mono, last=False)
            buffer = _append(buffer, filled, out)
            filled += out.size
    finally:
        blocks.close()
    if resampler is not None:
        tail = resampler.resample_chunk(np.zeros(0, dtype=np.float32), last=True)
        buffer = _append(buffer, filled, tail)
        filled += tail.size
    n_out = -(-frames_in * sr // rate_in)
    if n_out > filled:  # the resampler rounds its last sample down; pad to the exact length
        buffer = _append(buffer, filled, np.zeros(n_out - filled, dtype=np.float32))
    y = buffer[:n_out]
    return y.copy() if buffer.size - n_out > 2 * sr else y


def _append(buffer: np.ndarray, filled: int, values: np.ndarray) -> np.ndarray:
    """Write ``values`` at ``buffer[filled:]``, growing the buffer by a quarter when full."""
    needed = filled + values.size
    if needed > buffer.size:
        grown = np.empty(max(needed, buffer.size + buffer.size // 4), dtype=np.float32)
        grown[:filled] = buffer[:filled]
        buffer = grown
    buffer[filled:needed] = values
    return buffer


def _downmix(frames: np.ndarray) -> np.ndarray:
    """``[n, channels]`` float32 to contiguous mono ``[n]`` by averaging the channels.

    Summed channel by channel: ``mean(axis=1)`` over two interleaved channels is
    five times slower, a third of the decoding time of a stereo song.
    """
    channels = frames.shape[1]
    mono = np.array(frames[:, 0], dtype=np.float32)
    for channel in range(1, channels):
        mono += frames[:, channel]
    if channels > 1:
        mono *= np.float32(1.0 / channels)
    return mono


def _libsndfile_blocks(path: str | PathLike[str], source: SourceInfo) -> Generator[np.ndarray, None, None]:
    """Mono float32 blocks decoded in-process by libsndfile."""
    decoded = 0
    try:
        with sf.SoundFile(str(Path(path))) as handle:
            for frames in handle.blocks(blocksize=BLOCK_FRAMES, dtype="float32", always_2d=True):
                decoded += frames.shape[0]
                yield _downmix(frames)
    except (sf.LibsndfileError, RuntimeError) as exc:
        raise audio_error(
            path, CORRUPT_AUDIO, f"decoding failed after {decoded / source.sample_rate_hz:.2f} s ({exc})"
        ) from exc


def _ffmpeg_blocks(path: str | PathLike[str], source: SourceInfo) -> Generator[np.ndarray, None, None]:
    """Mono float32 blocks from an ``ffmpeg`` subprocess writing raw f32le to a pipe."""
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise audio_error(path, UNSUPPORTED_FORMAT, "this format needs ffmpeg, which is not installed here")
    channels = source.channels
    command = [
        ffmpeg,
        "-nostdin",
        "-v",
        "error",
        "-i",
        str(Path(path)),
        "-map",
        "0:a:0",
        "-ac",
        str(channels),
        "-ar",
        str(source.sample_rate_hz),
        "-f",
        "f32le",
        "-c:a",
        "pcm_f32le",
        "-",
    ]
    frame_bytes = 4 * channels
    with (
        tempfile.TemporaryFile() as errors,
        # ffmpeg from PATH (a deployment installs it), an argument list: the file is a path, no shell.
        subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors) as proc,  # noqa: S603
    ):
        try:
            while chunk := proc.stdout.read(BLOCK_FRAMES * frame_bytes):  # type: ignore[union-attr]
                whole = len(chunk) - len(chunk) % frame_bytes
                frames = np.frombuffer(chunk[:whole], dtype="<f4").reshape(-1, channels)
                yield _downmix(frames)
        finally:
            if proc.poll() is None:
                proc.kill()  # the caller stopped early (too long, or an error): don't wait for the rest
        status = proc.wait()
        if status != 0:
            errors.seek(0)
            detail = errors.read().decode(errors="replace").strip().splitlines()
            raise audio_error(
                path, CORRUPT_AUDIO, f"ffmpeg could not decode it ({detail[-1] if detail else status})"
            )
