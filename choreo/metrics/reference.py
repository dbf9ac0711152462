"""The retimed ground-truth mocap that every generated number is compared with.

``choreo prepare-data`` writes ``reference.npz``: held-out mocap clips, each
time-warped onto a window of a held-out song so that its kinematic beats land
on the song's beats, at 30 and 60 fps. Its arrays (all rows of all clips
stacked, with offsets and lengths per clip):

* ``motion_{fps}fps`` ``[frames, 75]`` float: SMPL axis-angle rotations then root translation;
* ``offsets_{fps}fps``, ``lengths_{fps}fps`` ``[clips]`` int: each clip's rows;
* ``clip``, ``song`` ``[clips]`` str: the clip's name and the song's file name;
* ``song_start_frame_{fps}fps`` ``[clips]`` int: the clip's frame 0 is song time
  ``song_start_frame / fps``;
* ``style`` ``[clips]`` int indexing ``styles`` ``[styles]`` str.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from choreo.errors import ParameterError
from choreo.metrics.descriptor import windowed_descriptors
from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion
from choreo.motion.resample import resample
from choreo.postprocess.ground import align_floor

__all__ = ["MIN_STYLE_CLIPS", "ReferenceDance", "load_reference", "load_style_windows"]


@dataclass(frozen=True)
class ReferenceDance:
    """One retimed mocap clip on its song window."""

    clip: str
    style: str
    song: str
    song_start_s: float
    motion: Motion

    def beats_in_clip(self, song_beat_times_s: np.ndarray) -> np.ndarray:
        """The song's beat times moved onto the clip's clock, keeping those inside the clip."""
        times = np.asarray(song_beat_times_s, dtype=np.float64) - self.song_start_s
        return times[(times >= 0.0) & (times < self.motion.duration_s)]


def load_reference(path: Path, *, fps: int) -> list[ReferenceDance]:
    """Read every clip of ``reference.npz`` at ``fps``.

    Parameters
    ----------
    path : the ``reference.npz`` file
    fps : 30 or 60, the rate the file holds

    Raises
    ------
    ParameterError
        If the file is missing, unreadable, or lacks the arrays for ``fps``; the
        message names the file and what is missing.
    """
    path = Path(path)
    if not path.is_file():
        raise ParameterError(f"--reference {path}: no such file")
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise ParameterError(f"--reference {path}: not a readable .npz file ({exc})") from None
    with data:
        needed = [f"motion_{fps}fps", f"offsets_{fps}fps", f"lengths_{fps}fps", f"song_start_frame_{fps}fps"]
        needed += ["clip", "song"]
        missing = [key for key in needed if key not in data.files]
        if missing:
            raise ParameterError(f"--reference {path}: no {', '.join(missing)} (has {', '.join(data.files)})")
        starts = data[f"song_start_frame_{fps}fps"]
        clips, songs = data["clip"], data["song"]
        styles = data["styles"][data["style"]] if {"style", "styles"} <= set(data.files) else None
        dances = []
        for i, motion in enumerate(_clips(data, fps)):
            dances.append(
                ReferenceDance(
                    clip=str(clips[i]),
                    style=str(styles[i]) if styles is not None else "",
                    song=str(songs[i]),
                    song_start_s=float(starts[i]) / fps,
                    motion=motion,
                )
            )
    return dances


def _clips(data: np.lib.npyio.NpzFile, fps: int) -> list[Motion]:
    frames = data[f"motion_{fps}fps"].astype(np.float64)
    offsets, lengths = data[f"offsets_{fps}fps"], data[f"lengths_{fps}fps"]
    return [
        Motion.from_array(frames[int(offset) : int(offset) + int(length)], fps=fps)
        for offset, length in zip(offsets, lengths, strict=True)
    ]


MIN_STYLE_CLIPS = 2
"""Styles recorded in fewer source clips are left out of the style centroids: one clip is not a style
(the single 15 s whirl clip; the phrase library merges it into its nearest style)."""


def load_style_windows(path: Path, *, fps: int, window_s: float) -> dict[str, np.ndarray]:
    """Descriptors of ``window_s`` windows of every sequence of a training file, per style.

    ``path`` is ``train.npz`` from ``choreo prepare-data`` (arrays ``motion``,
    ``offsets``, ``lengths``, ``style``, ``styles``, ``clip``, ``fps``): mocap never
    held out, so the held-out clips and the dances are classified by centroids that
    have not seen them. Sequences are resampled to ``fps`` first; styles of fewer
    than :data:`MIN_STYLE_CLIPS` source clips are left out.

    Raises
    ------
    ParameterError
        If the file is missing, unreadable or lacks those arrays.
    """
    path = Path(path)
    if not path.is_file():
        raise ParameterError(f"--style-reference {path}: no such file")
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise ParameterError(f"--style-reference {path}: not a readable .npz file ({exc})") from None
    with data:
        missing = [
            k for k in ("motion", "offsets", "lengths", "style", "styles", "fps") if k not in data.files
        ]
        if missing:
            raise ParameterError(
                f"--style-reference {path}: no {', '.join(missing)} (has {', '.join(data.files)})"
            )
        frames = data["motion"].astype(np.float64)
        styles = data["styles"][data["style"]]
        clips_of = {
            str(s): {str(c) for c, t in zip(data["clip"], styles, strict=True) if t == s} for s in set(styles)
        }
        source_fps = int(data["fps"])
        windows: dict[str, list[np.ndarray]] = {}
        for offset, length, style in zip(data["offsets"], data["lengths"], styles, strict=True):
            if len(clips_of[str(style)]) < MIN_STYLE_CLIPS:
                continue
            motion = Motion.from_array(frames[int(offset) : int(offset) + int(length)], fps=source_fps)
            if source_fps != fps:
                motion = resample(motion, fps)
            found = windowed_descriptors(joint_positions(align_floor(motion)), fps=fps, window_s=window_s)
            if found.shape[0]:
                windows.setdefault(str(style), []).append(found)
    return {style: np.concatenate(chunks) for style, chunks in windows.items()}
