"""Read motion files into phrase-library clips: one style per folder, or a ``styles.tsv`` table.

Two ways to say which file dances which style, and who to credit:

- **folders**: every motion file (BVH, FBX, glTF/GLB) in a folder is one
  style, the folder's name (the shipped CMU folders map to their dance
  families through :data:`choreo.mocap.dataset.FOLDER_STYLES`); its credit
  line is the CMU acknowledgement for the CMU folders, else the first lines of
  a ``CREDITS.txt``, ``CREDITS`` or ``LICENSE.txt`` in the folder, else a
  line naming the folder;
- **a table**: a folder holding ``styles.tsv`` (tab-separated, a header row
  ``file  style  credit`` and optionally ``licence``), one row per file,
  paths relative to the table. A row's licence joins its credit line
  (``credit (licence: CC-BY-4.0)``).

Every exported dance carries the credit lines of the library it was planned
on, as the CMU credit does. Every take of a file is a clip (a file of
several takes names each clip after its take). A file or take that cannot
be used (no skeleton that maps, no animation, a T-pose only, under two
seconds of motion) is a :class:`Refusal` with its reason; the command line
refuses to build while there is one, the service builds from the rest.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from choreo.choreography.library import LibraryClip
from choreo.errors import ChoreoError, ParameterError
from choreo.mocap.dataset import CMU_CREDIT, FOLDER_STYLES, retargeted_take, take_clip_name
from choreo.mocap.readers import MOTION_SUFFIXES, is_motion_file, read_takes

__all__ = [
    "CREDIT_FILES",
    "STYLE_TABLE",
    "ClipsRead",
    "MotionSource",
    "Refusal",
    "folder_credit",
    "folder_style",
    "read_clips",
    "read_sources",
    "sources_from_folders",
    "sources_from_table",
]

CREDIT_FILES = ("CREDITS.txt", "CREDITS", "LICENSE.txt")
STYLE_TABLE = "styles.tsv"
"""The table a folder may hold instead of being one style: file, style, credit (and licence) per row."""

_STYLE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")


@dataclass(frozen=True)
class MotionSource:
    """One motion file to read, with the style it dances and its credit line."""

    path: Path
    style: str
    credit: str
    shown: str
    """How the library names the file (``folder/file``), never a full path."""


@dataclass(frozen=True)
class Refusal:
    """A file (or one take of it) left out, and why, in words a user understands."""

    file: str
    reason: str


@dataclass
class ClipsRead:
    """What reading some sources gave: the clips, and the files refused with their reasons."""

    clips: list[LibraryClip] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)


def folder_style(folder: Path) -> str:
    """The style of the motion files in ``folder``."""
    return FOLDER_STYLES.get(folder.name, folder.name.lower())


def folder_credit(folder: Path) -> str:
    """The credit line for the motion files in ``folder``."""
    if folder.name.startswith("cmu_"):
        return CMU_CREDIT
    for name in CREDIT_FILES:
        path = folder / name
        if path.is_file():
            return _one_line(path.read_text(encoding="utf-8", errors="replace"))
    return f"motion from {folder.name} (no credit line given)"


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]


def _checked_style(style: str, where: str) -> str:
    style = style.strip().lower()
    if not style or not set(style) <= _STYLE_CHARS or len(style) > 40:
        raise ParameterError(f"{where}: style {style!r} must be 1-40 letters, digits, - or _")
    return style


def sources_from_table(table: Path) -> list[MotionSource]:
    """The rows of a ``styles.tsv``: one source per row, its path relative to the table.

    Raises
    ------
    ParameterError
        Naming the table and the row: a missing column, a bad style, a file named twice.
    """
    try:
        rows = list(csv.DictReader(table.read_text(encoding="utf-8").splitlines(), delimiter="\t"))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ParameterError(f"{table}: cannot read the table: {exc}") from None
    if not rows or not {"file", "style", "credit"} <= set(rows[0]):
        raise ParameterError(
            f"{table}: needs a header row with the columns file, style, credit (and licence)"
        )
    sources, seen = [], set()
    for number, row in enumerate(rows, start=2):
        where = f"{table}:{number}"
        name = (row.get("file") or "").strip()
        if not name or name in seen:
            raise ParameterError(f"{where}: {'no file named' if not name else f'{name} is listed twice'}")
        seen.add(name)
        credit = _one_line(row.get("credit") or "") or f"motion from {name} (no credit line given)"
        licence = _one_line(row.get("licence") or "")
        sources.append(
            MotionSource(
                table.parent / name,
                _checked_style(row.get("style") or "", where),
                f"{credit} (licence: {licence})" if licence else credit,
                f"{table.parent.name}/{name}",
            )
        )
    return sources


def sources_from_folders(folders: Sequence[Path]) -> list[MotionSource]:
    """Every motion file in ``folders`` (not recursing), or the rows of a folder's ``styles.tsv``.

    Raises
    ------
    ParameterError
        Naming a folder that holds neither motion files nor a table.
    """
    sources: list[MotionSource] = []
    for folder in map(Path, folders):
        if (folder / STYLE_TABLE).is_file():
            sources += sources_from_table(folder / STYLE_TABLE)
            continue
        files = sorted(p for p in folder.glob("*") if p.is_file() and is_motion_file(p))
        if not files:
            raise ParameterError(f"{folder}: no motion files ({', '.join(MOTION_SUFFIXES)}) there")
        style, credit = folder_style(folder), folder_credit(folder)
        sources += [MotionSource(p, style, credit, f"{folder.name}/{p.name}") for p in files]
    return sources


def read_sources(
    sources: Sequence[MotionSource],
    *,
    exclude: Sequence[str] = (),
    log: Callable[[str], None] = lambda _m: None,
) -> ClipsRead:
    """Read and retarget every take of every source, except the clip names in ``exclude``.

    A file that cannot be used, or one of its takes, becomes a refusal with its reason; the others
    are read all the same.
    """
    out = ClipsRead()
    for source in sources:
        try:
            takes = read_takes(source.path)
        except ChoreoError as exc:
            out.refused.append(Refusal(source.shown, _without(str(exc), source.path)))
            continue
        for take in takes:
            name = take_clip_name(source.path, take, len(takes))
            if name in exclude:
                continue
            shown = f"{source.shown} (take {take.take!r})" if len(takes) > 1 else source.shown
            try:
                motion, _quality = retargeted_take(take)
            except ChoreoError as exc:
                out.refused.append(Refusal(shown, _without(str(exc), take.label)))
                continue
            log(f"read {shown} ({source.style}, {motion.n_frames / motion.fps:.1f} s)")
            out.clips.append(LibraryClip(name, source.style, shown, source.credit, motion))
    return out


def _without(message: str, prefix: object) -> str:
    """The reason alone: ``message`` without the file (or take) it starts by naming."""
    return message.removeprefix(f"{prefix}: ")


def read_clips(
    folders: Sequence[Path], *, exclude: Sequence[str] = (), log: Callable[[str], None] = lambda _m: None
) -> list[LibraryClip]:
    """Every take of every motion file in ``folders`` (or their tables), retargeted, except the clip
    names in ``exclude``.

    Raises
    ------
    ParameterError
        Naming a folder with no motion files, and every file refused with its reason.
    """
    read = read_sources(sources_from_folders(folders), exclude=exclude, log=log)
    if read.refused:
        raise ParameterError("; ".join(f"{r.file}: {r.reason}" for r in read.refused))
    return read.clips
