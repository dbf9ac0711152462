"""``choreo eval``: render songs, score the dances, and score the retimed mocap beside them."""

from __future__ import annotations

import argparse
import json
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
from tqdm import tqdm

from choreo.audio import MusicFeatures, song_sha256
from choreo.choreography.library import shipped_library
from choreo.contracts.choices import AUTO, STYLES
from choreo.errors import ChoreoError, ParameterError
from choreo.metrics.beat_align import beat_align_score
from choreo.metrics.context import score_in_context
from choreo.metrics.music_pool import MusicPool
from choreo.metrics.reference import ReferenceDance, load_reference, load_style_windows
from choreo.metrics.repetition import SourceSpan
from choreo.metrics.report import EvalRow, diversity_report, format_table, goal_report
from choreo.metrics.score import score_motion
from choreo.metrics.style import STYLE_WINDOW_S, StyleCentroids, style_centroids
from choreo.motion import Motion, joint_positions
from choreo.pipeline import RenderOptions, finish_motion, perform_song, prepare_song
from choreo.postprocess.ground import align_floor
from choreo.runners import synth_runner
from engines.runner import SongRunner

__all__ = ["EVAL_FPS", "register"]

EVAL_FPS = (30, 60)
"""Rates the measures are reported at (the reference mocap exists at both)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``eval`` verb."""
    parser = subparsers.add_parser(
        "eval",
        help="render songs and score the dances beside the retimed mocap",
        description="Render each song with N seeds, score every dance (beat alignment, foot skating, PFC, "
        "jerk, freeze ratio, joint-limit violations, diversity) and score the retimed ground-truth mocap "
        "with the same code.",
    )
    parser.add_argument("songs", nargs="+", type=Path, metavar="SONG", help="audio files to dance to")
    parser.add_argument("--seeds", type=int, default=1, metavar="N", help="seeds 0..N-1 per song (default 1)")
    parser.add_argument("--fps", type=int, default=30, choices=EVAL_FPS, help="rate to score at (default 30)")
    parser.add_argument("--style", default=AUTO, help=f"one of {', '.join((*STYLES, AUTO))}")
    parser.add_argument(
        "--synth",
        default="blend",
        help="who performs the plan: blend (the default) or model (the guided LSTM)",
    )
    parser.add_argument(
        "--library",
        type=Path,
        metavar="FILE",
        help="phrase library for the blend (default: the shipped one; build one without the held-out clips "
        "to score against them)",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every number to this JSON file")
    parser.add_argument(
        "--reference",
        type=Path,
        metavar="FILE",
        help="reference.npz from `choreo prepare-data` (retimed held-out mocap) to score beside the dances",
    )
    parser.add_argument(
        "--music-dir",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="where to find the reference clips' songs by file name, besides the SONG arguments (repeatable)",
    )
    parser.add_argument(
        "--style-reference",
        type=Path,
        metavar="FILE",
        help="train.npz from `choreo prepare-data` (mocap never held out): the style centroids of the style "
        "separability measure come from its 4 s windows",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Score every song and seed, then the reference; a song that fails is reported, the rest go on."""
    try:
        if args.seeds < 1:
            raise ParameterError(f"--seeds must be at least 1, got {args.seeds}")
        RenderOptions.parse(fps=args.fps, style=args.style, synth=args.synth)  # rejects bad options first
        reference = load_reference(args.reference, fps=args.fps) if args.reference else []
        centroids = _centroids(args.style_reference, args.fps) if args.style_reference else None
        pool = MusicPool(_pool_songs(args, reference), lambda song: _features(song, args.fps))
        args.phrase_library = shipped_library(args.library)
        runner = synth_runner(args.synth, args.phrase_library)
    except ChoreoError as exc:
        print(f"choreo eval: {exc}", file=sys.stderr)
        return 2

    failures: list[dict[str, str]] = []
    rows = _score_songs(args, runner, pool, centroids, failures)
    reference_rows = _score_reference_clips(args, reference, pool, centroids, failures)
    diversity = diversity_report(rows, reference_rows)
    summary = goal_report(rows, reference_rows)

    print(format_table(rows, f"generated dances at {args.fps} fps (model {runner.spec.version})"))
    if reference_rows:
        print()
        print(format_table(reference_rows, f"retimed mocap at {args.fps} fps ({args.reference})"))
    print()
    print("diversity: " + ", ".join(f"{k} {v}" for k, v in diversity.items()))
    print("goals met: " + ", ".join(f"{k} {v}" for k, v in summary["met"].items()))
    if args.json:
        report = {
            "fps": args.fps,
            "seeds": args.seeds,
            "style": args.style,
            "model": {"version": runner.spec.version, "trained": runner.spec.trained},
            "synthesizer": args.synth,
            "reference_file": str(args.reference) if args.reference else None,
            "style_reference_file": str(args.style_reference) if args.style_reference else None,
            "mismatched_song": {song: pool.mismatched(song) for song in sorted({r.song for r in rows})},
            "songs": [r.to_dict() for r in rows],
            "reference": [r.to_dict() for r in reference_rows],
            "diversity": diversity,
            "summary": summary,
            "failures": failures,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 1 if failures else 0


def _score_songs(
    args: argparse.Namespace,
    runner: SongRunner,
    pool: MusicPool,
    centroids: StyleCentroids | None,
    failures: list[dict[str, str]],
) -> list[EvalRow]:
    """Render and score every song with every seed; beat alignment also at the other rate."""
    rows = []
    for song in tqdm(args.songs, desc="scoring", unit="song", file=sys.stderr):
        try:
            features = _features(song, args.fps)
            sha256 = song_sha256(song)
            beats = pool.beats(song.name)
            for seed in range(args.seeds):
                options = RenderOptions(fps=args.fps, seed=seed, style=args.style, synth=args.synth)
                danced = perform_song(runner, features, options, args.phrase_library, song_sha256=sha256)
                plan, generated, dance = danced.choreography.plan, danced.generated, danced.motion
                style = plan.style
                scores = score_motion(dance, beats)
                spans = [SourceSpan(s.clip, *s.source_span_s) for s in plan.segments]
                context = pool.context(
                    song.name,
                    duration_s=dance.duration_s,
                    style=style,
                    centroids=centroids,
                    junction_times_s=plan.junctions_s,
                    source_spans=spans,
                )
                measures = score_in_context(joint_positions(dance), context, fps=dance.fps)
                by_fps = {args.fps: scores.beat_align}
                for fps in EVAL_FPS:
                    if fps != args.fps:
                        other = RenderOptions(fps=fps, seed=seed, style=args.style, synth=args.synth)
                        by_fps[fps] = _beat_align(finish_motion(generated, other), beats)
                rows.append(
                    EvalRow(
                        song.name,
                        seed,
                        scores,
                        style=style,
                        beat_align_by_fps=by_fps,
                        context=measures,
                        plan_phrases=tuple(s.phrase for s in plan.segments),
                    )
                )
        except ChoreoError as exc:
            failures.append({"song": str(song), "error": str(exc), "code": exc.code})
            tqdm.write(f"FAILED {song}: {exc} [{exc.code}]", file=sys.stderr)
    return rows


def _score_reference_clips(
    args: argparse.Namespace,
    reference: list[ReferenceDance],
    pool: MusicPool,
    centroids: StyleCentroids | None,
    failures: list[dict[str, str]],
) -> list[EvalRow]:
    """Score every retimed clip; beat alignment also at the other rate where the file holds it."""
    other_rates = (
        [_load_if_held(args.reference, fps) for fps in EVAL_FPS if fps != args.fps] if reference else []
    )
    options = RenderOptions(fps=args.fps, style=args.style)
    rows = []
    for i, dance in enumerate(reference):
        try:
            others = [
                clips[i]
                for clips in other_rates
                if len(clips) == len(reference) and (clips[i].clip, clips[i].song) == (dance.clip, dance.song)
            ]
            rows.append(_score_reference(dance, others, options, pool, centroids))
        except ChoreoError as exc:
            failures.append({"song": dance.song, "clip": dance.clip, "error": str(exc), "code": exc.code})
            print(f"reference clip {dance.clip} not scored: {exc}", file=sys.stderr)
    return rows


def _score_reference(
    dance: ReferenceDance,
    other_rates: list[ReferenceDance],
    options: RenderOptions,
    pool: MusicPool,
    centroids: StyleCentroids | None,
) -> EvalRow:
    """Score one retimed clip against the beats of its song window, with the same measures.

    ``other_rates`` are the same clip at other frame rates: only their beat alignment is taken.
    """
    beats = pool.beats(dance.song)
    # Recorded mocap keeps its own floor height; calibrate it to y = 0 by one constant
    # (nothing inside the motion changes) so the foot-contact thresholds mean the same.
    motion = align_floor(dance.motion)
    scores = score_motion(motion, dance.beats_in_clip(beats))
    context = pool.context(
        dance.song,
        start_s=dance.song_start_s,
        duration_s=motion.duration_s,
        style=dance.style,
        centroids=centroids,
    )
    measures = score_in_context(joint_positions(motion), context, fps=motion.fps)
    by_fps = {options.fps: scores.beat_align}
    for other in other_rates:
        by_fps[int(other.motion.fps)] = _beat_align(other.motion, other.beats_in_clip(beats))
    return EvalRow(
        dance.song,
        None,
        scores,
        clip=dance.clip,
        style=dance.style,
        beat_align_by_fps=by_fps,
        context=measures,
    )


def _load_if_held(path: Path, fps: int) -> list[ReferenceDance]:
    """The reference clips at ``fps``, or none where the file does not hold that rate."""
    try:
        return load_reference(path, fps=fps)
    except ParameterError:
        return []


def _beat_align(motion: Motion, beat_times_s: np.ndarray) -> float:
    return beat_align_score(joint_positions(motion), beat_times_s, fps=motion.fps)


def _features(song: Path, fps: int) -> MusicFeatures:
    """The song's features as the pipeline computes them, once per song and rate."""
    return _features_cached(str(Path(song).resolve()), fps)


@lru_cache(maxsize=64)
def _features_cached(song: str, fps: int) -> MusicFeatures:
    return prepare_song(Path(song))  # at the model's native fps, whatever the rate scored at


def _centroids(path: Path, fps: int) -> StyleCentroids:
    return style_centroids(load_style_windows(path, fps=fps, window_s=STYLE_WINDOW_S))


def _pool_songs(args: argparse.Namespace, reference: list[ReferenceDance]) -> list[Path]:
    """The SONGs and the reference clips' songs: the songs whose beats may mismatch a dance.

    A clip whose song is not found is left out here and fails on its own when scored.
    """
    songs = {song.name: song for song in args.songs}
    for dance in reference:
        if dance.song not in songs:
            try:
                songs[dance.song] = _find_song(dance.song, args.songs, args.music_dir)
            except ParameterError:
                continue
    return list(songs.values())


def _find_song(name: str, songs: list[Path], music_dirs: list[Path]) -> Path:
    for song in songs:
        if song.name == name and song.is_file():
            return song
    for folder in music_dirs:
        for found in sorted(Path(folder).rglob(name)):
            if found.is_file():
                return found
    raise ParameterError(f"song {name!r} of the reference clip not found among the SONGs or --music-dir")
