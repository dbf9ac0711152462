"""``choreo library build|show``: build a phrase library from motion files, or describe one."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from choreo.errors import ChoreoError

if TYPE_CHECKING:
    from choreo.mocap.library_clips import MotionSource

__all__ = ["register"]

_SONG_S = 240.0
"""The song length ``library show`` gives its verdict for, by default (four minutes)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``library`` verb."""
    parser = subparsers.add_parser("library", help="build or describe a phrase library")
    verbs = parser.add_subparsers(dest="library_verb", required=True)
    build = verbs.add_parser(
        "build",
        help="cut motion files (BVH, FBX, glTF) into a phrase library",
        description="Each folder is one style (its name), unless it holds a styles.tsv (file, style, "
        "credit, licence per row); a .tsv may also be named itself. Every take of every file is read; "
        "a file that cannot be used is named with its reason and nothing is written.",
    )
    build.add_argument("sources", nargs="+", type=Path, metavar="FOLDER_OR_TSV")
    build.add_argument("-o", "--out", type=Path, required=True, metavar="FILE", help="the library .npz")
    build.add_argument("--version", default="1.0.0", help="version written into the library")
    build.add_argument(
        "--exclude", default="", help="comma-separated clip names to leave out (held-out clips)"
    )
    build.set_defaults(func=run_build)
    show = verbs.add_parser(
        "show",
        help="coverage of a library: minutes, phrases and tempo range per style, and the songs it fills",
    )
    show.add_argument("file", type=Path, nargs="?", default=None, help="default: the shipped library")
    show.add_argument(
        "--song-s",
        type=float,
        default=_SONG_S,
        help="song length the verdict is for (default: %(default)s s)",
    )
    show.add_argument("--tempo", type=float, default=None, help="song tempo, BPM (default: mid-range)")
    show.set_defaults(func=run_show)


def _sources(paths: list[Path]) -> list[MotionSource]:
    from choreo.mocap.library_clips import sources_from_folders, sources_from_table

    out: list[MotionSource] = []
    for path in paths:
        out += sources_from_table(path) if path.suffix.lower() == ".tsv" else sources_from_folders([path])
    return out


def run_build(args: argparse.Namespace) -> int:
    """Read, cut and save; prints the coverage. Exit 1 naming every refused file (nothing is written)."""
    from choreo.choreography.library import build_library, load_library
    from choreo.choreography.style_fit import describe_library
    from choreo.mocap.library_clips import read_sources

    log = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    try:
        exclude = [name for name in args.exclude.split(",") if name]
        read = read_sources(_sources(args.sources), exclude=exclude, log=log)
        if read.refused:
            for refusal in read.refused:
                print(f"choreo library build: {refusal.file}: {refusal.reason}", file=sys.stderr)
            print(
                f"choreo library build: {len(read.refused)} file(s) refused; nothing written", file=sys.stderr
            )
            return 1
        library = build_library(read.clips, version=args.version, log=log)
        library.save(args.out)
        print(json.dumps(describe_library(load_library(args.out)), indent=2))
    except ChoreoError as exc:
        print(f"choreo library build: {exc}", file=sys.stderr)
        return 1
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Print a library's version, hash, coverage, tempo range per style, and credits."""
    from choreo.choreography.library import shipped_library
    from choreo.choreography.style_fit import describe_library

    try:
        library = shipped_library(args.file)
        print(json.dumps(describe_library(library, song_s=args.song_s, tempo_bpm=args.tempo), indent=2))
    except ChoreoError as exc:
        print(f"choreo library show: {exc}", file=sys.stderr)
        return 1
    return 0
