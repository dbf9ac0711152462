"""Check that a speed-up changed no result: every song's beats, and three songs' rendered files.

Usage::

    .venv/bin/python -P bench/same_output.py dump OUT_DIR [--music DIR] [--beat-truth DIR]
    .venv/bin/python -P bench/same_output.py compare BEFORE_DIR AFTER_DIR

``dump`` runs this tree's code: for every song under ``--music`` (and every ``.flac`` of
the beat-truth cache, whose beats ``bench/beats.py`` scores) it stores the beat-pointer
decoding (:func:`choreo.audio.beat_pointer.track_pointer_beats`'s fractional frames and
tempo) and the features' beat and downbeat times; the three songs of :data:`RENDERED`
(the warm bench's EarthRise among them) are rendered with the default options (BVH,
contact sheet, summary) into ``OUT_DIR``. Run it from the tree before a change and from
the one after (``PYTHONPATH`` and the working directory at that tree), then ``compare``:
the largest beat difference in seconds over all songs, and each BVH byte for byte (or its
largest difference in a number) is printed; the exit status is 1 where any differs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
MUSIC = REPO.parent / "shared" / "data" / "music"
BEAT_TRUTH = Path.home() / ".cache" / "choreo" / "beat-truth"
SONG_SUFFIXES = (".ogg", ".opus", ".flac", ".mp3", ".wav")
RENDERED = (
    "gpl/hedgewars__Music__EarthRise.ogg",
    "cc/Kevin_MacLeod_-_Vibe_Ace.hq.ogg",
    "gpl/supertux__forest__forest3.ogg",
)


def _songs(music: Path, beat_truth: Path) -> list[Path]:
    found = sorted(p for p in music.rglob("*") if p.suffix in SONG_SUFFIXES)
    return found + sorted(beat_truth.glob("*.flac")) if beat_truth.is_dir() else found


def dump(out: Path, music: Path, beat_truth: Path) -> None:
    """Store this tree's beats of every song and its renders of :data:`RENDERED` under ``out``."""
    import choreo.audio.features as features_module
    from choreo.pipeline import RenderOptions, prepare_song, render_song

    out.mkdir(parents=True, exist_ok=True)
    seen: dict[str, np.ndarray] = {}
    observe, decode = features_module.beat_observation, features_module.track_pointer_beats

    def observed(*args: object, **kwargs: object) -> np.ndarray:
        seen["observation"] = observe(*args, **kwargs)
        return seen["observation"]

    def decoded(*args: object, **kwargs: object) -> tuple[np.ndarray, float]:
        seen["decoded"], tempo = decode(*args, **kwargs)
        seen["tempo"] = np.array([tempo])
        return seen["decoded"], tempo

    # The features' own calls, recorded on their way through (the functions themselves run unchanged).
    features_module.beat_observation, features_module.track_pointer_beats = observed, decoded
    beats: dict[str, np.ndarray] = {}
    for song in _songs(music, beat_truth):
        features = prepare_song(song)
        for name in ("observation", "decoded", "tempo"):
            beats[f"{song.name}/{name}"] = seen.pop(name)
        beats[f"{song.name}/beat_times"] = features.beat_times
        beats[f"{song.name}/downbeat_times"] = features.downbeat_times
        print(song.name, beats[f"{song.name}/decoded"].size, "beats", file=sys.stderr)
    features_module.beat_observation, features_module.track_pointer_beats = observe, decode
    np.savez(out / "beats.npz", **beats)
    for relative in RENDERED:
        song = music / relative
        render_song(song, out / song.stem, RenderOptions(formats=("bvh",)))


def compare(before: Path, after: Path) -> bool:
    """Print the differences of two dumps; True where nothing differs."""
    a, b = np.load(before / "beats.npz"), np.load(after / "beats.npz")
    common = sorted(set(a.files) & set(b.files))
    same, worst = True, 0.0
    for key in common:
        x, y = a[key], b[key]
        if x.shape != y.shape:
            print(f"{key}: {x.size} against {y.size} values")
            same = False
            continue
        worst = max(worst, float(np.abs(x - y).max(initial=0.0)))
    only = len(set(a.files) ^ set(b.files)) // 5
    print(f"{len(common) // 5} songs, largest difference {worst:.3g} (observation, frames, BPM, s)")
    if only:
        print(f"{only} songs in one dump only (the beat-truth cache grew between them): not compared")
    same &= worst == 0.0
    for relative in RENDERED:
        stem = Path(relative).stem
        x, y = (before / stem / f"{stem}.bvh").read_bytes(), (after / stem / f"{stem}.bvh").read_bytes()
        summaries = [json.loads((d / stem / f"{stem}.json").read_text()) for d in (before, after)]
        for summary in summaries:
            summary.pop("timings_s", None)
        if summaries[0] != summaries[1]:
            print(f"{stem}.json: the summaries differ (timings aside)")
            same = False
        if x == y:
            print(f"{stem}.bvh: byte-identical")
            continue
        same = False
        numbers = [np.array(t.split()[t.split().index(b"MOTION") + 6 :], dtype=float) for t in (x, y)]
        gap = np.abs(numbers[0] - numbers[1]).max() if numbers[0].shape == numbers[1].shape else np.inf
        print(f"{stem}.bvh: differs, largest difference in a number {gap:.3g}")
    return same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    dumping = sub.add_parser("dump")
    dumping.add_argument("out", type=Path)
    dumping.add_argument("--music", type=Path, default=MUSIC)
    dumping.add_argument("--beat-truth", type=Path, default=BEAT_TRUTH)
    comparing = sub.add_parser("compare")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.out, args.music, args.beat_truth)
    else:
        sys.exit(0 if compare(args.before, args.after) else 1)


if __name__ == "__main__":
    main()
