"""Songs that cannot be danced: each gives an AudioError with its code and the file's name."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from choreo.audio import analyze_song, probe_duration_s, song_sha256
from choreo.errors import AudioError, ParameterError
from choreo.settings import Settings

from .conftest import ClickWriter


def _refused(path: Path, code: str, settings: Settings | None = None) -> AudioError:
    with pytest.raises(AudioError) as caught:
        analyze_song(path, fps=30, settings=settings or Settings())
    error = caught.value
    assert error.code == code, f"{path.name}: expected {code}, got {error.code}: {error}"
    assert str(error).startswith(f"{path}: "), f"the message does not start with the file: {error}"
    return error


def _corrupt_ogg(folder: Path, demo_song: Path) -> Path:
    """The demo song's real OGG headers followed by garbage: libsndfile recognises it and fails."""
    path = folder / "corrupt.ogg"
    path.write_bytes(demo_song.read_bytes()[:6000] + np.random.default_rng(1).bytes(30000))
    return path


def _garbled_flac(folder: Path, music_clip: tuple[np.ndarray, int]) -> Path:
    """A FLAC whose header is intact and whose frames are damaged: it fails part-way through decoding."""
    clip, sr = music_clip
    path = folder / "garbled.flac"
    sf.write(path, clip, sr, format="FLAC")
    data = bytearray(path.read_bytes())
    data[8000::101] = bytes(b ^ 0x5A for b in data[8000::101])
    path.write_bytes(bytes(data))
    return path


def test_missing_file(tmp_path: Path) -> None:
    error = _refused(tmp_path / "nowhere.mp3", "file_not_found")
    assert "no such file" in str(error)
    _refused(tmp_path, "file_not_found")  # a directory is not a song either


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.mp3"
    path.write_bytes(b"")
    assert "empty" in str(_refused(path, "corrupt_audio"))


@pytest.fixture(params=["with ffmpeg", "libsndfile only"])
def decoders(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with ffmpeg on the PATH (where installed) and without it."""
    if request.param == "libsndfile only":
        monkeypatch.setenv("PATH", "/nonexistent")
    return str(request.param)


def test_text_file_named_mp3(tmp_path: Path, decoders: str) -> None:
    path = tmp_path / "notes.mp3"
    path.write_text("these are my lyrics, not a song\n" * 20)
    assert "cannot be read as audio" in str(_refused(path, "corrupt_audio"))


def test_unknown_format(tmp_path: Path, decoders: str) -> None:
    path = tmp_path / "song.xyz"
    path.write_bytes(b"\x00\x01" * 4000)
    error = _refused(path, "unsupported_format")
    assert "not an audio format" in str(error) and "MP3" in str(error)


def test_corrupt_ogg(tmp_path: Path, demo_song: Path) -> None:
    _refused(_corrupt_ogg(tmp_path, demo_song), "corrupt_audio")


def test_flac_damaged_after_its_header(tmp_path: Path, music_clip: tuple[np.ndarray, int]) -> None:
    path = _garbled_flac(tmp_path, music_clip)
    assert probe_duration_s(path) == pytest.approx(6.0)  # the header is fine
    assert "decoding failed" in str(_refused(path, "corrupt_audio"))


@pytest.mark.parametrize(("name", "n_samples"), [("half_second.wav", 11025), ("zero_seconds.wav", 0)])
def test_too_short(tmp_path: Path, name: str, n_samples: int) -> None:
    path = tmp_path / name
    sf.write(path, np.random.default_rng(2).normal(scale=0.3, size=n_samples).astype(np.float32), 22050)
    error = _refused(path, "too_short")
    assert "too short" in str(error) and "minimum is 1 s" in str(error)


def test_too_long_is_refused_from_the_header(tmp_path: Path) -> None:
    """20 min + 1 s of silence at 1 kHz: refused as too long, not silent, so before any decoding."""
    path = tmp_path / "twenty_minutes_and_a_second.wav"
    sf.write(path, np.zeros(1000 * (20 * 60 + 1), dtype=np.int16), 1000, subtype="PCM_16")
    error = _refused(path, "too_long")
    assert "too long: 1201.00 s, the maximum is 1200 s" in str(error)


def test_exactly_twenty_minutes_passes_the_duration_check(tmp_path: Path) -> None:
    path = tmp_path / "twenty_minutes.wav"
    sf.write(path, np.zeros(1000 * 20 * 60, dtype=np.int16), 1000, subtype="PCM_16")
    assert probe_duration_s(path) == 1200.0
    _refused(path, "silent")  # it got past the duration check to the level check


def test_exactly_the_maximum_is_accepted(tmp_path: Path, write_click_track: ClickWriter) -> None:
    settings = Settings(max_duration_s=6.0)
    write_click_track("six_seconds.wav", bpm=120, duration_s=6.0, sr=22050)
    features = analyze_song(tmp_path / "six_seconds.wav", fps=30, settings=settings)
    assert features.n_frames == 180 and features.duration_s == 6.0
    y, sr = sf.read(tmp_path / "six_seconds.wav", dtype="float32")
    sf.write(tmp_path / "one_sample_more.wav", np.append(y, np.float32(0.0)), sr)
    _refused(tmp_path / "one_sample_more.wav", "too_long", settings)


def test_aac_of_exactly_the_maximum_is_accepted(tmp_path: Path, write_click_track: ClickWriter) -> None:
    """AAC decodes a few milliseconds longer than its header says; the header's duration is what counts."""
    if shutil.which("ffmpeg") is None:
        pytest.skip("ffmpeg is not installed: no AAC here")
    write_click_track("six_seconds.wav", bpm=120, duration_s=6.0, sr=44100)
    m4a = tmp_path / "six_seconds.m4a"
    subprocess.run(["ffmpeg", "-v", "error", "-i", str(tmp_path / "six_seconds.wav"), str(m4a)], check=True)
    assert probe_duration_s(m4a) == 6.0
    assert analyze_song(m4a, fps=30, settings=Settings(max_duration_s=6.0)).duration_s >= 6.0


def test_truncated_m4a_is_corrupt(tmp_path: Path, write_click_track: ClickWriter) -> None:
    if shutil.which("ffmpeg") is None:
        pytest.skip("ffmpeg is not installed: no AAC here")
    write_click_track("clicks.wav", bpm=120, duration_s=4.0, sr=44100)
    m4a = tmp_path / "clicks.m4a"
    subprocess.run(["ffmpeg", "-v", "error", "-i", str(tmp_path / "clicks.wav"), str(m4a)], check=True)
    m4a.write_bytes(m4a.read_bytes()[:3000])  # the index (moov) is at the end: now missing
    _refused(m4a, "corrupt_audio")


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("digital_silence.wav", lambda rng: np.zeros(22050 * 5, dtype=np.float32)),
        (
            "hiss_at_minus_70_dbfs.wav",
            lambda rng: rng.uniform(-(10**-3.5), 10**-3.5, 22050 * 5).astype(np.float32),
        ),
    ],
)
def test_silent(tmp_path: Path, name: str, make: Callable[[np.random.Generator], np.ndarray]) -> None:
    path = tmp_path / name
    sf.write(path, make(np.random.default_rng(3)), 22050, subtype="FLOAT")
    error = _refused(path, "silent")
    assert "silent" in str(error) and "dBFS" in str(error)


def test_no_beat_is_silent(tmp_path: Path) -> None:
    """A steady tone is loud enough but has nothing to dance to."""
    sr = 22050
    t = np.arange(sr * 8) / sr
    fade = np.minimum(1.0, t / 2.0)  # no sharp onset at the start either
    path = tmp_path / "steady_tone.wav"
    sf.write(path, (0.3 * fade * np.sin(2 * np.pi * 440.0 * t)).astype(np.float32), sr, subtype="FLOAT")
    assert "no beat" in str(_refused(path, "silent"))


def test_song_sha256_streams_the_file(tmp_path: Path, demo_song: Path) -> None:
    import hashlib

    assert song_sha256(demo_song) == hashlib.sha256(demo_song.read_bytes()).hexdigest()
    with pytest.raises(AudioError) as caught:
        song_sha256(tmp_path / "gone.ogg")
    assert caught.value.code == "file_not_found" and "gone.ogg" in str(caught.value)


def test_bad_files_do_not_disturb_good_ones(tmp_path: Path, demo_song: Path) -> None:
    """After every kind of failure, the next song still analyses (no state left behind)."""
    text = tmp_path / "notes.mp3"
    text.write_text("not audio")
    for path in (text, _corrupt_ogg(tmp_path, demo_song), tmp_path / "missing.wav"):
        with pytest.raises(AudioError):
            analyze_song(path, fps=30)
    copy = tmp_path / "good.ogg"
    shutil.copy(demo_song, copy)
    assert analyze_song(copy, fps=30).beat_times.size > 10


@pytest.mark.parametrize("fps", [0, -30, 29.97, "30"])
def test_bad_fps_is_a_parameter_error(demo_song: Path, fps: object) -> None:
    with pytest.raises(ParameterError, match="fps"):
        analyze_song(demo_song, fps=fps)  # type: ignore[arg-type]
