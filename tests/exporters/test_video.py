"""The shaded preview video: 720p H.264 of the mannequin with the song's excerpt muxed in (ffmpeg),
filmed by a camera that follows the dancer over the floor."""

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
from choreo.motion import Motion, joint_positions
from choreo.motion.skeleton import SMPL
from choreo.pipeline import RenderOptions, dance_song
from exporters.mannequin import mannequin_capsules
from exporters.video import VideoOptions, write_video
from exporters.video.backdrop import FloorCanvas, backdrop
from exporters.video.camera import Camera
from exporters.video.follow import follow_path, spring_smooth
from exporters.video.writer import PreviewFrames, preview_frames
from exporters.video.yuv import rgb_to_yuv420

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_SONG = REPO_ROOT / "demo" / "Kevin_MacLeod_-_Vibe_Ace.ogg"
MUSIC = REPO_ROOT.parent / "shared" / "data" / "music" / "gpl"
TRAVELLING_SONGS = {
    "freeway": (MUSIC / "hedgewars__Music__Freeway.ogg", "salsa"),  # 3:45: the pelvis ranges over 6 m
    "golf": (MUSIC / "hedgewars__Music__Golf.ogg", "breakdance"),  # 4:06
}
"""Whole songs whose dances travel far, in the styles that travel (from the shared music; skipped where it is
absent): the style is named, so the dance does not change when ``auto`` learns to choose another."""

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


@pytest.fixture(scope="module", params=["demo", *TRAVELLING_SONGS])
def whole_dance(request) -> tuple[str, Motion]:  # noqa: ANN001
    song, style = (DEMO_SONG, "auto") if request.param == "demo" else TRAVELLING_SONGS[request.param]
    if not song.is_file():
        pytest.skip(f"shared music not found: {song}")
    return request.param, dance_song(song, RenderOptions(style=style)).motion


def _figure_boxes(frames: PreviewFrames, cameras: list[Camera]) -> np.ndarray:
    """Each frame's pixel box (x0, y0, x1, y1) of the mannequin's capsules as ``cameras`` see them."""
    pieces = mannequin_capsules()
    parents = SMPL.parents
    boxes = []
    for joints, camera in zip(frames.joints, cameras, strict=True):
        ends = []
        for piece in pieces:
            a = joints[piece.start]
            if piece.end >= 0:
                b = joints[piece.end]
            else:
                direction = a - joints[parents[piece.start]]
                b = a + direction / np.linalg.norm(direction) * piece.tip_length_m
            r = piece.radius_m * camera.scale
            for point in camera.project(np.stack([a, b]))[:, :2]:
                ends.append([*(point - r), *(point + r)])
        ends = np.array(ends)
        boxes.append([*ends[:, :2].min(axis=0), *ends[:, 2:].max(axis=0)])
    return np.array(boxes)


def _inside(boxes: np.ndarray, camera: Camera) -> np.ndarray:
    """Whether each box lies inside the picture above the beat strip."""
    return (
        (boxes[:, 0] >= 0)
        & (boxes[:, 1] >= 0)
        & (boxes[:, 2] < camera.width)
        & (boxes[:, 3] < camera.picture_height)
    )


def test_the_follow_camera_keeps_the_whole_figure_in_the_picture(whole_dance: tuple[str, Motion]) -> None:
    name, motion = whole_dance
    frames = preview_frames(motion, VideoOptions(duration_s=None))
    path = frames.path
    followed = _figure_boxes(frames, [path.camera(i) for i in range(len(path))])
    cut = ~_inside(followed, path.base)
    assert not cut.any(), f"{cut.sum()} frames cut the figure"
    # With a margin: the figure keeps away from the edges, so a few centimetres more would not cut it.
    margin = 0.15 * path.base.scale
    assert followed[:, 0].min() > margin and followed[:, 2].max() < path.base.width - margin
    assert followed[:, 1].min() > margin and followed[:, 3].max() < path.base.picture_height - margin
    if name == "freeway":  # the check can fail: a camera that stays put loses this dancer
        fixed = Camera.three_quarter(path.base.width, path.base.height)
        assert not _inside(_figure_boxes(frames, [fixed] * len(path)), fixed).all()


def test_the_follow_camera_moves_smoothly_within_half_a_pixel_of_the_smoothed_root(
    whole_dance: tuple[str, Motion],
) -> None:
    fps = 24
    frames = preview_frames(whole_dance[1], VideoOptions(duration_s=None, fps=fps))
    path = frames.path
    looks = np.array([path.camera(i).look_at for i in range(len(path))])
    root = frames.joints[:, 0, [0, 2]]
    smooth = spring_smooth(root, fps)
    assert np.allclose(looks[:, 1], 1.0)
    # Snapping to whole pixels moves the camera by at most half a pixel on the picture.
    snapped = path.base.shift_px(looks[:, [0, 2]] - smooth)
    assert np.abs(snapped).max() <= 0.5 + 1e-9
    accel = np.linalg.norm(np.diff(smooth, 2, axis=0), axis=1) * fps**2
    root_accel = np.linalg.norm(np.diff(root, 2, axis=0), axis=1) * fps**2
    assert accel.max() < 3.0 and root_accel.max() > 10.0, (accel.max(), root_accel.max())


def test_a_critically_damped_spring_keeps_still_and_takes_up_a_step_without_overshoot() -> None:
    still = spring_smooth(np.full((90, 2), 1.5), 30)
    assert np.allclose(still, 1.5)
    step = np.repeat([[0.0], [1.0]], 150, axis=0)
    smooth = spring_smooth(step, 30, halflife_s=0.5)[:, 0]
    assert np.all(np.diff(smooth) >= -1e-12) and smooth.min() >= -1e-9 and smooth.max() <= 1 + 1e-9
    assert smooth[150] == pytest.approx(0.5, abs=0.02)  # forward and back: no lag at the step
    with pytest.raises(ParameterError, match="positive"):
        spring_smooth(step, 0)
    with pytest.raises(ParameterError, match="root_xz"):
        follow_path(Camera.three_quarter(1280, 720), np.zeros((0, 2)), 24)


def test_each_frames_floor_is_the_canvas_crop_of_what_its_camera_sees() -> None:
    base = Camera.three_quarter(1280, 720)
    walk = np.stack([np.linspace(0, 2.5, 48), np.linspace(0, -1.3, 48)], axis=1)  # 2 s across the floor
    path = follow_path(base, walk, 24)
    canvas = FloorCanvas(path)
    rgb = np.zeros((720, 1280, 3), dtype=np.uint8)
    planes = rgb_to_yuv420(rgb)
    origins = {tuple(int(o) % 2 for o in canvas.origin(i)) for i in range(len(path))}
    assert len(origins) == 4, "the walk should meet every parity of crop origin"
    h = base.picture_height
    for frame in (0, 17, 30, 47):
        camera = path.camera(frame)
        canvas.paint(frame, rgb, planes)  # the whole picture, RGB and planes
        seen = backdrop(
            camera, floor_centre=path.floor_centre, path_radius_m=path.path_radius_m, sky_rows=(0, 719)
        )
        # The floor is exact; the sky's gradient is the canvas's, a few rows off: compare the floor.
        floor = camera.floor_points()[:h]
        near = np.hypot(floor[..., 0] - path.floor_centre[0], floor[..., 2] - path.floor_centre[1]) < 5
        drawn = (np.clip(seen[:h], 0, 1) * 255).astype(np.uint8)
        assert np.abs(rgb[:h].astype(int) - drawn)[near].max() <= 1
        y, u, v = rgb_to_yuv420(rgb[:h])
        assert np.array_equal(planes[0][:h], y)
        assert np.array_equal(planes[1][: h // 2], u) and np.array_equal(planes[2][: h // 2], v)
    first, last = (canvas.origin(i) for i in (0, 47))
    assert abs(last[1] - first[1]) > 300, "the floor's picture moves under the followed dancer"


def test_the_video_of_a_travelling_dance_shows_the_figure_away_from_the_edges(tmp_path: Path) -> None:
    song, style = TRAVELLING_SONGS["freeway"]
    if not song.is_file():
        pytest.skip(f"shared music not found: {song}")
    danced = dance_song(song, RenderOptions(style=style))
    motion = danced.motion
    root = joint_positions(motion)[:, 0]
    far = float(np.argmax(np.hypot(root[:, 0], root[:, 2]))) / motion.fps  # where it is farthest out
    start = max(0.0, far - 6)
    path = write_video(
        motion,
        tmp_path / "far.mp4",
        audio_path=None,
        beat_times=danced.generated.song.beat_times,
        options=VideoOptions(start_s=start, duration_s=12),
    )
    for at in (1.0, 4.0, 6.0, 8.0, 11.0):
        picture = _frame(path, at)[: 720 - 34]
        figure = (picture[..., 0] - picture[..., 2]) > 0.12
        figure[:60, :60] = False  # the beat lamp
        assert figure.mean() > 0.005, f"no figure at {start + at:.1f} s"
        rows, cols = np.flatnonzero(figure.any(axis=1)), np.flatnonzero(figure.any(axis=0))
        assert rows[0] > 10 and rows[-1] < figure.shape[0] - 10, (start + at, rows[[0, -1]])
        assert cols[0] > 10 and cols[-1] < figure.shape[1] - 10, (start + at, cols[[0, -1]])
