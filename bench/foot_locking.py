"""Issue 21: feet that hold the floor on the held-out songs, per style, beside held-out and training mocap.

Usage::

    .venv/bin/python -P bench/foot_locking.py --data /work/evaldata/data \\
        --library /work/evaldata/library-heldout.npz [--synths blend,model] [--seeds 1] [--fps 30] \\
        [--out bench/results/foot_locking.json]

Each of the six held-out songs (``bench/eval_plan.py``'s) is danced in every
style that has held-out mocap (breakdance, modern, salsa) with each seed, on a library built
without the held-out clips. Every dance is finished twice from the same
performance: ``unlocked`` (the chain without its last step, which is what
main's chain was less its root-shift pinning) and ``locked`` (today's chain,
the locks of :mod:`choreo.postprocess.foot_locking` and :mod:`~choreo.postprocess.hand_locking`).
The measures, per dance:
foot skating by the frozen ruler (:mod:`choreo.metrics.foot_skate`) and the
share of frames with a foot on the ground beside it; the sole's depth under
the floor (p99 over frames and feet); the lowest sole of each foot in
contact (the finished contact track) above the floor (p99); the junction jerk
ratio, pose spread, reach and beat alignment; runs of more than two frames
with a knee straighter than 175 degrees, per minute; the root's mean
horizontal distance from the unlocked dance's; the CPU seconds of the locks
(contact detection on the performed dance, :func:`lock_feet` and
:func:`~choreo.postprocess.hand_locking.lock_hands`) per minute of song; the share
of frames with a hand in contact and the hands' mean horizontal speed in them. The held-out
mocap (``reference.npz``) and the training sources (``train.npz``), floors
calibrated by :func:`align_floor` as ``choreo eval`` does, are scored with
the same code.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.eval_plan import HELD_OUT_SONGS, MUSIC  # noqa: E402
from choreo.audio import song_sha256  # noqa: E402
from choreo.choreography.library import load_library  # noqa: E402
from choreo.contracts.contacts import ContactTrack  # noqa: E402
from choreo.contracts.timing import frames_for_duration  # noqa: E402
from choreo.metrics.beat_align import beat_align_score  # noqa: E402
from choreo.metrics.foot_skate import contact_share, foot_skate_ratio  # noqa: E402
from choreo.metrics.junctions import junction_jerk_ratio  # noqa: E402
from choreo.metrics.reference import load_reference  # noqa: E402
from choreo.metrics.spread import pose_spread, reach  # noqa: E402
from choreo.motion import SMPL, Motion, joint_positions  # noqa: E402
from choreo.motion.contacts import UP_AXIS, foot_point_indices, sole_clearance_m  # noqa: E402
from choreo.motion.resample import resample  # noqa: E402
from choreo.pipeline import RenderOptions, choreograph, generate_motion, prepare_song  # noqa: E402
from choreo.postprocess import postprocess  # noqa: E402
from choreo.postprocess.contacts import detect_contacts  # noqa: E402
from choreo.postprocess.facing import face_front  # noqa: E402
from choreo.postprocess.foot_locking import lock_feet  # noqa: E402
from choreo.postprocess.ground import align_floor  # noqa: E402
from choreo.postprocess.hand_locking import lock_hands  # noqa: E402
from choreo.runners import synth_runner  # noqa: E402

STRAIGHT_KNEE_DEG = 175.0
STRAIGHT_RUN_FRAMES = 2


def knee_straight_runs(positions: np.ndarray) -> int:
    """Runs of more than :data:`STRAIGHT_RUN_FRAMES` frames in which a knee is straighter than 175 degrees."""
    runs = 0
    for side in ("left", "right"):
        hip, knee, ankle = (positions[:, SMPL.index(f"{side}_{j}")] for j in ("hip", "knee", "ankle"))
        a, b = hip - knee, ankle - knee
        cos = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        straight = np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))) > STRAIGHT_KNEE_DEG
        edges = np.diff(np.concatenate([[0], straight.astype(np.int8), [0]]))
        lengths = np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)
        runs += int(np.sum(lengths > STRAIGHT_RUN_FRAMES))
    return runs


def floor_measures(positions: np.ndarray, contacts: ContactTrack | None) -> dict[str, float | None]:
    """Depth under the floor (p99, cm) and, for feet in contact, the lowest sole's height (p99 of |h|, cm)."""
    soles = positions[:, foot_point_indices(SMPL), UP_AXIS] - sole_clearance_m(SMPL)
    depth = np.maximum(-soles, 0.0).max(axis=1)
    out: dict[str, float | None] = {"penetration_p99_cm": round(100 * float(np.percentile(depth, 99)), 3)}
    if contacts is not None and contacts.feet.any():
        lowest = soles.reshape(-1, 2, 2).min(axis=2)[contacts.feet]
        out["contact_sole_p99_cm"] = round(100 * float(np.percentile(np.abs(lowest), 99)), 3)
        out["contact_within_1cm"] = round(float(np.mean(np.abs(lowest) <= 0.01)), 4)
    else:
        out["contact_sole_p99_cm"] = out["contact_within_1cm"] = None
    return out


def mocap_measures(motion: Motion) -> dict[str, float | None]:
    motion = align_floor(motion)
    pos = joint_positions(motion)
    minutes = motion.duration_s / 60.0
    return {
        "foot_skate": foot_skate_ratio(pos, fps=motion.fps),
        "foot_contact": contact_share(pos),
        "knee_straight_runs_per_min": knee_straight_runs(pos) / minutes,
        **floor_measures(pos, None),
    }


def dance_measures(
    motion: Motion, beats: np.ndarray, junctions: np.ndarray, contacts: ContactTrack | None
) -> dict[str, float | None]:
    pos = joint_positions(motion)
    fps = motion.fps
    return {
        "foot_skate": foot_skate_ratio(pos, fps=fps),
        "foot_contact": contact_share(pos),
        "junction_jerk_ratio": junction_jerk_ratio(pos, junctions, fps=fps),
        "pose_spread": pose_spread(pos),
        "reach_m": reach(pos).distance_m,
        "beat_align": beat_align_score(pos, beats, fps=fps),
        "knee_straight_runs_per_min": knee_straight_runs(pos) / (motion.duration_s / 60.0),
        **floor_measures(pos, contacts),
        **hand_measures(pos, fps, contacts),
    }


def hand_measures(
    positions: np.ndarray, fps: float, contacts: ContactTrack | None
) -> dict[str, float | None]:
    """The share of frames with a hand in contact and the hands' mean horizontal speed in them, m/s."""
    if contacts is None:
        return {"hand_contact": None, "hand_slide_m_s": None}
    hands = positions[:, [SMPL.index("left_hand"), SMPL.index("right_hand")]][..., [0, 2]]
    speed = np.linalg.norm(np.gradient(hands, axis=0), axis=-1) * fps
    down = contacts.frames[:, 4:]
    return {
        "hand_contact": round(float(down.any(axis=1).mean()), 4),
        "hand_slide_m_s": round(float(speed[down].mean()), 4) if down.any() else None,
    }


def _mean(rows: list[dict], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return round(float(np.mean(values)), 4) if values else None


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, required=True, help="folder of reference.npz and train.npz")
    parser.add_argument(
        "--library", type=Path, required=True, help="phrase library without the held-out clips"
    )
    parser.add_argument("--music", type=Path, default=MUSIC)
    parser.add_argument("--synths", default="blend")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--fps", type=int, default=30)
    parser.add_argument("--songs", type=int, default=len(HELD_OUT_SONGS), help="the first N held-out songs")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "foot_locking.json")
    args = parser.parse_args()
    library = load_library(args.library)

    reference: dict[str, list[dict]] = {}
    for clip in load_reference(args.data / "reference.npz", fps=args.fps):
        reference.setdefault(clip.style, []).append(mocap_measures(clip.motion))
    training: dict[str, list[dict]] = {}
    with np.load(args.data / "train.npz") as data:
        names = data["styles"].astype(str)
        fps = float(data["fps"])
        for start, n, style in zip(data["offsets"], data["lengths"], data["style"], strict=True):
            motion = Motion.from_array(data["motion"][start : start + n].astype(np.float64), fps=fps)
            if fps != args.fps:
                motion = resample(motion, args.fps)
            training.setdefault(str(names[int(style)]), []).append(mocap_measures(motion))
    print("mocap scored", file=sys.stderr, flush=True)

    results: dict[str, object] = {
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "command": " ".join(sys.argv),
        "fps": args.fps,
        "reference": {s: {"clips": len(r), **{k: _mean(r, k) for k in r[0]}} for s, r in reference.items()},
        "training": {s: {"sequences": len(r), **{k: _mean(r, k) for k in r[0]}} for s, r in training.items()},
    }
    for synth in args.synths.split(","):
        runner = synth_runner(synth, library)  # type: ignore[arg-type]
        rows = []
        for song in HELD_OUT_SONGS[: args.songs]:
            path = args.music / song
            features = prepare_song(path, fps=runner.spec.native_fps)
            sha = song_sha256(path)
            for style in sorted(reference):
                for seed in range(args.seeds):
                    options = RenderOptions(style=style, seed=seed, fps=args.fps, synth=synth)  # type: ignore[arg-type]
                    choreography = choreograph(features, options, library)
                    generated = generate_motion(
                        runner, features, options, song_sha256=sha, choreography=choreography
                    )
                    started = time.process_time()
                    raw_contacts = detect_contacts(
                        generated.motion, planted=choreography.guide.feet, bridge_flights=True
                    )
                    detect_s = time.process_time() - started
                    motion = face_front(generated.motion)
                    n = frames_for_duration(generated.song.duration_s, args.fps)
                    motion = resample(motion, args.fps, n_frames=n)
                    unlocked = postprocess(motion, lock=False)
                    contacts = raw_contacts.resampled(unlocked.fps, unlocked.n_frames)
                    started = time.process_time()
                    locked = lock_hands(lock_feet(unlocked, contacts), contacts)
                    lock_s = time.process_time() - started
                    junctions = np.asarray(choreography.plan.junctions_s)
                    beats = generated.song.beat_times
                    minutes = locked.duration_s / 60.0
                    drift = np.linalg.norm(
                        locked.root_translation[:, [0, 2]] - unlocked.root_translation[:, [0, 2]], axis=1
                    )
                    row = {
                        "song": Path(song).name,
                        "style": style,
                        "seed": seed,
                        "minutes": round(minutes, 3),
                        "unlocked": dance_measures(unlocked, beats, junctions, contacts),
                        "locked": dance_measures(locked, beats, junctions, contacts),
                        "root_drift_mean_cm": round(100 * float(drift.mean()), 4),
                        "lock_cpu_s_per_min": round((detect_s + lock_s) / minutes, 4),
                    }
                    print(json.dumps(row), file=sys.stderr, flush=True)
                    rows.append(row)
        summary = {}
        for style in sorted(reference):
            mine = [r for r in rows if r["style"] == style]
            entry: dict[str, object] = {"dances": len(mine)}
            for side in ("unlocked", "locked"):
                side_rows = [r[side] for r in mine]
                entry[side] = {k: _mean(side_rows, k) for k in side_rows[0]}
            ref, train = results["reference"].get(style), results["training"].get(style)  # type: ignore[union-attr]
            for name, base in (("vs_heldout_mocap", ref), ("vs_training", train)):
                if base:
                    entry[name] = {
                        side: {
                            k: (
                                round(entry[side][k] / base[k], 3)
                                if base.get(k) and entry[side][k] is not None
                                else None
                            )  # type: ignore[index]
                            for k in ("foot_skate", "foot_contact", "knee_straight_runs_per_min")
                        }
                        for side in ("unlocked", "locked")
                    }
            entry["root_drift_mean_cm"] = _mean(mine, "root_drift_mean_cm")
            entry["lock_cpu_s_per_min"] = _mean(mine, "lock_cpu_s_per_min")
            summary[style] = entry
        results[synth] = {"by_style": summary, "dances": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(
        json.dumps(
            {k: v["by_style"] for k, v in results.items() if isinstance(v, dict) and "by_style" in v},
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
