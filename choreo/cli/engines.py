"""``choreo engines``: list the backends, build TensorRT engines, check them against fp32.

* ``choreo engines list``: which backends can run here and why not, the TensorRT
  flavour (TensorRT 11 or TensorRT-RTX), and which backend ``auto`` picks.
* ``choreo engines build [--precision fp32|fp16|int8] [--profile NAME]``: convert the
  model to the precision (on the CPU) and build the TensorRT engine into the cache
  (TensorRT-RTX builds without a GPU); ``--convert-only`` stops after the ONNX conversion.
* ``choreo engines selfcheck``: compare every backend that runs here with ONNX Runtime
  fp32 on real songs (per-precision tolerances in joint-rotation degrees), benchmark;
  with no arguments it checks the bundled demo song. Exits non-zero when a check fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from choreo.errors import ChoreoError
from choreo.runners import configured_model_path
from engines.settings import PRECISIONS, EngineSettings, get_engine_settings

if TYPE_CHECKING:
    from choreo.enginetools.calibration import CalibrationSong

__all__ = ["DEMO_SONG", "register"]

DEMO_SONG = Path(__file__).resolve().parents[2] / "demo" / "Kevin_MacLeod_-_Vibe_Ace.ogg"
"""The bundled demo song, which ``selfcheck`` checks when given no songs."""


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
            help="int8 calibration songs: a folder with MANIFEST.tsv (selfcheck skips int8 without it)",
        )
        if name == "build":
            p.add_argument("--precision", choices=PRECISIONS, default=None, help="default: settings (fp16)")
            p.add_argument("--convert-only", action="store_true", help="write the converted ONNX only")
        else:
            p.add_argument("--precisions", default="fp32,fp16,int8", help="comma-separated (default: all)")
            p.add_argument(
                "--songs", type=Path, default=None, help="songs folder with MANIFEST.tsv (default: demo song)"
            )
            p.add_argument("--count", type=int, default=4, help="songs to check (spread over tempo)")
            p.add_argument("--json", type=Path, default=None, help="write the report here")
        p.set_defaults(func=func)


def _list(args: argparse.Namespace) -> int:
    from engines.registry import backend_status, choose_backend, tensorrt_flavour_line

    settings = get_engine_settings()
    for name, reason in backend_status().items():
        print(f"{name:12s} {'available' if reason is None else 'unavailable: ' + reason}")
    print(tensorrt_flavour_line())
    try:
        print(f"chosen ({settings.backend}): {choose_backend(settings)}")
    except ChoreoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _build(args: argparse.Namespace) -> int:
    from choreo.enginetools.precision_files import prepare_precision_model
    from engines.registry import tensorrt_build_reason

    try:
        settings = _settings(args)
        model = configured_model_path(settings)
        onnx_path, sha = prepare_precision_model(model, settings.precision, settings)
        print(f"{settings.precision} model: {onnx_path} (sha256 {sha[:16]})")
        if args.convert_only:
            return 0
        reason = tensorrt_build_reason()
        if reason is not None:
            print(f"error: cannot build a TensorRT engine here: {reason}", file=sys.stderr)
            return 2
        from engines.tensorrt_engine import ensure_plan

        plan, built = ensure_plan(model, settings)
        how = "from the cache" if built is None else f"built by {built.flavour} in {built.seconds:.1f} s"
        print(f"engine {how}: {plan} (profile {settings.profile})")
    except ChoreoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _demo_song(settings: EngineSettings, styles: tuple[str, ...], fps: int) -> CalibrationSong:
    """The bundled demo song, danced in the style ``auto`` picks for its tempo (or the model's first)."""
    from choreo.choreography.style_choice import auto_style
    from choreo.enginetools.calibration import CalibrationSong
    from choreo.enginetools.precision_files import song_analysis

    tempo = song_analysis(DEMO_SONG, fps, settings.cache_dir).tempo_bpm
    style = auto_style(tempo)
    return CalibrationSong(DEMO_SONG, tempo, style if style in styles else styles[0], 0)


def _tensorrt_candidates(
    model: Path, settings: EngineSettings, precisions: list[str], skipped: dict[str, str]
) -> list[tuple[str, str, Callable[[Path], Any]]]:
    """TensorRT engines to check where it runs; where it only builds, build them; why not, in ``skipped``."""
    from engines.registry import BACKENDS, tensorrt_build_reason

    reason = BACKENDS["tensorrt"].probe()
    per_precision = [EngineSettings(**{**settings.model_dump(), "precision": p}) for p in precisions]
    if reason is None:
        from engines.tensorrt_engine import TensorRTEngine

        def loader(s: EngineSettings) -> Callable[[Path], Any]:
            return lambda path: TensorRTEngine.from_onnx(model, s)  # builds from the model, as a worker

        return [("tensorrt", s.precision, loader(s)) for s in per_precision]
    if tensorrt_build_reason() is None and precisions:
        from engines.tensorrt_engine import ensure_plan

        for s in per_precision:
            ensure_plan(model, s)
        built = ", ".join(precisions)
        skipped["tensorrt"] = f"built the {built} engines ({settings.profile}), not run: {reason}"
    else:
        skipped["tensorrt"] = f"skipped ({reason})"
    return []


def _selfcheck(args: argparse.Namespace) -> int:
    from choreo.enginetools.calibration import read_manifest, select_calibration_songs
    from choreo.enginetools.precision_files import calibration_styles
    from choreo.enginetools.selfcheck import selfcheck
    from engines.onnxruntime_engine import OnnxRuntimeEngine
    from engines.registry import BACKENDS

    try:
        settings = _settings(args)
        model = configured_model_path(settings)
        spec = OnnxRuntimeEngine(model, threads=1).spec
        if args.songs is None:
            songs = [_demo_song(settings, calibration_styles(spec), spec.native_fps)]
        else:
            songs = select_calibration_songs(
                read_manifest(args.songs), calibration_styles(spec), count=args.count, seed=1
            )
        print(f"checking against ONNX Runtime fp32: {', '.join(s.path.name for s in songs)}")
        precisions = [p.strip() for p in args.precisions.split(",") if p.strip()]
        skipped: dict[str, str] = {}
        if "int8" in precisions and settings.calibration_dir is None:
            precisions.remove("int8")
            skipped["int8"] = (
                "skipped (give --calibration-dir: songs to calibrate on, other than the checked ones; "
                "calibrating and checking on one song proves nothing)"
            )
        threads = settings.threads
        candidates: list[tuple[str, str, Callable[[Path], Any]]] = [
            ("onnxruntime", p, lambda path: OnnxRuntimeEngine(path, threads=threads)) for p in precisions
        ]
        candidates += _tensorrt_candidates(model, settings, precisions, skipped)
        for what, why in skipped.items():
            print(f"{what}: {why}")
        if BACKENDS["torch-cuda"].probe() is None:
            from engines.torch_engine import TorchEngine

            candidates.append(("torch-cuda", "fp16", lambda path: TorchEngine(model, device="cuda:0")))
        report = {**selfcheck(model, settings, songs, candidates), "skipped": skipped}
    except ChoreoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))
    return 0 if all(r["passed"] for r in report["results"]) else 1
