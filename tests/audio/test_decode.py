"""Decoding: every format, mono downmix, exact length, no time shift, bounded memory."""

from __future__ import annotations

import shutil
import subprocess
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr

from choreo.audio import load_audio, probe_duration_s
from choreo.errors import AudioError, ParameterError

SR = 15360  # 30 fps * 512
HALF_FRAME = 256  # samples at SR


def _write_formats(folder: Path, clip: np.ndarray, sr: int) -> dict[str, Path]:
    paths = {
        "wav": folder / "clip.wav",
        "flac": folder / "clip.flac",
        "ogg": folder / "clip.ogg",
        "opus": folder / "clip.opus",
        "mp3": folder / "clip.mp3",
    }
    sf.write(paths["wav"], clip, sr, subtype="PCM_16")
    sf.write(paths["flac"], clip, sr, format="FLAC")
    sf.write(paths["ogg"], clip, sr, format="OGG", subtype="VORBIS")
    sf.write(paths["opus"], soxr.resample(clip, sr, 48000), 48000, format="OGG", subtype="OPUS")
    sf.write(paths["mp3"], clip, sr, format="MP3", subtype="MPEG_LAYER_III")
    if shutil.which("ffmpeg"):
        paths["m4a"] = folder / "clip.m4a"
        subprocess.run(
            [
                "ffmpeg",
                "-v",
                "error",
                "-y",
                "-i",
                str(paths["wav"]),
                "-c:a",
                "aac",
                "-b:a",
                "160k",
                str(paths["m4a"]),
            ],
            check=True,
        )
    return paths


def _lag_samples(reference: np.ndarray, other: np.ndarray, max_lag: int = 2048) -> tuple[int, float]:
    """Lag of ``other`` behind ``reference`` (samples) and the normalised correlation there."""
    n = min(reference.size, other.size) - 2 * max_lag
    ref = reference[max_lag : max_lag + n]
    lags = np.arange(-max_lag, max_lag + 1)
    scores = np.array([ref @ other[max_lag + lag : max_lag + lag + n] for lag in lags])
    lag = int(lags[np.argmax(scores)])
    matched = other[max_lag + lag : max_lag + lag + n]
    return lag, float(ref @ matched / (np.linalg.norm(ref) * np.linalg.norm(matched)))


@pytest.fixture(scope="module")
def encoded(tmp_path_factory: pytest.TempPathFactory, music_clip: tuple[np.ndarray, int]) -> dict[str, Path]:
    clip, sr = music_clip
    return _write_formats(tmp_path_factory.mktemp("formats"), clip, sr)


@pytest.mark.parametrize("fmt", ["wav", "flac", "ogg", "opus", "mp3", "m4a"])
def test_every_format_decodes_to_the_same_music_without_shift(encoded: dict[str, Path], fmt: str) -> None:
    if fmt not in encoded:
        pytest.skip("ffmpeg is not installed: AAC/M4A cannot be decoded here")
    reference = load_audio(encoded["wav"], sr=SR)
    y = load_audio(encoded[fmt], sr=SR)
    assert y.dtype == np.float32 and y.ndim == 1 and y.flags.c_contiguous
    assert abs(y.size - reference.size) <= SR * 0.06, f"{fmt}: {y.size} samples against {reference.size}"
    lag, correlation = _lag_samples(reference, y)
    assert correlation > 0.9, f"{fmt}: decoded audio does not match the source (r={correlation:.3f})"
    assert abs(lag) < HALF_FRAME, (
        f"{fmt}: decoded audio is shifted by {lag} samples ({lag / SR * 1000:.1f} ms)"
    )


@pytest.mark.parametrize("fmt", ["wav", "flac", "ogg", "opus", "mp3", "m4a"])
def test_every_format_has_its_duration_in_the_header(encoded: dict[str, Path], fmt: str) -> None:
    if fmt not in encoded:
        pytest.skip("ffmpeg is not installed: AAC/M4A cannot be probed here")
    assert probe_duration_s(encoded[fmt]) == pytest.approx(6.0, abs=0.06)


def test_length_is_the_source_duration_rounded_up_to_a_sample(
    tmp_path: Path, rng: np.random.Generator
) -> None:
    for sr_in, n_in in [(44100, 44100 * 3 + 17), (48000, 96001), (22050, 7), (SR, 1000), (8000, 12345)]:
        path = tmp_path / f"noise_{sr_in}_{n_in}.wav"
        sf.write(path, rng.normal(scale=0.1, size=n_in).astype(np.float32), sr_in, subtype="FLOAT")
        y = load_audio(path, sr=SR)
        assert y.size == -(-n_in * SR // sr_in)
        assert probe_duration_s(path) == pytest.approx(n_in / sr_in)


def test_resampling_adds_no_delay(tmp_path: Path) -> None:
    sr_in = 44100
    x = np.zeros(sr_in * 4, dtype=np.float32)
    clicks = [4410, 44100, 100000, 150001]
    x[clicks] = 1.0
    path = tmp_path / "impulses.wav"
    sf.write(path, x, sr_in, subtype="FLOAT")
    y = load_audio(path, sr=SR)
    for click in clicks:
        expected = click * SR / sr_in
        window = np.arange(int(expected) - 64, int(expected) + 64)
        peak = window[np.argmax(np.abs(y[window]))]
        assert abs(peak - expected) <= 1.0, f"impulse at {click} came out at {peak}, expected {expected:.1f}"


def test_channels_are_averaged(tmp_path: Path, rng: np.random.Generator) -> None:
    left = rng.normal(scale=0.2, size=20000).astype(np.float32)
    right = rng.normal(scale=0.2, size=20000).astype(np.float32)
    path = tmp_path / "stereo.wav"
    sf.write(path, np.stack([left, right], axis=1), SR, subtype="FLOAT")
    np.testing.assert_allclose(load_audio(path, sr=SR), (left + right) / 2, atol=1e-7)


def test_decoding_stops_past_max_duration(tmp_path: Path) -> None:
    path = tmp_path / "ten_seconds.wav"
    sf.write(path, np.full(8000 * 10, 0.1, dtype=np.float32), 8000)
    with pytest.raises(AudioError) as caught:
        load_audio(path, sr=SR, max_duration_s=5.0)
    assert caught.value.code == "too_long" and str(path) in str(caught.value)
    assert load_audio(path, sr=SR, max_duration_s=10.0).size == SR * 10


def test_nan_samples_are_corrupt(tmp_path: Path) -> None:
    x = np.full(8000, 0.1, dtype=np.float32)
    x[5000] = np.nan
    path = tmp_path / "nan.wav"
    sf.write(path, x, 8000, subtype="FLOAT")
    with pytest.raises(AudioError) as caught:
        load_audio(path, sr=SR)
    assert caught.value.code == "corrupt_audio" and "nan.wav" in str(caught.value)


@pytest.mark.parametrize("sr", [0, -15360, 15360.0, True])
def test_bad_sample_rate_is_a_parameter_error(demo_song: Path, sr: object) -> None:
    with pytest.raises(ParameterError, match="sr must be"):
        load_audio(demo_song, sr=sr)  # type: ignore[arg-type]


def test_m4a_without_ffmpeg_says_so(encoded: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    if "m4a" not in encoded:
        pytest.skip("ffmpeg is not installed: no M4A file to test with")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(AudioError) as caught:
        load_audio(encoded["m4a"], sr=SR)
    assert caught.value.code == "unsupported_format"
    assert "clip.m4a" in str(caught.value) and "ffmpeg" in str(caught.value)


def test_long_file_never_costs_float64_of_the_song(tmp_path: Path) -> None:
    """Ten minutes at 8 kHz: the decoder's peak is about its float32 output, not twice that."""
    sr_in, minutes = 8000, 10
    path = tmp_path / "long.wav"
    rng = np.random.default_rng(7)
    with sf.SoundFile(path, "w", samplerate=sr_in, channels=2, subtype="PCM_16") as handle:
        for _ in range(minutes * 6):
            handle.write(rng.normal(scale=0.1, size=(sr_in * 10, 2)).astype(np.float32))
    output_bytes = minutes * 60 * SR * 4
    tracemalloc.start()
    try:
        y = load_audio(path, sr=SR)
        _, peak_bytes = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert y.nbytes == output_bytes
    float64_song_bytes = 2 * output_bytes
    assert peak_bytes < 1.1 * output_bytes + 4_000_000 < float64_song_bytes, (
        f"peak {peak_bytes / 1e6:.1f} MB for {output_bytes / 1e6:.1f} MB of float32 output"
    )
