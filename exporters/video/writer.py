"""``write_video``: a shaded preview video of a dance with its song, 1280x720 H.264 with AAC audio.

:func:`preview_frames` says what each frame shows (its song time, the pose, the follow camera of
:mod:`~exporters.video.follow`); the frames are drawn by
:class:`~exporters.video.painter.FramePainter` and piped into ffmpeg
(:func:`~exporters.video.muxer.mux_mp4`) one by one, so a whole song's pictures never sit in
memory; ``bench/video.py`` measures the whole write on one core.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from choreo.errors import ParameterError
from choreo.motion import Motion, joint_positions
from exporters.video.camera import Camera
from exporters.video.follow import CameraPath, follow_path
from exporters.video.muxer import ffmpeg_path, mux_mp4
from exporters.video.options import VideoOptions
from exporters.video.painter import FramePainter

__all__ = ["PreviewFrames", "preview_frames", "write_video"]


def _joint_track(motion: Motion, times: np.ndarray) -> np.ndarray:
    """Joint positions at ``times`` (seconds), linearly between the motion's frames: ``[T, 24, 3]``."""
    positions = joint_positions(motion)
    where = np.clip(times * motion.fps, 0, motion.n_frames - 1)
    low = np.floor(where).astype(int)
    high = np.minimum(low + 1, motion.n_frames - 1)
    share = (where - low)[:, None, None]
    return positions[low] * (1 - share) + positions[high] * share


@dataclass(frozen=True)
class PreviewFrames:
    """What each frame of a preview shows.

    Parameters
    ----------
    span : (start, end) song seconds of the excerpt
    times : np.ndarray [shape=(T,)], each frame's song time, seconds
    joints : np.ndarray [shape=(T, 24, 3)], the pose at each, world metres
    path : the follow camera of each frame
    """

    span: tuple[float, float]
    times: np.ndarray
    joints: np.ndarray
    path: CameraPath


def preview_frames(motion: Motion, options: VideoOptions = VideoOptions()) -> PreviewFrames:
    """The frames of the excerpt ``options`` asks for: their times, poses and cameras.

    Raises
    ------
    ParameterError
        When the excerpt starts past the dance's end.
    """
    if options.start_s >= motion.duration_s:
        raise ParameterError(
            f"excerpt start {options.start_s} s is past the dance's end ({motion.duration_s:.1f} s)"
        )
    end_s = (
        motion.duration_s
        if options.duration_s is None
        else min(motion.duration_s, options.start_s + options.duration_s)
    )
    times = np.arange(options.start_s, end_s, 1.0 / options.fps)
    joints = _joint_track(motion, times)
    path = follow_path(Camera.three_quarter(options.width, options.height), joints[:, 0, [0, 2]], options.fps)
    return PreviewFrames(span=(options.start_s, end_s), times=times, joints=joints, path=path)


def write_video(
    motion: Motion,
    path: Path,
    *,
    audio_path: Path | None,
    beat_times: np.ndarray,
    downbeat_times: np.ndarray | None = None,
    options: VideoOptions = VideoOptions(),
) -> Path:
    """Write an MP4 of the dance from ``options.start_s`` for ``options.duration_s`` (or to the end).

    Parameters
    ----------
    motion : the dance, on the SMPL skeleton
    path : the ``.mp4`` to write
    audio_path : the song, cut to the same span and muxed in (AAC); None: a silent video
    beat_times, downbeat_times : np.ndarray [shape=(K,)], song seconds of the beats and the bars,
        marked on the beat strip (the lamp flashes on the beats)
    options : the excerpt, the size and the rate

    Returns
    -------
    Path
        ``path``, written.

    Raises
    ------
    ExportError
        When ffmpeg is missing or fails, naming why.
    ParameterError
        When the excerpt starts past the dance's end.
    """
    ffmpeg = ffmpeg_path()
    frames = preview_frames(motion, options)
    start_s, end_s = frames.span
    painter = FramePainter(
        frames.path,
        motion.skeleton.parents,
        np.asarray(beat_times),
        np.asarray([] if downbeat_times is None else downbeat_times, dtype=float),
        frames.span,
    )

    def pictures() -> Iterator[tuple[np.ndarray, ...]]:
        for frame, (joints, t) in enumerate(zip(frames.joints, frames.times, strict=True)):
            painter.paint(frame, joints, float(t))
            yield painter.planes

    return mux_mp4(
        pictures(),
        Path(path),
        ffmpeg=ffmpeg,
        options=options,
        audio_path=audio_path,
        audio_start_s=start_s,
        audio_length_s=end_s - start_s,
    )
