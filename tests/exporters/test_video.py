"""The shaded preview video: 720p H.264 of the mannequin with the song's excerpt muxed in (ffmpeg)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from choreo.cli.main import main
from choreo.errors import ParameterError
from choreo.pipeline import RenderOptions, dance_song
from exporters.video import VideoOptions, write_video

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_SONG = REPO_ROOT / "demo" / "Kevin_MacLeod_-_Vibe_Ace.ogg"

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg is not installed")


@pytest.fixture(scope="module")
def dance():  # noqa: ANN201 - (motion, song timing)
    danced = dance_song(DEMO_SONG, RenderOptions())
    return danced.motion, danced.generated.song


def _probe(path: Path) -> dict[str, dict]:
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    info = json.loads(out.stdout)
    return {s["codec_type"]: s for s in info["streams"]} | {"format": info["format"]}


def _frame(path: Path, at_s: float) -> np.ndarray:
    png = subprocess.run(
        ["ffmpeg", "-v", "error", "-ss", f"{at_s}", "-i", str(path), "-frames:v", "1", "-f", "image2pipe",
         "-vcodec", "png", "-"],
        capture_output=True,
        check=True,
    ).stdout  # fmt: skip
    return imread(io.BytesIO(png), format="png")[..., :3]


def _mono(path: Path, *extra: str) -> np.ndarray:
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", *extra, "-i", str(path), "-ac", "1", "-ar", "8000", "-f", "f32le", "-"],
        capture_output=True,
        check=True,
    ).stdout
    return np.frombuffer(raw, dtype=np.float32)


def test_the_video_is_720p_h264_with_the_songs_excerpt_as_aac(dance, tmp_path: Path) -> None:  # noqa: ANN001
    motion, song = dance
    path = write_video(
        motion,
        tmp_path / "clip.mp4",
        audio_path=DEMO_SONG,
        beat_times=song.beat_times,
        downbeat_times=song.downbeat_times,
        options=VideoOptions(start_s=20.0, duration_s=4.0),
    )
    streams = _probe(path)
    video, audio = streams["video"], streams["audio"]
    assert (video["codec_name"], video["width"], video["height"]) == ("h264", 1280, 720)
    assert audio["codec_name"] == "aac"
    assert float(streams["format"]["duration"]) == pytest.approx(4.0, abs=0.1)
    assert int(video["nb_frames"]) == 4 * 24
    # The sound is the song from 20 s on: it matches the song's own samples there, not those at 0 s.
    ours = _mono(path)
    theirs = _mono(DEMO_SONG, "-ss", "20", "-t", "4")
    elsewhere = _mono(DEMO_SONG, "-ss", "0", "-t", "4")
    n = min(len(ours), len(theirs), len(elsewhere)) - 400
    best = max(np.corrcoef(ours[lag : lag + n], theirs[:n])[0, 1] for lag in range(0, 400, 4))
    worst = max(np.corrcoef(ours[lag : lag + n], elsewhere[:n])[0, 1] for lag in range(0, 400, 4))
    assert best > 0.9 and worst < 0.5, (best, worst)


def test_the_mannequin_is_shaded_and_moves(dance, tmp_path: Path) -> None:  # noqa: ANN001
    motion, song = dance
    path = write_video(
        motion,
        tmp_path / "clip.mp4",
        audio_path=None,
        beat_times=song.beat_times,
        options=VideoOptions(duration_s=3),
    )
    assert "audio" not in _probe(path)
    first, later = _frame(path, 0.5), _frame(path, 2.5)
    # The figure is the warm-coloured part (red well above blue); the floor and the sky are grey-blue.
    figure = (first[..., 0] - first[..., 2]) > 0.12
    assert 0.005 < figure.mean() < 0.2, figure.mean()
    brightness = first[figure].mean(axis=-1)
    assert brightness.std() > 0.05 and np.ptp(brightness) > 0.3, "flat colour: not shaded"
    assert (np.abs(first - later).sum(axis=-1) > 0.1).mean() > 0.002, "the dance did not move"


def test_a_bad_excerpt_or_size_is_refused(dance, tmp_path: Path) -> None:  # noqa: ANN001
    motion, song = dance
    with pytest.raises(ParameterError, match="past the dance's end"):
        write_video(
            motion, tmp_path / "x.mp4", audio_path=None, beat_times=song.beat_times,
            options=VideoOptions(start_s=motion.duration_s + 1),
        )  # fmt: skip
    with pytest.raises(ParameterError, match="at least 1280x720"):
        VideoOptions(width=640, height=360)
    with pytest.raises(ParameterError, match="video_length_s"):
        RenderOptions.parse(formats=("mp4",), video_length_s=0)


def test_choreo_render_formats_mp4_writes_the_video_with_sound(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    code = main(
        ["render", str(DEMO_SONG), "-o", str(tmp_path), "--formats", "mp4,bvh", "--video-length", "2"]
    )
    assert code == 0, capsys.readouterr().err
    streams = _probe(tmp_path / f"{DEMO_SONG.stem}.mp4")
    assert streams["video"]["height"] == 720 and "audio" in streams
    assert float(streams["format"]["duration"]) == pytest.approx(2.0, abs=0.1)
    summary = json.loads((tmp_path / f"{DEMO_SONG.stem}.json").read_text())
    assert summary["files"]["mp4"] == f"{DEMO_SONG.stem}.mp4"
    assert (
        main(["render", str(DEMO_SONG), "-o", str(tmp_path), "--formats", "mp4", "--video-length", "x"]) == 2
    )
    assert "video_length_s" in capsys.readouterr().err
