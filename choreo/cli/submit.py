"""``choreo submit``: push songs to the service as one album, optionally wait and download."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from choreo.client import ChoreoClient
from choreo.contracts.choices import AUTO, DANCE_FORMATS, DEFAULT_FPS, STYLES, SUPPORTED_FPS
from choreo.errors import ChoreoError

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``submit`` verb."""
    parser = subparsers.add_parser(
        "submit",
        help="render songs on the service (CHOREO_API_URL, CHOREO_API_KEY)",
        description="Upload songs and render them as one batch on the service; --wait downloads them.",
    )
    parser.add_argument("songs", nargs="+", type=Path, metavar="SONG", help="audio files to dance to")
    parser.add_argument("--wait", action="store_true", help="wait until every job has ended")
    parser.add_argument("-o", "--out", type=Path, default=None, metavar="DIR", help="download the files here")
    parser.add_argument("--fps", type=int, default=DEFAULT_FPS, help=f"one of {SUPPORTED_FPS}")
    parser.add_argument("--formats", default="bvh", help=f"comma-separated: {', '.join(DANCE_FORMATS)}")
    parser.add_argument("--style", default=AUTO, help=f"one of {', '.join((*STYLES, AUTO))}")
    parser.add_argument("--seed", type=int, default=0, help="same seed, same dance")
    parser.add_argument("--priority", type=int, default=5, help="0-9, 9 runs first")
    parser.add_argument("--force", action="store_true", help="render again even if already rendered")
    parser.add_argument("--callback-url", default=None, help="URL to POST (signed) when jobs finish")
    parser.add_argument("--timeout-s", type=float, default=3600.0, help="how long --wait waits")
    parser.set_defaults(func=run)


def _progress(status: dict) -> None:
    counts = ", ".join(f"{k} {v}" for k, v in status["counts"].items() if v)
    print(f"\rbatch {status['id']}: {status['progress'] * 100:5.1f}% ({counts})   ", end="", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when every job is done (or was submitted, without --wait), 1 if any failed, 2 on a refusal."""
    if args.out is not None and not args.wait:
        print("choreo submit: -o needs --wait (files exist only once jobs are done)", file=sys.stderr)
        return 2
    try:
        with ChoreoClient() as client:
            submitted = client.submit_songs(
                args.songs,
                fps=args.fps,
                formats=[f.strip() for f in args.formats.split(",") if f.strip()],
                style=args.style,
                seed=args.seed,
                priority=args.priority,
                force=args.force,
                callback_url=args.callback_url,
            )
            batch_id = submitted["batch"]["id"]
            print(f"batch {batch_id}")
            for job in submitted["jobs"]:
                note = " (already rendered)" if job["deduplicated"] else ""
                print(f"  {job['id']}  {job['track_name']}{note}")
            if not args.wait:
                return 0
            client.wait_batch(batch_id, timeout_s=args.timeout_s, on_progress=_progress)
            print(file=sys.stderr)
            failed = 0
            for job in submitted["jobs"]:
                final = client.job(job["id"])
                if final["state"] != "done":
                    failed += 1
                    reason = f"{final['error_code']}: {final['error_message']}"
                    print(f"{final['track_name']}: {final['state']} ({reason})")
                    continue
                if args.out is not None:
                    for path in client.download(job["id"], args.out):
                        print(path)
            return 1 if failed else 0
    except ChoreoError as exc:
        print(f"choreo submit: {exc}", file=sys.stderr)
        return 2
