"""The shaded preview video (mp4) of a dance with its song.

Modules, one job each: :mod:`~exporters.video.options` (:class:`VideoOptions`: the excerpt, size
and rate), :mod:`~exporters.video.camera` (the orthographic three-quarter view),
:mod:`~exporters.video.backdrop` (sky and floor), :mod:`~exporters.video.painter` (the numpy
rasterizer of the mannequin and the beat strip), :mod:`~exporters.video.yuv` (RGB to the
encoder's planes), :mod:`~exporters.video.muxer` (ffmpeg: H.264 and the song's AAC), and
:mod:`~exporters.video.writer` (:func:`write_video`).
"""

from exporters.video.options import VideoOptions
from exporters.video.writer import write_video

__all__ = ["VideoOptions", "write_video"]
