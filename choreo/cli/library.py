"""``choreo library build|show``: build a phrase library from BVH folders, or describe one."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from choreo.errors import ChoreoError

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``library`` verb."""
    parser = subparsers.add_parser("library", help="build or describe a phrase library")
    verbs = parser.add_subparsers(dest="library_verb", required=True)
    build = verbs.add_parser("build", help="cut BVH folders (one style per folder) into a phrase library")
    build.add_argument("folders", nargs="+", type=Path, metavar="BVH_DIR")
    build.add_argument("-o", "--out", type=Path, required=True, metavar="FILE", help="the library .npz")
    build.add_argument("--version", default="1.0.0", help="version written into the library")
    build.add_argument(
        "--exclude", default="", help="comma-separated clip names to leave out (held-out clips)"
    )
    build.set_defaults(func=run_build)
    show = verbs.add_parser("show", help="coverage of a library: minutes and phrases per style")
    show.add_argument("file", type=Path, nargs="?", default=None, help="default: the shipped library")
    show.set_defaults(func=run_show)


def _describe(library) -> dict:
    return {
        "version": library.version,
        "sha256": library.sha256,
        "styles": library.coverage(),
        "merged_styles": library.merged_styles,
        "credits": list(library.credits),
    }


def run_build(args: argparse.Namespace) -> int:
    """Read, cut and save; prints the coverage. Exit 1 naming the file on bad input."""
    from choreo.choreography.library import build_library, load_library
    from choreo.mocap.library_clips import read_clips

    log = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    try:
        exclude = [name for name in args.exclude.split(",") if name]
        clips = read_clips(args.folders, exclude=exclude, log=log)
        library = build_library(clips, version=args.version, log=log)
        library.save(args.out)
        print(json.dumps(_describe(load_library(args.out)), indent=2))
    except ChoreoError as exc:
        print(f"choreo library build: {exc}", file=sys.stderr)
        return 1
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Print a library's version, hash, coverage and credits."""
    from choreo.choreography.library import shipped_library

    try:
        print(json.dumps(_describe(shipped_library(args.file)), indent=2))
    except ChoreoError as exc:
        print(f"choreo library show: {exc}", file=sys.stderr)
        return 1
    return 0
