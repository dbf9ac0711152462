"""How often Choreo's beats (which the planner follows) agree with librosa's (which beat alignment scores).

Usage::

    .venv/bin/python -P bench/beat_agreement.py [--music ../shared/data/music]
        [--out bench/results/beat_agreement.json]

For every song under ``--music``: the tempo of each tracker and the share of
librosa's beats that have one of the planner's beats (the steady bars' beats of
:func:`choreo.audio.structure.analyze_structure`) within :data:`TOLERANCE_S`. A
dance whose stops land on the planner's beats can only score on the beat
alignment measure where the two agree; an octave apart, it still meets every
other librosa beat.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.beat_truth.trackers import librosa_beat_times  # noqa: E402
from choreo.audio.formats import AUDIO_SUFFIXES  # noqa: E402
from choreo.audio.structure import analyze_structure  # noqa: E402
from choreo.pipeline import prepare_song  # noqa: E402

TOLERANCE_S = 0.07
"""Two beats agree when they are this close (a little over two frames at 30 fps)."""


def _tempo_bpm(beats: np.ndarray) -> float:
    return round(60.0 / float(np.median(np.diff(beats))), 1) if beats.size > 1 else 0.0


def agreement(song: Path) -> dict[str, float]:
    """Both trackers' tempi (60 over the median interval) and the share of librosa's beats near ours."""
    ours = analyze_structure(prepare_song(song)).beat_times
    theirs = librosa_beat_times(song)
    share = 0.0
    if ours.size and theirs.size:
        share = float(np.mean(np.min(np.abs(theirs[:, None] - ours[None, :]), axis=1) <= TOLERANCE_S))
    return {"choreo_bpm": _tempo_bpm(ours), "librosa_bpm": _tempo_bpm(theirs), "agree": round(share, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--music", type=Path, default=REPO.parent / "shared" / "data" / "music")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "beat_agreement.json")
    args = parser.parse_args()
    songs = sorted(p for p in args.music.rglob("*") if p.suffix.lower() in AUDIO_SUFFIXES)
    results = {}
    for song in songs:
        results[song.name] = agreement(song)
        print(song.name, results[song.name], file=sys.stderr)
    low = sorted(name for name, r in results.items() if r["agree"] < 0.8)
    report = {"tolerance_s": TOLERANCE_S, "songs": results, "under_80_percent": low}
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"{len(low)} of {len(results)} songs agree on under 80 % of librosa's beats; wrote {args.out}")


if __name__ == "__main__":
    main()
