"""Every file a render writes, by file extension, behind one signature.

:data:`WRITERS` maps each format to a writer ``(motion, path, request) -> path``, and :func:`write_file`
looks one up; an :class:`ExportRequest` carries everything any writer needs beside the motion,
so a caller builds one request and writes each format from it:

- ``bvh``: the dance as BVH (:func:`exporters.bvh.write_bvh`);
- ``fbx``: the dance as binary FBX 7.4, with the mannequin (:func:`exporters.fbx.write_fbx`);
- ``glb``: the dance as binary glTF, with the mannequin (:func:`exporters.gltf.write_glb`);
- ``gif``: silent stick figures of the first 20 s (:func:`exporters.gif.write_gif`);
- ``mp4``: the shaded mannequin with the song (:func:`exporters.video.write_video`);
- ``png``: the contact sheet at the beats (:func:`exporters.contact_sheet.write_contact_sheet`).

Each writer imports its module when its format is written, so importing the registry loads
neither matplotlib, nor the ffmpeg muxer, nor the FBX writer.

Examples
--------
>>> request = ExportRequest(rig="mixamo", provenance=provenance, beat_times=song.beat_times)  # doctest: +SKIP
>>> for fmt in ("bvh", "glb", CONTACT_SHEET_FORMAT):  # doctest: +SKIP
...     write_file(fmt, motion, out_dir / f"dance.{fmt}", request)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

import numpy as np

from choreo.contracts.provenance import Provenance
from choreo.errors import ParameterError
from choreo.motion.motion import Motion

__all__ = ["CONTACT_SHEET_FORMAT", "WRITERS", "ExportRequest", "FileWriter", "write_file"]

CONTACT_SHEET_FORMAT = "png"
"""The contact sheet's format: every render writes one, whatever formats it was asked for."""


def _no_times() -> np.ndarray:
    return np.empty(0)


@dataclass(frozen=True, eq=False)
class ExportRequest:
    """What the writers need beside the motion and the path; each format reads the fields it uses.

    Parameters
    ----------
    rig : ``smpl`` or ``mixamo``, the joint names and axes (bvh, fbx, glb)
    units : ``m``, ``cm`` or None for the rig's own (bvh, fbx; glTF is always in metres)
    provenance : where the dance came from (fbx scene info, glb extras; BVH has no place for it)
    beat_times : np.ndarray [shape=(beats,)], song seconds of the beats: the contact sheet's
        panels, the gif's and the mp4's flashes, the mp4's beat strip; empty: the sheet spaces
        its panels evenly
    downbeat_times : np.ndarray [shape=(bars,)], song seconds of the bars, on the mp4's beat strip
    song_path : the song's file, muxed into the mp4; None: a silent video
    video_start_s, video_length_s : the mp4's excerpt, seconds; a length of None runs to the end
    sheet_title : the line above the contact sheet's panels

    Raises
    ------
    ParameterError
        When ``beat_times`` or ``downbeat_times`` is not a 1-D array of finite seconds.
    """

    rig: str = "smpl"
    units: Literal["m", "cm"] | None = None
    provenance: Provenance | None = None
    beat_times: np.ndarray = field(default_factory=_no_times)
    downbeat_times: np.ndarray = field(default_factory=_no_times)
    song_path: Path | None = None
    video_start_s: float = 0.0
    video_length_s: float | None = 30.0
    sheet_title: str = ""

    def __post_init__(self) -> None:
        for name in ("beat_times", "downbeat_times"):
            times = np.array(getattr(self, name), dtype=np.float64)
            if times.ndim != 1:
                raise ParameterError(f"{name} must be a 1-D array of seconds, got shape {times.shape}")
            if not np.isfinite(times).all():
                raise ParameterError(f"{name} holds NaN or infinite seconds")
            times.setflags(write=False)  # a frozen request: no writer can move another's beats
            object.__setattr__(self, name, times)


FileWriter = Callable[[Motion, Path, ExportRequest], Path]
"""A format's writer: the motion, the file to write, the request; returns the file written."""


def _write_bvh(motion: Motion, path: Path, request: ExportRequest) -> Path:
    from exporters.bvh import write_bvh

    return write_bvh(motion, path, rig=request.rig, units=request.units, provenance=request.provenance)


def _write_fbx(motion: Motion, path: Path, request: ExportRequest) -> Path:
    from exporters.fbx import write_fbx

    return write_fbx(motion, path, rig=request.rig, units=request.units, provenance=request.provenance)


def _write_glb(motion: Motion, path: Path, request: ExportRequest) -> Path:
    from exporters.gltf import write_glb

    return write_glb(motion, path, rig=request.rig, provenance=request.provenance)


def _write_gif(motion: Motion, path: Path, request: ExportRequest) -> Path:
    from exporters.gif import write_gif

    return write_gif(motion, path, beat_times=request.beat_times)


def _write_mp4(motion: Motion, path: Path, request: ExportRequest) -> Path:
    from exporters.video import VideoOptions, write_video

    excerpt = VideoOptions(start_s=request.video_start_s, duration_s=request.video_length_s)
    return write_video(
        motion,
        path,
        audio_path=request.song_path,
        beat_times=request.beat_times,
        downbeat_times=request.downbeat_times,
        options=excerpt,
    )


def _write_contact_sheet(motion: Motion, path: Path, request: ExportRequest) -> Path:
    from exporters.contact_sheet import write_contact_sheet

    return write_contact_sheet(motion, path, times_s=request.beat_times, title=request.sheet_title)


WRITERS: Mapping[str, FileWriter] = MappingProxyType(
    {
        "bvh": _write_bvh,
        "fbx": _write_fbx,
        "glb": _write_glb,
        "gif": _write_gif,
        "mp4": _write_mp4,
        CONTACT_SHEET_FORMAT: _write_contact_sheet,
    }
)
"""Each format's writer, by file extension (read-only)."""


def write_file(fmt: str, motion: Motion, path: Path, request: ExportRequest = ExportRequest()) -> Path:
    """Write ``motion`` as the format ``fmt`` (a file extension of :data:`WRITERS`) to ``path``.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    ParameterError
        For a format no writer serves, or an option its writer refuses.
    ExportError
        When the writer cannot write the file (each writer's own reasons).
    """
    try:
        writer = WRITERS[fmt]
    except KeyError:
        raise ParameterError(f"no writer for format {fmt!r}; choose from {', '.join(WRITERS)}") from None
    return writer(motion, Path(path), request)
