"""A team library's build, and the libraries a worker dances on, as plain functions.

:func:`build_team_library` is the body of the ``choreo.build_library`` task
(:mod:`worker.library_tasks`, on the CPU queue): it reads the library's
uploaded motion files (every take of each, :mod:`choreo.mocap.library_clips`),
refuses the ones that cannot be used with their reasons, cuts the rest into a
phrase library, and stores it with a contact sheet per style.
:func:`team_library` is what the stages of a job that names a library plan and
perform on: fetched once per worker into a cache named by the library's
SHA-256, so it is never stale.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import numpy as np

from choreo.choreography.library import PhraseLibrary, build_library, load_library, shipped_library
from choreo.choreography.style_fit import describe_library
from choreo.errors import ChoreoError, NotFoundError, ParameterError
from choreo.mocap.library_clips import MotionSource, read_sources
from choreo.motion.motion import Motion
from choreo.service.context import ServiceContext
from choreo.service.libraries import (
    LibraryState,
    fail_library,
    get_library,
    library_file_key,
    library_npz_key,
    library_sheet_key,
    save_library,
)
from choreo.service.records import new_id
from exporters.contact_sheet import write_contact_sheet

__all__ = ["LIBRARY_CACHE", "build_team_library", "job_library", "team_library"]

LIBRARY_CACHE = Path(tempfile.gettempdir()) / "choreo-libraries"
"""Where a worker keeps the team libraries it dances on, by SHA-256."""

_SHEET_PANELS = 16


def team_library(ctx: ServiceContext, library_id: str) -> PhraseLibrary:
    """The built library ``library_id``, from this worker's cache (fetched and checked once).

    Raises
    ------
    NotFoundError
        The library was deleted (code ``library_deleted``): a job that names it cannot be danced.
    ParameterError
        The stored file does not match the record's hash (code ``library_corrupt``).
    """
    record = get_library(ctx, library_id)
    if record is None or record.sha256 is None:
        raise NotFoundError(f"library {library_id} no longer exists", code="library_deleted")
    path = LIBRARY_CACHE / f"{record.sha256}.npz"
    if not path.is_file():
        LIBRARY_CACHE.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{new_id('part')}")
        ctx.storage.download_file(library_npz_key(library_id), partial)
        if hashlib.sha256(partial.read_bytes()).hexdigest() != record.sha256:
            partial.unlink()
            raise ParameterError(
                f"library {library_id}'s file does not match its hash", code="library_corrupt"
            )
        partial.replace(path)
    return shipped_library(path)


def job_library(ctx: ServiceContext, library_id: str | None) -> PhraseLibrary:
    """The library a job plans and performs on: the team's it names, or the shipped one."""
    return shipped_library() if library_id is None else team_library(ctx, library_id)


def _contact_sheets(library: PhraseLibrary, out: Path) -> dict[str, Path]:
    """A sheet per style: the first pose of up to sixteen of its phrases, spread over its clips."""
    first, _last = library.phrase_frames
    coverage = library.coverage()
    sheets = {}
    for s, style in enumerate(library.styles):
        phrases = np.nonzero((library.phrase_style == s) & ~library.phrase_mirrored)[0]
        picks = phrases[
            np.linspace(0, phrases.size - 1, min(_SHEET_PANELS, phrases.size)).round().astype(int)
        ]
        frames = first[picks]
        poses = Motion(
            fps=1.0,
            root_translation=library.root[frames].astype(np.float64),
            rotations=library.rotations[frames].astype(np.float64),
        )
        sheets[style] = write_contact_sheet(
            poses,
            out / f"{style}.png",
            times_s=np.arange(frames.size, dtype=np.float64),
            title=f"{style}: {coverage[style]['phrases']} phrases, {coverage[style]['minutes']} min",
            max_panels=_SHEET_PANELS,
        )
    return sheets


def build_team_library(ctx: ServiceContext, library_id: str, *, log: Callable[[str], None] = print) -> str:
    """Build a queued library: read its files, cut them, store the library and its contact sheets.

    Returns ``"built"``, ``"failed"`` (no file could be used: the record says why) or
    ``"skipped"`` (the library is gone, or ended already: a redelivered task does nothing). An
    outage (storage, Redis) raises, for the task to retry; the build starts over and writes the
    same objects.
    """
    record = get_library(ctx, library_id)
    if record is None or record.state in (LibraryState.READY, LibraryState.FAILED):
        return "skipped"
    record.state = LibraryState.BUILDING
    save_library(ctx, record)
    start = time.perf_counter()
    clips = []
    with tempfile.TemporaryDirectory(prefix="choreo-library-") as tmp_name:
        tmp = Path(tmp_name)
        for i, file in enumerate(record.files):
            if file.status == "refused":  # not uploaded as declared
                continue
            local = tmp / "files" / f"{i:04d}" / PurePosixPath(file.filename).name
            local.parent.mkdir(parents=True)
            ctx.storage.download_file(library_file_key(library_id, i, file.filename), local)
            credit = file.credit or f"motion from team {record.team}'s library {record.name!r}"
            credit = f"{credit} (licence: {file.licence})" if file.licence else credit
            read = read_sources([MotionSource(local, file.style, credit, file.filename)], log=log)
            clips += read.clips
            file.clips = len(read.clips)
            file.status = "used" if read.clips else "refused"
            file.reason = "; ".join(r.reason for r in read.refused) or None
        try:
            library = build_library(clips, version=f"{record.name}+{record.id}")
        except ChoreoError as exc:
            return fail_library(ctx, library_id, "no_usable_motion", f"nothing to build from: {exc}")
        npz = tmp / "library.npz"
        record.sha256 = library.save(npz)
        ctx.storage.upload_file(npz, library_npz_key(library_id))
        for style, sheet in _contact_sheets(library, tmp).items():
            ctx.storage.upload_file(sheet, library_sheet_key(library_id, style), content_type="image/png")
        described = describe_library(load_library(npz))
    record.styles, record.credits = described["styles"], described["credits"]
    record.build_s = round(time.perf_counter() - start, 3)
    record.state = LibraryState.READY
    save_library(ctx, record)
    return "built"
