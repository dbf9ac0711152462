"""The named choices a caller picks from, defined once for the CLI, the API, the workers and the Studio.

Each is a ``Literal`` type for the code and a tuple of its values for validation
messages and forms (``typing.get_args`` of the type, so the two cannot differ).
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "AUDIO_CONTENT_TYPES",
    "AUDIO_EXTENSIONS",
    "AUTO",
    "DANCE_FORMATS",
    "DEFAULT_FPS",
    "ENERGY_LEVELS",
    "MOTION_EXTENSIONS",
    "PREVIEW_FORMATS",
    "RIGS",
    "SONG_SUFFIXES",
    "STYLES",
    "SUPPORTED_FPS",
    "SYNTHS",
    "Energy",
    "Synth",
]

Synth = Literal["blend", "model"]
"""Who performs a plan of library phrases: ``blend`` joins them, ``model`` is the guided LSTM."""

SYNTHS: tuple[Synth, ...] = get_args(Synth)

Energy = Literal["low", "medium", "high", "auto"]
"""How big the moves are; ``auto`` follows the music's energy bar by bar."""

ENERGY_LEVELS: tuple[Energy, ...] = get_args(Energy)

SUPPORTED_FPS = (24, 25, 30, 50, 60)
"""Frame rates a dance can be rendered at; the synthesizer runs at its native rate and is resampled."""

DEFAULT_FPS = 30
"""The frame rate when none is asked for."""

DANCE_FORMATS = ("bvh", "fbx", "glb")
"""Dance file formats, by file extension."""

PREVIEW_FORMATS = ("gif", "mp4")
"""Previews to judge a dance by eye: ``gif`` a silent stick figure (the first 20 s), ``mp4`` the shaded
mannequin at 720p with the song (the excerpt of ``video_start_s``/``video_length_s``)."""

RIGS = ("smpl", "mixamo")
"""Joint namings of the written files (:func:`exporters.rigs.get_rig`)."""

STYLES: tuple[str, ...] = ("salsa", "modern", "breakdance", "whirl")
"""The dance families of the shipped library's mocap; a team's library may hold others."""

AUTO = "auto"
"""The style a caller asks for to let the music choose."""

AUDIO_CONTENT_TYPES = {
    "mp3": "audio/mpeg",
    "ogg": "audio/ogg",
    "oga": "audio/ogg",
    "opus": "audio/ogg",
    "wav": "audio/wav",
    "flac": "audio/flac",
    "m4a": "audio/mp4",
    "aac": "audio/aac",
}
"""The MIME type of each song format, by file extension."""

AUDIO_EXTENSIONS = tuple(AUDIO_CONTENT_TYPES)
"""File extensions accepted as songs (lower case, no dot): uploads, song folders, the Studio's picker."""

SONG_SUFFIXES = tuple(f".{ext}" for ext in AUDIO_EXTENSIONS)
"""The same as path suffixes (``Path.suffix``, with the dot), for finding the songs in a folder."""

MOTION_EXTENSIONS = ("bvh", "fbx", "glb", "gltf")
"""Motion files a phrase library is built from: BVH (our own reader), FBX and glTF (Assimp)."""
