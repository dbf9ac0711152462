"""``choreo keys``: create, list and revoke API keys, on the server host (Redis and storage direct).

This is how the first admin key is made; after that an admin key can also
manage keys through ``/v1/keys``. The token is printed once and never stored.
"""

from __future__ import annotations

import argparse
import sys

from choreo.errors import ChoreoError

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``keys`` verb."""
    parser = subparsers.add_parser("keys", help="manage API keys (admin, on the server host)")
    actions = parser.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="create a key and print its token once")
    create.add_argument("--team", required=True)
    create.add_argument("--name", required=True)
    create.add_argument("--scopes", required=True, help="comma-separated: content, fitness, admin")
    create.add_argument("--rate-limit-per-minute", type=int, default=None)
    listing = actions.add_parser("list", help="list keys (never their secrets)")
    listing.add_argument("--team", default=None)
    actions.add_parser("revoke", help="revoke a key at once").add_argument("key_id")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from choreo.service.context import get_context
    from choreo.service.keys import create_key, list_keys, revoke_key

    try:
        ctx = get_context()
        if args.action == "create":
            scopes = [s.strip() for s in args.scopes.split(",") if s.strip()]
            record, token = create_key(
                ctx,
                team=args.team,
                name=args.name,
                scopes=scopes,
                rate_limit_per_minute=args.rate_limit_per_minute,
            )
            print(f"key {record.id} for team {record.team} ({', '.join(record.scopes)}):", file=sys.stderr)
            print(token)
        elif args.action == "list":
            for r in list_keys(ctx, team=args.team):
                state = "revoked" if r.revoked else "live"
                print(f"{r.id}  {r.team:<16} {','.join(r.scopes):<22} {state:<8} {r.name}")
        elif args.action == "revoke":
            if revoke_key(ctx, args.key_id) is None:
                print(f"choreo keys: no key {args.key_id!r}", file=sys.stderr)
                return 2
            print(f"revoked {args.key_id}")
        return 0
    except ChoreoError as exc:
        print(f"choreo keys: {exc}", file=sys.stderr)
        return 2
