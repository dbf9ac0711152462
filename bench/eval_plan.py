"""Issue 11's evaluation: the blend and the model synthesizer (same plans) beside the held-out mocap.

Usage::

    .venv/bin/python -P bench/eval_plan.py --data .device/data --library LIBRARY.npz \\
        [--synths blend,model] [--seeds 3] [--fps 30] [--out bench/results/eval_plan30.json]

For each synthesizer it runs ``choreo eval`` twice in a fresh process: on the
six held-out songs (beside ``--data``/reference.npz, style centroids from
``--data``/train.npz), and on a 14-minute song made by joining two held-out
songs end to end (the longest held-out song, 12.6 minutes, then the start of
another), for the stall and repetition goals; the blend also dances it in salsa,
the style with the most source material (``auto`` picks it too where the library
holds under 20 s of the tempo's style per minute of the song, as the held-out-free
library does for breakdance). ``--library`` should be a phrase
library built without the held-out clips (``choreo library build ... --exclude
60_15_scaled,61_15_scaled,05_20,85_04_keijiro_neo30fps``), so the blend is not
scored against mocap it copies. The JSON holds every ``choreo eval`` report with
its command line and wall time.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MUSIC = REPO.parent / "shared" / "data" / "music"
HELD_OUT_SONGS = [
    "cc/Kevin_MacLeod_-_Vibe_Ace.hq.ogg",
    "gpl/hedgewars__Music__hell.ogg",
    "gpl/supertux__forest__forest.ogg",
    "gpl/supertux__misc__theme.ogg",
    "gpl/xmoto__Musics__batcave.ogg",
    "gpl/warzone2100__legacy_soundtrack__track10.opus",
]
LONG_SOURCES = [HELD_OUT_SONGS[5], HELD_OUT_SONGS[1]]
LONG_S = 14 * 60.0


def write_long_song(path: Path, music: Path) -> Path:
    """Join the long-song sources end to end and cut at 14 minutes, as a 22.05 kHz mono WAV."""
    import numpy as np
    import soundfile as sf

    from choreo.audio import load_audio

    sr = 22050
    y = np.concatenate([load_audio(music / song, sr=sr) for song in LONG_SOURCES])[: int(LONG_S * sr)]
    sf.write(path, y, sr, subtype="PCM_16")
    return path


def run_eval(
    songs: list[Path], synth: str, args: argparse.Namespace, json_path: Path, *, style: str = "auto"
) -> dict:
    """One ``choreo eval`` in a fresh process; its report, command and wall time."""
    command = [sys.executable, "-P", "-m", "choreo.cli.main", "eval", *map(str, songs)]
    command += ["--seeds", str(args.seeds), "--fps", str(args.fps), "--synth", synth, "--style", style]
    command += [
        "--reference",
        str(args.data / "reference.npz"),
        "--style-reference",
        str(args.data / "train.npz"),
    ]
    command += ["--music-dir", str(args.music), "--json", str(json_path)]
    if args.library is not None:  # both synthesizers perform a plan on the library
        command += ["--library", str(args.library)]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    wall_s = time.perf_counter() - started
    if not json_path.is_file():
        raise SystemExit(f"choreo eval wrote no report (exit {done.returncode}):\n{done.stderr[-3000:]}")
    report = json.loads(json_path.read_text(encoding="utf-8"))
    shown = [part.replace(str(args.music), "MUSIC") for part in command[2:]]
    return {
        "command": "python " + " ".join(shown),
        "exit_status": done.returncode,
        "wall_s": round(wall_s, 1),
        **report,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, required=True, help="folder of reference.npz and train.npz")
    parser.add_argument("--library", type=Path, help="phrase library without the held-out clips")
    parser.add_argument("--music", type=Path, default=MUSIC, help="../shared/data/music (default)")
    parser.add_argument("--synths", default="blend,model")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--fps", type=int, default=30)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "eval_plan30.json")
    args = parser.parse_args()
    results: dict[str, object] = {
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "library": str(args.library) if args.library else None,
        "long_song": {"sources": [Path(p).name for p in LONG_SOURCES], "duration_s": LONG_S},
    }
    with tempfile.TemporaryDirectory() as tmp:
        long_song = write_long_song(Path(tmp) / "held_out_14min.wav", args.music)
        songs = [args.music / song for song in HELD_OUT_SONGS]
        for synth in args.synths.split(","):
            results[synth] = {
                "held_out": run_eval(songs, synth, args, Path(tmp) / f"{synth}.json"),
                "long_song": run_eval([long_song], synth, args, Path(tmp) / f"{synth}_long.json"),
            }
            if synth == "blend":  # salsa whatever auto picks: the style with the most material
                results[synth]["long_song_salsa"] = run_eval(
                    [long_song], synth, args, Path(tmp) / f"{synth}_long_salsa.json", style="salsa"
                )
            print(f"{synth}: done", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
