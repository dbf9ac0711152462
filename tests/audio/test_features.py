"""Features: the 35-column layout, frame counts, and the timing proof on click tracks."""

from __future__ import annotations

import io
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from choreo.audio import FEATURE_DIM, MusicFeatures, analyze_song, extract_features, feature_sr, load_audio
from choreo.audio.music_features import (
    BEAT_COLUMN,
    CHROMA_COLUMNS,
    MFCC_COLUMNS,
    ONSET_ENVELOPE_COLUMN,
    ONSET_PEAK_COLUMN,
)
from choreo.contracts.timing import frames_for_duration
from choreo.errors import AudioError, ParameterError

from .conftest import ClickWriter, click_track, clicks_at, pop_bars


@pytest.mark.parametrize(
    ("bpm", "fps", "offset_s", "sr_in"),
    [
        (120.0, 30, 0.37, 44100),
        (97.0, 30, 0.50, 22050),
        (133.0, 60, 0.41, 48000),
        (150.0, 25, 0.23, 44100),
        (88.0, 24, 0.61, 32000),
        (128.0, 50, 0.30, 44100),
    ],
)
def test_beats_land_on_the_clicks(
    tmp_path: Path, write_click_track: ClickWriter, bpm: float, fps: int, offset_s: float, sr_in: int
) -> None:
    """The timing proof: frame k is time k / fps, through decoding, resampling and framing."""
    clicks_s = write_click_track("clicks.wav", bpm=bpm, duration_s=16.0, sr=sr_in, offset_s=offset_s)
    features = analyze_song(tmp_path / "clicks.wav", fps=fps)
    click_frames = clicks_s * fps

    beat_frames = np.flatnonzero(features.features[:, BEAT_COLUMN])
    np.testing.assert_allclose(features.beat_times, beat_frames / fps)
    assert beat_frames.size == click_frames.size, f"{beat_frames.size} beats for {click_frames.size} clicks"
    offsets = beat_frames - click_frames
    assert np.abs(offsets).max() <= 1.0, f"beats off their clicks by up to {np.abs(offsets).max():.2f} frames"
    assert abs(offsets.mean()) < 0.5, f"beats are late on average by {offsets.mean():.2f} frames"

    peak_frames = np.flatnonzero(features.features[:, ONSET_PEAK_COLUMN])
    nearest_peak = np.abs(peak_frames[np.newaxis, :] - click_frames[:, np.newaxis]).min(axis=1)
    assert nearest_peak.max() <= 1.0, "a click has no onset peak within one frame"

    assert features.tempo_bpm == pytest.approx(bpm, rel=1e-3)
    accents = click_frames[::4]
    assert features.downbeat_times.size == accents.size
    assert np.abs(features.downbeat_times * fps - accents).max() <= 1.0, "downbeats are not on the accents"


@pytest.mark.parametrize("fmt", ["mp3", "opus", "ogg", "m4a"])
def test_beats_land_on_the_clicks_through_lossy_codecs(tmp_path: Path, fmt: str) -> None:
    """Encoder delay and priming must not shift the frames: each decoder trims its own padding."""
    sr_in = 48000
    y, clicks_s = click_track(bpm=112, duration_s=12.0, sr=sr_in, offset_s=0.44)
    path = tmp_path / f"clicks.{fmt}"
    if fmt == "m4a":
        if shutil.which("ffmpeg") is None:
            pytest.skip("ffmpeg is not installed: no AAC here")
        sf.write(tmp_path / "clicks.wav", y, sr_in)
        subprocess.run(["ffmpeg", "-v", "error", "-i", str(tmp_path / "clicks.wav"), str(path)], check=True)
    else:
        subtype = {"mp3": "MPEG_LAYER_III", "opus": "OPUS", "ogg": "VORBIS"}[fmt]
        sf.write(path, y, sr_in, format="MP3" if fmt == "mp3" else "OGG", subtype=subtype)
    features = analyze_song(path, fps=30)
    beat_frames = np.flatnonzero(features.features[:, BEAT_COLUMN])
    assert beat_frames.size == clicks_s.size
    assert np.abs(beat_frames - clicks_s * 30).max() <= 1.0


def test_a_song_that_starts_loud_has_no_beat_at_the_window_edge() -> None:
    """The STFT's first frames are half zero padding: their rise in level is not an onset."""
    sr = feature_sr(30)
    clicks, click_times_s = click_track(bpm=120, duration_s=8.0, sr=sr, offset_s=0.5)
    t = np.arange(clicks.size) / sr
    pad = 0.2 * sum(
        np.sin(2 * np.pi * 110.0 * h * t) / h for h in range(1, 64)
    )  # broadband, loud from sample 0
    features = extract_features(clicks + pad.astype(np.float32), sr, fps=30)
    onset = features.features[:, ONSET_ENVELOPE_COLUMN]
    first_click = round(click_times_s[0] * 30)
    assert onset[: first_click - 2].max() < 0.1 * onset[first_click], (
        "the window filling up counted as an onset"
    )
    assert features.beat_times[0] == pytest.approx(click_times_s[0], abs=1 / 30)


@pytest.mark.parametrize("bpm", [84.0, 104.0])
def test_tempo_and_downbeats_of_a_drum_loop(bpm: float) -> None:
    """Kick on 1 and 3, snare on 2 and 4: the chord change marks beat 1, and the tempo is not halved."""
    sr = feature_sr(30)
    y, bar_times_s = pop_bars(bpm=bpm, bars=10, sr=sr)
    features = extract_features(y, sr, fps=30)
    assert features.tempo_bpm == pytest.approx(bpm, rel=1e-3)
    downbeats = features.downbeat_times[features.downbeat_times < bar_times_s[-1] + 1.0]
    assert downbeats.size == bar_times_s.size
    assert np.abs(downbeats - bar_times_s).max() <= 1 / 30


def _assert_within(found_s: np.ndarray, expected_s: np.ndarray, what: str, tolerance_s: float = 0.07) -> None:
    """Every expected time has one found within ``tolerance_s``, and every found time an expected one."""
    gaps = np.abs(found_s[:, None] - expected_s[None, :])
    assert gaps.min(axis=0).max() <= tolerance_s, f"a {what} has nothing within {tolerance_s * 1000:.0f} ms"
    assert gaps.min(axis=1).max() <= tolerance_s, f"a found {what} is off every true one"
    assert found_s.size == expected_s.size, f"{found_s.size} {what}s found for {expected_s.size}"


def test_beats_and_downbeats_follow_a_tempo_change() -> None:
    """16 bars at 100 BPM, then 16 at 140: one global period would drift off half the song."""
    sr = feature_sr(30)
    slow = 0.5 + np.arange(64) * 0.6
    clicks_s = np.concatenate([slow, slow[-1] + (1 + np.arange(64)) * 60.0 / 140.0])
    y = clicks_at(clicks_s, duration_s=float(clicks_s[-1] + 1.0), sr=sr)
    features = extract_features(y, sr, fps=30)
    _assert_within(features.beat_times, clicks_s, "beat")
    _assert_within(features.downbeat_times, clicks_s[::4], "downbeat")


def test_beats_and_downbeats_of_a_waltz() -> None:
    """3/4 at 150 BPM, a bass thump on every bar's first beat: three beats a bar, not four or one."""
    sr = feature_sr(30)
    clicks_s = 0.5 + np.arange(96) * 0.4
    y = clicks_at(clicks_s, duration_s=float(clicks_s[-1] + 1.0), sr=sr, accent_every=3)
    features = extract_features(y, sr, fps=30)
    _assert_within(features.beat_times, clicks_s, "beat")
    _assert_within(features.downbeat_times, clicks_s[::3], "downbeat")


@pytest.mark.parametrize("fps", [30, 60])
@pytest.mark.parametrize(
    ("duration_s", "sr_in"), [(3.0, 44100), (3.01, 44100), (7.3333, 22050), (2.999977, 48000)]
)
def test_frame_count_is_duration_times_fps_rounded_up(
    tmp_path: Path, fps: int, duration_s: float, sr_in: int
) -> None:
    y, _ = click_track(bpm=120, duration_s=duration_s, sr=sr_in)
    path = tmp_path / "song.wav"
    sf.write(path, y, sr_in, subtype="FLOAT")
    sr = feature_sr(fps)
    features = extract_features(load_audio(path, sr=sr), sr, fps=fps)
    exact = -(-y.size * fps // sr_in)  # ceil(samples / sr_in * fps) in integers
    assert features.n_frames == exact == math.ceil(y.size / sr_in * fps - 1e-9)
    assert features.n_frames == frames_for_duration(features.duration_s, fps)
    assert features.duration_s == pytest.approx(y.size / sr_in, abs=1 / sr)


def test_layout_on_a_real_song(demo_song: Path) -> None:
    features = analyze_song(demo_song, fps=30)
    table = features.features
    assert table.shape == (features.n_frames, FEATURE_DIM) and table.dtype == np.float32
    assert np.isfinite(table).all()
    assert features.n_frames == frames_for_duration(features.duration_s, 30)
    assert (table[:, ONSET_ENVELOPE_COLUMN] >= 0).all()
    for column in (ONSET_PEAK_COLUMN, BEAT_COLUMN):
        assert set(np.unique(table[:, column])) <= {0.0, 1.0}
    chroma = table[:, CHROMA_COLUMNS]
    assert chroma.min() >= 0 and np.allclose(chroma.max(axis=1)[100:-100], 1.0)  # normalised per frame
    assert np.array_equal(
        np.flatnonzero(table[:, BEAT_COLUMN]), np.rint(features.beat_times * 30).astype(int)
    )
    assert np.all(np.diff(features.beat_times) > 0)
    assert set(features.downbeat_times) <= set(features.beat_times)
    assert 60 <= features.tempo_bpm <= 200
    beat_period_s = np.median(np.diff(features.beat_times))
    assert features.tempo_bpm == pytest.approx(60 / beat_period_s, rel=0.02)


def test_one_stft_gives_librosa_s_mfcc_and_chroma_stft(demo_song: Path) -> None:
    """Columns 1-32 are librosa's ``mfcc`` and ``chroma_stft`` of the same audio, frame for frame."""
    import librosa

    sr = feature_sr(30)
    y = load_audio(demo_song, sr=sr)[: sr * 20]
    table = extract_features(y, sr, fps=30).features
    n = table.shape[0]
    mfcc = librosa.feature.mfcc(y=y, sr=sr, n_mfcc=20, n_fft=2048, hop_length=512)[:, :n].T
    chroma = librosa.feature.chroma_stft(y=y, sr=sr, n_fft=2048, hop_length=512, tuning=0.0)[:, :n].T
    np.testing.assert_allclose(table[:, MFCC_COLUMNS], mfcc, rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(table[:, CHROMA_COLUMNS], chroma, atol=1e-5)


def test_sample_rate_must_match_fps() -> None:
    y = np.zeros(15360, dtype=np.float32)
    with pytest.raises(ParameterError, match="15360"):
        extract_features(y, 22050, fps=30)
    with pytest.raises(ParameterError, match="fps"):
        feature_sr(0)


@pytest.mark.parametrize(
    "y", [np.zeros(0, np.float32), np.zeros((100, 2), np.float32), np.array([0.0, np.nan] * 600, np.float32)]
)
def test_bad_audio_arrays_are_parameter_errors(y: np.ndarray) -> None:
    with pytest.raises(ParameterError, match="y "):
        extract_features(y, feature_sr(30), fps=30)


def _small_features(rng: np.random.Generator) -> MusicFeatures:
    return MusicFeatures(
        fps=30,
        features=rng.normal(size=(61, FEATURE_DIM)).astype(np.float32),
        beat_times=np.array([0.5, 1.0, 1.5]),
        downbeat_times=np.array([0.5]),
        tempo_bpm=120.0,
        duration_s=2.01,
    )


def test_npz_round_trip_through_a_path_and_a_file_object(tmp_path: Path, rng: np.random.Generator) -> None:
    original = _small_features(rng)
    path = tmp_path / "features.bin"
    original.to_npz(path)
    assert path.exists() and not (tmp_path / "features.bin.npz").exists()
    buffer = io.BytesIO()
    original.to_npz(buffer)
    buffer.seek(0)
    for copy in (MusicFeatures.from_npz(path), MusicFeatures.from_npz(buffer)):
        np.testing.assert_array_equal(copy.features, original.features)
        np.testing.assert_array_equal(copy.beat_times, original.beat_times)
        np.testing.assert_array_equal(copy.downbeat_times, original.downbeat_times)
        assert (copy.fps, copy.tempo_bpm, copy.duration_s, copy.n_frames) == (30, 120.0, 2.01, 61)


def test_from_npz_refuses_other_files(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip file")
    other = tmp_path / "other.npz"
    np.savez(other, weights=np.zeros(3))
    for path in (garbage, other):
        with pytest.raises(AudioError) as caught:
            MusicFeatures.from_npz(path)
        assert caught.value.code == "corrupt_features" and path.name in str(caught.value)


def test_frame_count_must_match_the_duration(rng: np.random.Generator) -> None:
    with pytest.raises(ParameterError, match="ceil"):
        MusicFeatures(
            fps=30,
            features=rng.normal(size=(60, FEATURE_DIM)).astype(np.float32),
            beat_times=np.zeros(0),
            downbeat_times=np.zeros(0),
            tempo_bpm=0.0,
            duration_s=2.01,
        )
