"""``choreo admin``: service maintenance on the server host.

``choreo admin rebuild-index`` rebuilds Redis (keys, tracks, jobs, batches,
routines) from the records in object storage, after Redis lost its data.
"""

from __future__ import annotations

import argparse
import sys

from choreo.errors import ChoreoError

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``admin`` verb."""
    parser = subparsers.add_parser("admin", help="service maintenance (on the server host)")
    actions = parser.add_subparsers(dest="action", required=True)
    actions.add_parser("rebuild-index", help="rebuild the Redis index from storage")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from choreo.service.context import get_context
    from choreo.service.rebuild import rebuild_index

    try:
        counts = rebuild_index(get_context())
    except ChoreoError as exc:
        print(f"choreo admin: {exc}", file=sys.stderr)
        return 2
    print("rebuilt: " + ", ".join(f"{n} {kind}" for kind, n in counts.items()))
    return 0
