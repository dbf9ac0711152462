"""``choreo jobs``: list, show, cancel, delete and download the team's jobs on the service."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from choreo.client import ChoreoClient
from choreo.errors import ChoreoError

__all__ = ["register"]

STATES = ("queued", "decoding", "generating", "exporting", "done", "failed", "cancelled")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``jobs`` verb."""
    parser = subparsers.add_parser("jobs", help="list and manage jobs on the service")
    actions = parser.add_subparsers(dest="action")
    listing = actions.add_parser("list", help="the team's jobs, newest first (the default)")
    for p in (parser, listing):
        p.add_argument("--state", choices=STATES, default=None, help="only jobs in this state")
        p.add_argument("--limit", type=int, default=50, help="at most this many")
    for name, text in (
        ("show", "one job as JSON"),
        ("cancel", "cancel a job"),
        ("delete", "delete a job and its files"),
    ):
        actions.add_parser(name, help=text).add_argument("job_id")
    download = actions.add_parser("download", help="download a done job's files")
    download.add_argument("job_id")
    download.add_argument("-o", "--out", type=Path, required=True, metavar="DIR")
    parser.set_defaults(func=run, action=None)


def run(args: argparse.Namespace) -> int:
    try:
        with ChoreoClient() as client:
            if args.action in (None, "list"):
                jobs = client.iter_jobs(state=args.state, page_size=min(args.limit, 200))
                for shown, job in enumerate(jobs, start=1):
                    error = f"  {job['error_code']}" if job["error_code"] else ""
                    progress = f"{job['progress'] * 100:5.1f}%"
                    print(f"{job['id']}  {job['state']:<10} {progress}  {job['track_name']}{error}")
                    if shown >= args.limit:
                        break
            elif args.action == "show":
                print(json.dumps(client.job(args.job_id), indent=2))
            elif args.action == "cancel":
                print(client.cancel(args.job_id)["state"])
            elif args.action == "delete":
                client.delete_job(args.job_id)
                print(f"deleted {args.job_id}")
            elif args.action == "download":
                for path in client.download(args.job_id, args.out):
                    print(path)
        return 0
    except ChoreoError as exc:
        print(f"choreo jobs: {exc}", file=sys.stderr)
        return 2
