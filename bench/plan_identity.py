"""Check that a change to the planner keeps its plans: dump every plan of a fixed set, compare two dumps.

Usage::

    .venv/bin/python -P bench/plan_identity.py dump OUT.json [--cache DIR]
    .venv/bin/python -P bench/plan_identity.py compare BEFORE.json AFTER.json

``dump`` plans every song of ``../shared/data/music`` (and the 20-minute join of
``bench/choreography.py``) in each style of the shipped library, at several
energies and seeds, and the song's workout in two profiles where the song is in
4/4, and writes each plan's JSON (``Plan.to_dict``) keyed by song, style,
energy and seed. The music structures are analysed once and kept in ``--cache``
(they do not depend on the planner), so a second dump only plans. ``compare``
exits non-zero and names the keys whose plans differ. Run ``dump`` on the
commit before a change and on the change, then ``compare``.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MUSIC = REPO.parent / "shared" / "data" / "music"
SUFFIXES = {".ogg", ".opus", ".mp3", ".wav", ".flac"}
CASES = [("auto", 0), ("auto", 1), ("auto", 7), ("low", 2), ("high", 3)]
"""(energy, seed) planned for every song and style."""


def _structures(cache: Path) -> dict:
    """Song name to its music structure, analysed once and kept in ``cache``."""
    sys.path.insert(0, str(REPO / "bench"))
    from choreography import SONGS, TWENTY_MIN_S, _features

    from choreo.audio.structure import analyze_structure

    cache.mkdir(parents=True, exist_ok=True)
    songs = {p.name: [p] for p in sorted(MUSIC.rglob("*")) if p.suffix in SUFFIXES}
    songs["20min-join"] = SONGS["20min"]
    out = {}
    for name, paths in songs.items():
        kept = cache / f"{name}.pkl"
        if kept.exists():
            out[name] = pickle.loads(kept.read_bytes())  # noqa: S301 (this script's own cache)
            continue
        features = _features(paths, TWENTY_MIN_S if name == "20min-join" else None)
        out[name] = analyze_structure(features)
        kept.write_bytes(pickle.dumps(out[name]))
        print("analysed", name, file=sys.stderr)
    return out


def dump(path: Path, cache: Path) -> None:
    """Write every plan of the fixed set to ``path``."""
    from choreo.choreography.library import shipped_library
    from choreo.choreography.planner import plan_dance
    from choreo.errors import ChoreoError
    from choreo.workout.planner import plan_workout

    library = shipped_library()
    plans = {}
    for name, music in _structures(cache).items():
        for style in library.styles:
            for energy, seed in CASES:
                plan = plan_dance(library, music, style=style, energy=energy, seed=seed)
                plans[f"{name}|{style}|{energy}|{seed}"] = plan.to_dict()
            if int(music.beats_per_bar) == 4:
                for profile in ("steady", "intervals"):
                    try:
                        plan = plan_workout(library, music, style=style, profile=profile, seed=1)
                    except ChoreoError as error:  # a song a workout cannot count: its refusal is kept
                        plans[f"{name}|{style}|workout-{profile}|1"] = repr(error)
                        continue
                    plans[f"{name}|{style}|workout-{profile}|1"] = plan.to_dict()
    path.write_text(json.dumps(plans, sort_keys=True) + "\n")
    print(f"{len(plans)} plans -> {path}", file=sys.stderr)


def compare(before: Path, after: Path) -> int:
    """0 if the two dumps hold the same plans, else 1 (the differing keys printed)."""
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    for key in differ:
        print("differs:", key)
    print(f"{len(a)} plans before, {len(b)} after, {len(differ)} differ")
    return 1 if differ else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "plan_identity_structures")
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.out, args.cache)
    else:
        sys.exit(compare(args.before, args.after))


if __name__ == "__main__":
    main()
