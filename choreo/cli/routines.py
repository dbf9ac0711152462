"""``choreo routines``: publish done jobs for fitness apps, find, show and unpublish routines."""

from __future__ import annotations

import argparse
import json
import sys

from choreo.client import ChoreoClient
from choreo.contracts.routine import IMPACTS, ROUTINE_PROFILES
from choreo.errors import ChoreoError
from choreo.models.energy import INTENSITY_LEVELS

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``routines`` verb."""
    parser = subparsers.add_parser("routines", help="publish and find routines for fitness apps")
    actions = parser.add_subparsers(dest="action")
    listing = actions.add_parser("list", help="find routines (the default)")
    for p in (parser, listing):
        p.add_argument("--tag", default=None)
        p.add_argument("--style", default=None)
        p.add_argument("--intensity", choices=INTENSITY_LEVELS, default=None, help="from the MET value")
        p.add_argument("--kind", choices=("dance", "workout"), default=None)
        p.add_argument("--impact", choices=IMPACTS, default=None)
        p.add_argument("--profile", choices=(*ROUTINE_PROFILES, "custom"), default=None)
        p.add_argument("--tempo-min-bpm", type=float, default=None)
        p.add_argument("--tempo-max-bpm", type=float, default=None)
        p.add_argument("--duration-min-s", type=float, default=None)
        p.add_argument("--duration-max-s", type=float, default=None)
        p.add_argument("--limit", type=int, default=50)
    actions.add_parser("show", help="one routine with download URLs, as JSON").add_argument("routine_id")
    actions.add_parser("unpublish", help="remove a routine (the job stays)").add_argument("routine_id")
    publish = actions.add_parser("publish", help="publish a done job as a routine")
    publish.add_argument("job_id")
    publish.add_argument("--title", required=True)
    publish.add_argument("--tags", default="", help="comma-separated")
    publish.add_argument("--style", default=None, help="label; default the dance's style")
    parser.set_defaults(func=run, action=None)


def run(args: argparse.Namespace) -> int:
    try:
        with ChoreoClient() as client:
            if args.action in (None, "list"):
                page = client.routines(
                    tag=args.tag,
                    style=args.style,
                    intensity=args.intensity,
                    kind=args.kind,
                    impact=args.impact,
                    profile=args.profile,
                    tempo_min_bpm=args.tempo_min_bpm,
                    tempo_max_bpm=args.tempo_max_bpm,
                    duration_min_s=args.duration_min_s,
                    duration_max_s=args.duration_max_s,
                    limit=args.limit,
                )
                for r in page["items"]:
                    print(
                        f"{r['id']}  {r['tempo_bpm']:6.1f} bpm  {r['duration_s']:6.1f} s  "
                        f"{r['kind']:<7} {r['intensity_level']:<8} {r['met']:4.1f} MET {r['style']:<10} "
                        f"{r['title']}  [{', '.join(r['tags'])}]"
                    )
            elif args.action == "show":
                print(json.dumps(client.routine(args.routine_id), indent=2))
            elif args.action == "unpublish":
                client.unpublish(args.routine_id)
                print(f"unpublished {args.routine_id}")
            elif args.action == "publish":
                tags = [t for t in args.tags.split(",") if t.strip()]
                print(
                    json.dumps(
                        client.publish(args.job_id, title=args.title, tags=tags, style=args.style), indent=2
                    )
                )
        return 0
    except ChoreoError as exc:
        print(f"choreo routines: {exc}", file=sys.stderr)
        return 2
