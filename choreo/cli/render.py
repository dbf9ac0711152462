"""``choreo render``: songs in, dance files out, on this machine."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from choreo.contracts.choices import AUTO, ENERGY_LEVELS, RIGS, STYLES, SUPPORTED_FPS, SYNTHS
from choreo.contracts.options import RenderOptions
from choreo.contracts.routine import IMPACTS, ROUTINE_PROFILES
from choreo.errors import ChoreoError, ParameterError
from choreo.pipeline import render_song
from choreo.runners import synth_runner
from choreo.settings import get_settings

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``render`` verb."""
    settings = get_settings()
    parser = subparsers.add_parser("render", help="render songs into dance files")
    parser.add_argument("songs", nargs="+", type=Path, metavar="SONG", help="audio files to dance to")
    parser.add_argument(
        "-o", "--out", type=Path, required=True, metavar="OUTDIR", help="folder for the files"
    )
    parser.add_argument("--fps", type=int, default=settings.default_fps, help=f"one of {SUPPORTED_FPS}")
    parser.add_argument(
        "--formats",
        default="bvh",
        help=f"comma-separated, from {','.join(RenderOptions.known_formats())} (default: bvh)",
    )
    parser.add_argument("--seed", type=int, default=settings.default_seed, help="same seed, same dance")
    parser.add_argument(
        "--style",
        default=settings.default_style,
        help=f"one of {', '.join((*STYLES, AUTO))} (or a style of --library); auto picks by tempo",
    )
    parser.add_argument(
        "--energy",
        default="auto",
        help=f"how big the moves are: {', '.join(ENERGY_LEVELS)} (follows the music)",
    )
    parser.add_argument(
        "--synth",
        default="blend",
        help=f"{' or '.join(SYNTHS)}: who performs the plan (joined phrases, or the guided LSTM)",
    )
    parser.add_argument(
        "--library", type=Path, default=None, metavar="FILE", help="phrase library (default: the shipped one)"
    )
    parser.add_argument(
        "--plan",
        type=Path,
        default=None,
        metavar="FILE",
        help="re-render from a saved (or edited) plan or summary",
    )
    parser.add_argument(
        "--routine",
        default=None,
        metavar="PROFILE",
        help=f"a workout, not a dance: {', '.join(ROUTINE_PROFILES)}, or numbers 1-10 per minute (3,5,7,5)",
    )
    parser.add_argument(
        "--impact", default="low", help=f"a workout's impact: {' or '.join(IMPACTS)} (low: no flight)"
    )
    parser.add_argument(
        "--body-mass",
        type=float,
        default=70.0,
        metavar="KG",
        help="a workout's kilocalories are for this mass",
    )
    parser.add_argument("--rig", default="smpl", help=f"joint naming of the files: {' or '.join(RIGS)}")
    parser.add_argument("--units", default=None, help="m or cm (default: the rig's, m for smpl)")
    parser.add_argument(
        "--in-place", action="store_true", help="remove horizontal root motion (for engines that drive it)"
    )
    parser.add_argument(
        "--video-from", type=float, default=0.0, metavar="S", help="mp4: start of the excerpt, seconds (0)"
    )
    parser.add_argument(
        "--video-length",
        default="30",
        metavar="S|all",
        help="mp4: length of the excerpt in seconds, or 'all' for the whole song (default: 30)",
    )
    parser.set_defaults(func=run)


def _video_length(text: str) -> float | str | None:
    """``all`` is the whole song; anything else goes to the options' validation as it is."""
    if text.strip().lower() == "all":
        return None
    try:
        return float(text)
    except ValueError:
        return text


def run(args: argparse.Namespace) -> int:
    """Render every song; a song that fails is reported and the others go on."""
    try:
        options = RenderOptions.parse(
            fps=args.fps,
            formats=tuple(f.strip().lower() for f in args.formats.split(",") if f.strip()),
            seed=args.seed,
            style=args.style,
            rig=args.rig,
            units=args.units,
            in_place=args.in_place,
            video_start_s=args.video_from,
            video_length_s=_video_length(args.video_length),
            energy=args.energy,
            synth=args.synth,
            routine=args.routine,
            impact=args.impact,
            body_mass_kg=args.body_mass,
        )
        from choreo.choreography.library import shipped_library
        from choreo.contracts.plan import read_plan

        library = shipped_library(args.library)
        if options.style != AUTO:
            library.style_index(options.style)
        plan = None
        if args.plan is not None:
            if len(args.songs) != 1:
                raise ParameterError(
                    f"--plan {args.plan} is one song's plan; give one song, not {len(args.songs)}"
                )
            plan = read_plan(args.plan)
        runner = synth_runner(options.synth, library)
    except ChoreoError as exc:
        print(f"choreo render: {exc}", file=sys.stderr)
        return 2
    failures = 0
    # tqdm (a tenth of a second of a cold start) only when there is more than one song to count
    songs: Iterable[Path] = args.songs
    write: Callable[..., None] = print
    if len(args.songs) > 1:
        from tqdm import tqdm

        songs, write = tqdm(args.songs, desc="rendering", unit="song", file=sys.stderr), tqdm.write
    for song in songs:
        try:
            result = render_song(song, args.out, options, runner=runner, library=library, plan=plan)
        except ChoreoError as exc:
            failures += 1
            reason = str(exc) if str(song) in str(exc) else f"{song}: {exc}"
            write(f"FAILED {reason} [{exc.code}]", file=sys.stderr)
            continue
        summary = result.summary
        total_s = sum(result.timings_s.values())
        pulse = f" (danced at {summary.pulse_bpm:.1f})" if summary.pulse_ratio not in (None, 1.0) else ""
        write(
            f"ok {song.name}: {summary.duration_s:.1f} s, "
            f"{summary.frames} frames at {summary.fps:g} fps, "
            f"{summary.tempo_bpm:.1f} BPM{pulse}, style {summary.style}, "
            f"{', '.join(p.name for p in result.files.values())} in {total_s:.2f} s"
        )
    if failures:
        print(f"choreo render: {failures} of {len(args.songs)} songs failed", file=sys.stderr)
        return 1
    return 0
