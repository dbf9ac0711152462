"""Entry point of the ``choreo`` command.

Each verb lives in its own module of this package and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to a callable
taking the parsed arguments and returning the exit status. A command line that
names a verb imports only that verb's module: the others pull in what that
call never uses (the metrics of ``eval``, the HTTP client of ``submit``), and a
cold ``choreo render`` would pay for their imports.
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


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """The parser with ``verb`` registered alone, or with every verb when ``verb`` is None or unknown."""
    parser = argparse.ArgumentParser(prog="choreo", description="Turn songs into 3D dance animations.")
    subparsers = parser.add_subparsers(dest="verb", required=True)
    module = {name.replace("_", "-"): name for name in VERB_MODULES}.get(verb or "")
    for name in (module,) if module else VERB_MODULES:
        importlib.import_module(f"choreo.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the verb named on the command line; returns the process exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(words[0] if words else None).parse_args(words)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
