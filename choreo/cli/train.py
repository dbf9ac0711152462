"""``choreo train``: train the dance model from prepared arrays (needs the ``train`` extra)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from choreo.errors import ChoreoError, ParameterError

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``train`` verb."""
    parser = subparsers.add_parser(
        "train",
        help="train the dance model (torch, from the train extra)",
        description="Train the dance model on train.npz/val.npz. Resumes from OUT/checkpoint.pt if present.",
    )
    parser.add_argument(
        "--data", type=Path, required=True, metavar="DIR", help="folder with train.npz, val.npz"
    )
    parser.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="folder for checkpoints and logs"
    )
    parser.add_argument("--config", type=Path, metavar="FILE", help="JSON training config (see TrainConfig)")
    parser.add_argument("--fresh", action="store_true", help="ignore an existing checkpoint and start over")
    parser.add_argument(
        "--export", type=Path, metavar="MODEL", help="write the trained ONNX model here at the end"
    )
    parser.add_argument("--version", default=None, help="model version written into the exported file")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Train, then optionally export; prints a one-line summary."""
    try:
        import torch  # noqa: F401
    except ImportError:
        print(
            "choreo train: torch is not installed; install the train extra: pip install '.[train]'",
            file=sys.stderr,
        )
        return 2
    from choreo.model.export import export_run
    from choreo.model.training import TrainConfig, train

    try:
        values = {}
        if args.config is not None:
            if not args.config.is_file():
                raise ParameterError(f"config file not found: {args.config}")
            try:
                values = json.loads(args.config.read_text())
            except json.JSONDecodeError as exc:
                raise ParameterError(f"config file {args.config} is not valid JSON: {exc}") from exc
        if args.export is not None and not args.version:
            raise ParameterError("--export needs --version")
        summary = train(
            args.data,
            args.out,
            TrainConfig.from_dict(values),
            resume=not args.fresh,
            progress=not args.no_progress,
        )
        if args.export is not None:
            export_run(args.out, args.export, version=args.version)
    except ChoreoError as exc:
        print(f"choreo train: {exc}", file=sys.stderr)
        return 2
    final = summary["final_eval"]
    score = (
        f"val junction velocity loss {final['val_vel']:.4f}"
        if "val_vel" in final and "val_free_feat" not in final
        else f"free-running val feature loss {final['val_free_feat']:.3f}"
    )
    print(
        f"trained {summary['steps']} steps in {summary['train_time_s']:.0f} s on {summary['device']}; {score}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m choreo.cli.train``: the verb alone, for machines without the service dependencies."""
    parser = argparse.ArgumentParser(prog="choreo")
    register(parser.add_subparsers(dest="verb", required=True))
    args = parser.parse_args(["train", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
