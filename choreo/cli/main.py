"""Entry point of the ``choreo`` command.

Each verb lives in its own module of this package and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to a callable
taking the parsed arguments and returning the exit status.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["main"]

VERB_MODULES = (
    "render",
    "styles",
    "train",
    "prepare_data",
    "eval",
    "library",
    "engines",
    "submit",
    "jobs",
    "routines",
    "keys",
    "admin",
)


def build_parser() -> argparse.ArgumentParser:
    """The full parser, with every verb registered."""
    parser = argparse.ArgumentParser(prog="choreo", description="Turn songs into 3D dance animations.")
    subparsers = parser.add_subparsers(dest="verb", required=True)
    for name in VERB_MODULES:
        importlib.import_module(f"choreo.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the verb named on the command line; returns the process exit status."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
