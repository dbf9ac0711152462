"""Breaks in the music: detection scored on songs with known breaks, and whether the dance holds on them.

Usage::

    .venv/bin/python -P bench/breaks.py [--cache ~/.cache/choreo/breaks] [--out bench/results/breaks.json]
    .venv/bin/python -P bench/breaks.py --held-out --out bench/results/breaks_heldout.json

Songs: the beat-truth set's composer (:mod:`bench.beat_truth.compose`) writes
:data:`STYLES` (twelve styles, 4/4 and 3/4, 88 to 176 BPM; :func:`songs`), and three breaks are
cut into each at known bars, one of each kind in :data:`KINDS`: every note that
would start inside the break is dropped and every note that would sound on
into it is cut to a short stab. FluidSynth renders them and the beat-truth
mastering is applied (:mod:`bench.beat_truth.render`). A break's truth is its
last note-on at or before the cut (the hit) and the first note-on after it
(the music's return), in seconds under the tempo map.

Detection (:func:`choreo.audio.structure.find_breaks` on
:func:`choreo.pipeline.prepare_song`) is scored by matching break starts
within :data:`WINDOW_S` (``mir_eval.util.match_events``): precision, recall,
and for matched breaks the end's error. Every other stretch of these songs is
music that goes on, so a detection outside the cut breaks is a false one.

The dance: each song is planned in ``--style`` on the shipped library and its
guide built (the blend synthesizer's dance), with its holds and without them
(the same plan with ``breaks_s`` emptied: what main danced). The measure is the
mean joint speed inside the song's breaks over the mean outside them, for the
song's own breaks and for another song's (the next song's breaks laid on this
dance's clock): a dancer that does not hear the breaks scores about 1 on both.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import soundfile as sf

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.beat_truth.compose import METERS, Recipe, compose  # noqa: E402
from bench.beat_truth.midi import DRUM_CHANNEL, Note, Score, tick_seconds, write_midi  # noqa: E402
from bench.beat_truth.render import RENDER_SR, fluidsynth_missing, master, render_midi  # noqa: E402

DEFAULT_CACHE = Path(os.environ.get("CHOREO_BREAKS", Path.home() / ".cache" / "choreo" / "breaks"))
WINDOW_S = 0.1
"""A detected break matches a true one when their starts are this close."""

BUILD_VERSION = 2

STYLES = (
    ("rock", 124, 50, "4/4"),
    ("funk", 104, 50, "4/4"),
    ("house", 126, 50, "4/4"),
    ("hiphop", 88, 55, "4/4"),
    ("son_montuno", 96, 50, "4/4"),
    ("samba", 100, 50, "4/4"),
    ("march", 116, 50, "4/4"),
    ("alberti", 112, 50, "4/4"),
    ("medium_swing", 132, 50, "4/4"),
    ("boogie", 168, 45, "4/4"),
    ("big_band", 176, 45, "4/4"),
    ("waltz", 168, 50, "3/4"),
)
"""Dense styles: music that goes on on every beat, so the only breaks are the cut ones."""

TUNING_FIRST_SEED, HELD_OUT_FIRST_SEED = 101, 201
"""The detection's thresholds were chosen on the songs seeded from 101; those from 201 (other
arrangements, other break positions) were rendered afterwards and never tuned on."""


def songs(first_seed: int) -> tuple[Recipe, ...]:
    """:data:`STYLES` composed with seeds counting up from ``first_seed``."""
    return tuple(
        Recipe(style, first_seed + k, bpm, seconds, meter=meter)
        for k, (style, bpm, seconds, meter) in enumerate(STYLES)
    )


KINDS = ("stop-bar", "one-beat", "chord-bar")
"""Break kinds, one of each per song: a hit on a downbeat and silence to the next bar; a hit, one
silent beat, and the music back on the next; a chord struck on a downbeat and held, nothing else, to
the next bar."""


def break_shares(seed: int) -> list[float]:
    """Where in the song (as a share of its bars) its three breaks are cut: seeded, 0.12 to 0.9, at
    least 0.15 apart, so songs' breaks fall at different times (the mismatched measure needs that)."""
    rng = np.random.default_rng(seed)
    while True:
        shares = np.sort(rng.uniform(0.12, 0.9, 3))
        if np.diff(shares).min() >= 0.15:
            return [float(x) for x in shares]


@dataclass(frozen=True)
class Cut:
    """A break cut into a score: the hit's tick, the return's tick, its kind."""

    hit: int
    back: int
    kind: str


def cut_breaks(score: Score, recipe: Recipe) -> list[Cut]:
    """Cut :data:`KINDS` breaks into ``score`` (in place) at :func:`break_shares`; returns them."""
    beats_per_bar, beat, _ = METERS[recipe.meter]
    bar_ticks = beats_per_bar * beat
    downbeats = score.downbeat_ticks
    cuts = []
    for share, kind in zip(break_shares(recipe.seed), KINDS, strict=True):
        bar = downbeats[int(share * (len(downbeats) - 2))]
        if kind == "one-beat":
            hit, back = bar + beat, bar + 3 * beat
        else:
            hit, back = bar, bar + bar_ticks
        stab = beat // 4
        for part in score.parts:
            held = kind == "chord-bar" and part.channel != DRUM_CHANNEL
            kept = []
            for note in part.notes:
                if hit < note.tick < back:
                    continue
                end = note.tick + note.length
                if note.tick == hit and held:
                    note = Note(note.tick, back - hit, note.pitch, note.velocity)
                elif note.tick <= hit < end and end > hit + stab:
                    note = Note(note.tick, max(1, hit + stab - note.tick), note.pitch, note.velocity)
                kept.append(note)
            part.notes = kept
        cuts.append(Cut(hit, back, kind))
    return cuts


def truth_of(score: Score, cuts: list[Cut]) -> list[dict]:
    """Per cut: the last note-on at or before its hit, the first at or after its return, seconds."""
    ticks = np.unique([n.tick for part in score.parts for n in part.notes])
    rows = []
    for cut in cuts:
        start = int(ticks[ticks <= cut.hit][-1])
        end = int(ticks[ticks >= cut.back][0])
        start_s, end_s = tick_seconds(np.array([start, end]), score.tempo)
        rows.append({"kind": cut.kind, "start_s": round(float(start_s), 4), "end_s": round(float(end_s), 4)})
    return rows


def build(cache: Path, recipes: tuple[Recipe, ...]) -> list[dict]:
    """Render every song with its breaks into ``cache`` (once); their truth records."""
    cache.mkdir(parents=True, exist_ok=True)
    records = []
    for recipe in recipes:
        name = f"{recipe.style}-{recipe.seed}"
        record_path = cache / f"{name}.json"
        if record_path.is_file() and json.loads(record_path.read_text())["version"] == BUILD_VERSION:
            records.append(json.loads(record_path.read_text()))
            continue
        print(f"building {name}", flush=True)
        score = compose(recipe)
        breaks = truth_of(score, cut_breaks(score, recipe))
        midi = cache / f"{name}.mid"
        write_midi(score, midi)
        rng = np.random.default_rng(recipe.seed + 1000)
        audio = render_midi(midi, cache / f"{name}.render.wav", reverb_room=float(rng.uniform(0.1, 0.5)))
        (cache / f"{name}.render.wav").unlink()
        sf.write(cache / f"{name}.flac", master(audio, sr=RENDER_SR, rng=rng), RENDER_SR, subtype="PCM_16")
        record = {
            "version": BUILD_VERSION,
            "name": name,
            "style": recipe.style,
            "bpm": recipe.bpm,
            "meter": recipe.meter,
            "breaks": breaks,
        }
        record_path.write_text(json.dumps(record, indent=1) + "\n")
        records.append(record)
    return records


def score_detection(truth: np.ndarray, found: np.ndarray) -> dict:
    """Matches of break starts within :data:`WINDOW_S`, and the matched breaks' end errors."""
    import mir_eval

    pairs = mir_eval.util.match_events(truth[:, 0], found[:, 0], WINDOW_S) if found.size else []
    end_errors = [abs(float(found[j, 1] - truth[i, 1])) for i, j in pairs]
    return {
        "true": int(truth.shape[0]),
        "found": int(found.shape[0]),
        "matched": len(pairs),
        "matched_kinds": [int(i) for i, _ in pairs],
        "end_error_s": [round(e, 3) for e in end_errors],
    }


def joint_positions_of(poses: np.ndarray, fps: float) -> np.ndarray:
    """Joint positions ``[F, 24, 3]`` of guide poses ``[F, 75]``."""
    from choreo.motion.kinematics import joint_positions
    from choreo.motion.motion import Motion

    return joint_positions(
        Motion(fps=fps, root_translation=poses[:, 72:75], rotations=poses[:, :72].reshape(-1, 24, 3))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--style", default="salsa")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--held-out", action="store_true", help="the songs seeded from 201, which the thresholds never saw"
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "breaks.json")
    args = parser.parse_args()
    missing = fluidsynth_missing()
    if missing:
        raise SystemExit(missing)
    from choreo.audio.structure import analyze_structure, find_breaks
    from choreo.choreography.guide import build_guide
    from choreo.choreography.library import shipped_library
    from choreo.choreography.planner import plan_dance
    from choreo.metrics.break_holds import break_speed_ratio
    from choreo.pipeline import prepare_song

    first_seed = HELD_OUT_FIRST_SEED if args.held_out else TUNING_FIRST_SEED
    records = build(args.cache, songs(first_seed))
    library = shipped_library()
    rows, dances, cpu = [], [], []  # dances: per song, its joint positions with and without holds
    for record in records:
        features = prepare_song(args.cache / f"{record['name']}.flac", fps=30)
        started = time.process_time()
        found = find_breaks(features)
        cpu.append((time.process_time() - started) / (features.duration_s / 60.0))
        truth = np.array([[b["start_s"], b["end_s"]] for b in record["breaks"]])
        row = {"name": record["name"], "truth": truth.tolist(), "detected": found.round(3).tolist()}
        row |= score_detection(truth, found)
        plan = plan_dance(library, analyze_structure(features), style=args.style, seed=args.seed)
        row["plan_breaks_s"] = [list(b) for b in plan.breaks_s]
        dances.append(
            {
                held: joint_positions_of(build_guide(library, dance, features.n_frames, 30).poses, 30.0)
                for held, dance in (("holds", plan), ("no_holds", replace(plan, breaks_s=())))
            }
        )
        rows.append(row)
    dance = {}
    for k, row in enumerate(rows):
        other = rows[(k + 1) % len(rows)]
        for held, positions in dances[k].items():
            row[f"own_{held}"] = break_speed_ratio(positions, np.array(row["truth"]), fps=30.0)
            row[f"mismatched_{held}"] = break_speed_ratio(positions, np.array(other["truth"]), fps=30.0)
    for held in ("holds", "no_holds"):
        own = [r[f"own_{held}"] for r in rows if r[f"own_{held}"] is not None]
        mismatched = [r[f"mismatched_{held}"] for r in rows if r[f"mismatched_{held}"] is not None]
        dance[held] = {
            "own_break_speed_ratio_mean": round(float(np.mean(own)), 4),
            "own_break_speed_ratio_max": round(float(np.max(own)), 4),
            "mismatched_break_speed_ratio_mean": round(float(np.mean(mismatched)), 4),
            "mismatched_break_speed_ratio_min": round(float(np.min(mismatched)), 4),
        }
    true = sum(r["true"] for r in rows)
    found_n = sum(r["found"] for r in rows)
    matched = sum(r["matched"] for r in rows)
    by_kind = {kind: sum(i == k for r in rows for i in r["matched_kinds"]) for k, kind in enumerate(KINDS)}
    ends = [e for r in rows for e in r["end_error_s"]]
    report = {
        "command": " ".join(["python -P bench/breaks.py", *sys.argv[1:]]),
        "machine": platform.platform(),
        "window_s": WINDOW_S,
        "songs_first_seed": first_seed,
        "tuned_on": not args.held_out,
        "songs": len(rows),
        "detection": {
            "true": true,
            "found": found_n,
            "matched": matched,
            "precision": round(matched / found_n, 4) if found_n else None,
            "recall": round(matched / true, 4),
            "recall_by_kind": {kind: f"{by_kind[kind]}/{len(rows)}" for kind in KINDS},
            "end_error_s_median": round(float(np.median(ends)), 4) if ends else None,
            "end_error_s_max": round(float(np.max(ends)), 4) if ends else None,
            "cpu_ms_per_song_minute": round(1000 * float(np.mean(cpu)), 2),
        },
        "dance": {"style": args.style, "seed": args.seed, **dance},
        "per_song": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: report[k] for k in ("detection", "dance")}, indent=1))


if __name__ == "__main__":
    main()
