"""``choreo prepare-data``: retarget the mocap, retime it onto music, write training arrays."""

from __future__ import annotations

import argparse
from pathlib import Path

from choreo.errors import ChoreoError

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``prepare-data`` verb."""
    parser = subparsers.add_parser(
        "prepare-data",
        help="build train/val/reference arrays from mocap (BVH, FBX, glTF) and songs",
        description="Retarget the CMU mocap to SMPL, retime it onto real songs' beats and write "
        "train.npz, val.npz, reference.npz, meta.json and one contact sheet per clip to --out.",
    )
    parser.add_argument("--mocap", type=Path, required=True, help="folder holding the cmu_* mocap folders")
    parser.add_argument("--music", type=Path, required=True, help="folder of songs (searched recursively)")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path.home() / ".cache" / "choreo" / "music_features",
        help="where song features are cached between runs (default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the pairings (default: %(default)s)")
    sheets = parser.add_mutually_exclusive_group()
    sheets.add_argument(
        "--sheets",
        type=Path,
        default=None,
        help="folder for the contact sheets, one PNG per clip (default: OUT/contact_sheets)",
    )
    sheets.add_argument("--no-sheets", action="store_true", help="skip the contact sheets")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from choreo.mocap.dataset import build_dataset

    for name in ("mocap", "music"):
        if not getattr(args, name).is_dir():
            print(f"choreo prepare-data: --{name} {getattr(args, name)} is not a folder")
            return 2
    try:
        meta = build_dataset(
            args.mocap,
            args.music,
            args.out,
            cache_dir=args.cache,
            seed=args.seed,
            sheets_dir=None if args.no_sheets else (args.sheets or args.out / "contact_sheets"),
        )
    except ChoreoError as exc:
        print(f"choreo prepare-data: {exc}")
        return 2
    for split in ("train", "val"):
        info = meta[split]
        print(
            f"{split}: {info['sequences']} sequences, {info['duration_min']} min, "
            f"beat alignment {info['beat_align_30fps_mean']} at 30 fps"
        )
    print(f"wrote {args.out}")
    return 0
