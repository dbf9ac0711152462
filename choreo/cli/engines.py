"""``choreo engines``: list the backends, build TensorRT engines, check them against fp32.

* ``choreo engines list``: which backends can run here, and which ``auto`` picks.
* ``choreo engines build [--precision fp32|fp16|int8] [--profile NAME]``: convert the
  model to the precision (on the CPU) and build the TensorRT engine into the cache;
  ``--convert-only`` stops after the ONNX conversion (no TensorRT needed).
* ``choreo engines selfcheck``: build, compare with ONNX Runtime fp32 on real songs
  (per-precision tolerances in joint-rotation degrees), benchmark; exits non-zero
  when a check fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from choreo.errors import ChoreoError
from engines.settings import PRECISIONS, EngineSettings, get_engine_settings

__all__ = ["register"]


def _settings(args: argparse.Namespace) -> EngineSettings:
    base = get_engine_settings()
    updates = {}
    for field in ("precision", "profile", "calibration_dir", "cache_dir", "model_path"):
        value = getattr(args, field, None)
        if value is not None:
            updates[field] = value
    return EngineSettings(**{**base.model_dump(), **updates})


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``engines`` verb and its sub-commands."""
    parser = subparsers.add_parser("engines", help="inference backends: list, build, selfcheck")
    sub = parser.add_subparsers(dest="engines_command", required=True)

    listing = sub.add_parser("list", help="backends this machine can run")
    listing.set_defaults(func=_list)

    for name, func, text in (
        ("build", _build, "convert the model and build a TensorRT engine into the cache"),
        ("selfcheck", _selfcheck, "build, compare with ONNX Runtime fp32 on real songs, benchmark"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument(
            "--model", dest="model_path", type=Path, default=None, help="ONNX model (default: settings)"
        )
        p.add_argument("--profile", default=None, help="shape profile from the settings (realtime, offline)")
        p.add_argument("--cache-dir", dest="cache_dir", type=Path, default=None, help="engine cache folder")
        p.add_argument(
            "--calibration-dir",
            dest="calibration_dir",
            type=Path,
            default=None,
            help="int8 calibration songs: a folder with MANIFEST.tsv",
        )
        if name == "build":
            p.add_argument("--precision", choices=PRECISIONS, default=None, help="default: settings (fp16)")
            p.add_argument("--convert-only", action="store_true", help="write the converted ONNX only")
        else:
            p.add_argument("--precisions", default="fp32,fp16,int8", help="comma-separated (default: all)")
            p.add_argument("--songs", type=Path, default=None, help="songs folder with MANIFEST.tsv")
            p.add_argument("--count", type=int, default=4, help="songs to check (spread over tempo)")
            p.add_argument("--json", type=Path, default=None, help="write the report here")
        p.set_defaults(func=func)


def _list(args: argparse.Namespace) -> int:
    from engines.registry import backend_status, choose_backend

    settings = get_engine_settings()
    for name, reason in backend_status().items():
        print(f"{name:12s} {'available' if reason is None else 'unavailable: ' + reason}")
    try:
        print(f"chosen ({settings.backend}): {choose_backend(settings)}")
    except ChoreoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _build(args: argparse.Namespace) -> int:
    from engines.precision_files import precision_model
    from engines.registry import BACKENDS

    try:
        settings = _settings(args)
        model = settings.resolved_model_path()
        onnx_path, sha = precision_model(model, settings.precision, settings)
        print(f"{settings.precision} model: {onnx_path} (sha256 {sha[:16]})")
        if args.convert_only:
            return 0
        reason = BACKENDS["tensorrt"].probe()
        if reason is not None:
            print(f"error: cannot build a TensorRT engine here: {reason}", file=sys.stderr)
            return 2
        from engines.tensorrt_engine import ensure_plan

        plan, built = ensure_plan(model, settings)
        print(f"{'built' if built else 'cached'} engine: {plan} (profile {settings.profile})")
    except ChoreoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _selfcheck(args: argparse.Namespace) -> int:
    from engines.calibration import read_manifest, select_calibration_songs
    from engines.onnxruntime_engine import OnnxRuntimeEngine
    from engines.registry import BACKENDS
    from engines.selfcheck import selfcheck

    try:
        settings = _settings(args)
        model = settings.resolved_model_path()
        songs_dir = args.songs or settings.calibration_dir
        if songs_dir is None:
            print("error: give --songs DIR (a folder of songs with MANIFEST.tsv)", file=sys.stderr)
            return 2
        spec = OnnxRuntimeEngine(model, threads=1).spec
        songs = select_calibration_songs(read_manifest(songs_dir), spec.styles, count=args.count, seed=1)
        precisions = [p.strip() for p in args.precisions.split(",") if p.strip()]
        threads = settings.resolved_ort_threads()
        candidates = [
            ("onnxruntime", p, lambda path: OnnxRuntimeEngine(path, threads=threads)) for p in precisions
        ]
        if BACKENDS["tensorrt"].probe() is None:
            from engines.tensorrt_engine import TensorRTEngine

            for p in precisions:
                s = EngineSettings(**{**settings.model_dump(), "precision": p})
                candidates.append(("tensorrt", p, lambda path, s=s: TensorRTEngine.from_onnx(model, s)))
        else:
            print(f"tensorrt: skipped ({BACKENDS['tensorrt'].probe()})")
        if BACKENDS["torch-cuda"].probe() is None:
            from engines.torch_engine import TorchEngine

            candidates.append(("torch-cuda", "fp16", lambda path: TorchEngine(model, device="cuda:0")))
        report = selfcheck(model, settings, songs, candidates)
    except ChoreoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))
    return 0 if all(r["passed"] for r in report["results"]) else 1
