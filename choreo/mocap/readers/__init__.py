"""Motion files in, :class:`~.take.SourceTake` out: BVH through our own parser, FBX and glTF through Assimp.

``read_takes`` is the one entry: ``choreo library build``, ``choreo
prepare-data`` and the service's library builds read every format through it.
"""

from __future__ import annotations

from pathlib import Path

from choreo.contracts.choices import MOTION_EXTENSIONS
from choreo.errors import ParameterError
from choreo.mocap.readers.assimp_reader import ASSIMP_SUFFIXES, read_assimp_takes
from choreo.mocap.readers.take import SourceTake, as_take, take_from_bvh
from choreo.motion.bvh_reader import read_bvh

__all__ = ["MOTION_SUFFIXES", "SourceTake", "as_take", "is_motion_file", "read_takes", "take_from_bvh"]

MOTION_SUFFIXES = tuple(f".{ext}" for ext in MOTION_EXTENSIONS)
"""The file suffixes a phrase library is built from (any case)."""


def is_motion_file(path: Path) -> bool:
    """Whether ``path`` is named like a motion file this package reads."""
    return path.suffix.lower() in MOTION_SUFFIXES


def read_takes(path: str | Path) -> list[SourceTake]:
    """Every take in the motion file at ``path`` (a BVH holds one).

    Raises
    ------
    ParameterError
        Naming the file: its suffix is not a motion file's, or it cannot be read (see the readers).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".bvh":
        return [take_from_bvh(read_bvh(path), str(path))]
    if suffix in ASSIMP_SUFFIXES:
        return read_assimp_takes(path)
    raise ParameterError(f"{path}: not a motion file; choreo reads {', '.join(MOTION_SUFFIXES)}")
