"""``choreo admin``: service maintenance on the server host.

``choreo admin rebuild-index`` rebuilds Redis (keys, tracks, team secrets,
jobs, batches, routines, pending uploads) from the records in object storage,
after Redis lost its data, and enqueues the jobs that were in flight again;
``sweep-uploads`` deletes abandoned uploads;
``callback-secret`` makes or rotates a team's callback secret;
``rescore-routines`` scores every routine again with today's energy calibration (no rendering).
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
    sweep = actions.add_parser(
        "sweep-uploads", help="delete abandoned uploads (staged bytes, expired tickets)"
    )
    sweep.add_argument("--older-than-s", type=float, default=24 * 3600, help="age of staged bytes to delete")
    actions.add_parser("rescore-routines", help="score every routine again with today's energy calibration")
    secret = actions.add_parser(
        "callback-secret", help="make or rotate a team's callback secret (printed once)"
    )
    secret.add_argument("--team", required=True)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from choreo.service.context import get_context
    from choreo.service.queue import make_celery
    from choreo.service.rebuild import rebuild_index
    from choreo.service.routines import rescore_routines
    from choreo.service.teams import rotate_callback_secret
    from choreo.service.uploads import sweep_uploads

    try:
        ctx = get_context()
        if args.action == "rebuild-index":
            counts = rebuild_index(ctx, make_celery(ctx.settings, name="choreo-admin"))
            print("rebuilt: " + ", ".join(f"{n} {kind}" for kind, n in counts.items()))
        elif args.action == "rescore-routines":
            print("routines: " + ", ".join(f"{n} {what}" for what, n in rescore_routines(ctx).items()))
        elif args.action == "sweep-uploads":
            print(f"swept {sweep_uploads(ctx, older_than_s=args.older_than_s)} objects under uploads/")
        else:
            print(rotate_callback_secret(ctx, args.team).secret)
    except ChoreoError as exc:
        print(f"choreo admin: {exc}", file=sys.stderr)
        return 2
    return 0
