"""Read BVH folders into phrase-library clips: one style per folder, one credit line per folder.

A folder's style is its name (the shipped CMU folders map to their dance
families through :data:`choreo.mocap.dataset.FOLDER_STYLES`). Its credit line
is the CMU acknowledgement for the CMU folders, else the first lines of a
``CREDITS.txt``, ``CREDITS`` or ``LICENSE.txt`` in the folder, else a line naming
the folder, so that every exported dance says where its motion came from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from choreo.choreography.library import LibraryClip
from choreo.errors import ChoreoError, ParameterError
from choreo.mocap.dataset import CMU_CREDIT, FOLDER_STYLES, retargeted_dance

__all__ = ["CREDIT_FILES", "folder_credit", "folder_style", "read_clips"]

CREDIT_FILES = ("CREDITS.txt", "CREDITS", "LICENSE.txt")


def folder_style(folder: Path) -> str:
    """The style of the BVH files in ``folder``."""
    return FOLDER_STYLES.get(folder.name, folder.name.lower())


def folder_credit(folder: Path) -> str:
    """The credit line for the BVH files in ``folder``."""
    if folder.name.startswith("cmu_"):
        return CMU_CREDIT
    for name in CREDIT_FILES:
        path = folder / name
        if path.is_file():
            return " ".join(path.read_text(encoding="utf-8", errors="replace").split())[:300]
    return f"motion from {folder.name} (no credit line given)"


def read_clips(
    folders: Sequence[Path], *, exclude: Sequence[str] = (), log: Callable[[str], None] = lambda _m: None
) -> list[LibraryClip]:
    """Every BVH file in ``folders`` (not recursing), retargeted, except the clip names in ``exclude``.

    Raises
    ------
    ParameterError
        Naming the folder when it holds no BVH, or the file when it cannot be read or retargeted.
    """
    clips = []
    for folder in map(Path, folders):
        files = sorted(folder.glob("*.bvh"))
        if not files:
            raise ParameterError(f"{folder}: no BVH files there")
        style, credit = folder_style(folder), folder_credit(folder)
        for path in files:
            if path.stem in exclude:
                continue
            try:
                motion, _quality = retargeted_dance(path)
            except ChoreoError as exc:
                message = str(exc)
                raise ParameterError(message if str(path) in message else f"{path}: {message}") from exc
            log(f"read {folder.name}/{path.name} ({style}, {motion.n_frames / motion.fps:.1f} s)")
            clips.append(LibraryClip(path.stem, style, f"{folder.name}/{path.name}", credit, motion))
    return clips
