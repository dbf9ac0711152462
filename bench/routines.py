"""Issue 23's evaluation: workouts on the held-out songs, measured on the finished motion.

Usage::

    .venv/bin/python -P bench/routines.py --library LIBRARY.npz [--profiles steady,pyramid,intervals]
        [--impact low] [--seeds 1] [--out bench/results/routines.json]

For each held-out song of ``bench/eval_plan.py`` (the library should be built
without the held-out clips) and each profile it renders the workout as
``choreo render --routine`` does (blend, 30 fps) and measures, on the motion
and not on the plan's labels:

- **repeats**: the share of 8-counts whose motion repeats or mirrors another
  8-count of the same routine: the joint positions of each 8-count, relative to
  the pelvis's place and heading at its first frame and resampled to 32 frames,
  against every other 8-count's and its mirror image's (x -> -x, left and right
  swapped); a repeat when the mean joint distance is under
  :data:`REPEAT_THRESHOLD_M`. The same measure on the plain dance of the song
  (``choreo render`` without ``--routine``, cut into the same 8-counts) is
  reported beside it, so the measure is seen to separate;
- **distinct moves per 3 minutes**: groups of 8-counts linked by that relation
  (connected components), scaled to 180 s;
- **changes on phrase boundaries**: 8-counts whose motion matches neither the
  previous 8-count nor its mirror image start a new move; each must start on
  the music's 8-count grid (two bars of the song's own analysis from the start
  of a run of steady bars); and **mid-phrase changes**: 8-counts whose first half
  repeats the previous 8-count's first half but whose second half does not;
- **intensity correlation**: Pearson's r between the motion energy of each
  8-count (mean squared joint speed, ``choreo eval``'s energy) and the profile's
  target there; and, because a ``steady`` target is flat between a short warm-up
  and cool-down (r then mostly measures noise), the root mean square error in MET
  of each 8-count against its target made an energy by the plan's line
  (:func:`choreo.workout.sheet.met_error_to_target`);
- **flight and head below hips**: frames with no foot point on the floor (the
  workout's strict rule), with the library's airborne rule, by the dance's
  contact track (``choreo.pipeline.finished_contacts``: neither foot down; what the
  feet are locked by and the summary reports) and by the contact track detected
  again on the finished motion (``performed``), frames with the head under the pelvis;
- **cue coverage**: the share of the music's 8-counts that have a cue.
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
sys.path.append(str(REPO / "bench"))  # after the packages: bench/engines.py is not engines/

from eval_plan import HELD_OUT_SONGS, MUSIC  # noqa: E402

from choreo.audio import song_sha256  # noqa: E402
from choreo.audio.structure import analyze_structure  # noqa: E402
from choreo.choreography.library import shipped_library  # noqa: E402
from choreo.contracts.options import RenderOptions  # noqa: E402
from choreo.metrics.freeze import motion_energy  # noqa: E402
from choreo.motion import joint_positions  # noqa: E402
from choreo.motion.contacts import airborne_frames  # noqa: E402
from choreo.motion.mirror import mirror_permutation  # noqa: E402
from choreo.motion.skeleton import SMPL  # noqa: E402
from choreo.pipeline import finished_contacts, perform_song, prepare_song  # noqa: E402
from choreo.runners import synth_runner  # noqa: E402
from choreo.workout.curves import target_intensity  # noqa: E402
from choreo.workout.safety import contact_flight, measure_safety  # noqa: E402
from choreo.workout.sheet import met_error_to_target  # noqa: E402

REPEAT_THRESHOLD_M = 0.12
"""Mean joint distance under which two 8-counts are the same move (or its mirror image)."""
SAMPLES = 32
_MIRROR = mirror_permutation(SMPL.names)
_HIPS = (SMPL.index("left_hip"), SMPL.index("right_hip"))


def _local(pos: np.ndarray, a: int, b: int) -> np.ndarray:
    """Frames ``a..b`` relative to the pelvis's floor position and heading at ``a``, ``[SAMPLES, 24, 3]``."""
    seg = pos[a:b]
    lateral = seg[0, _HIPS[0]] - seg[0, _HIPS[1]]
    yaw = np.arctan2(-lateral[2], lateral[0])  # the rotation that puts the hips on +x
    c, s = np.cos(yaw), np.sin(yaw)
    rot = np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])
    rel = (seg - seg[0, 0] * np.array([1.0, 0.0, 1.0])) @ rot.T
    idx = np.linspace(0, rel.shape[0] - 1, SAMPLES).round().astype(int)
    return rel[idx]


def _mirrored(local: np.ndarray) -> np.ndarray:
    return local[:, _MIRROR] * np.array([-1.0, 1.0, 1.0])


def _distances(blocks: list[np.ndarray]) -> np.ndarray:
    """[n, n] mean joint distance between 8-counts, the nearer of direct and mirrored."""
    n = len(blocks)
    d = np.full((n, n), np.inf)
    for i in range(n):
        for j in range(n):
            if i != j:
                direct = np.linalg.norm(blocks[i] - blocks[j], axis=-1).mean()
                flipped = np.linalg.norm(blocks[i] - _mirrored(blocks[j]), axis=-1).mean()
                d[i, j] = min(direct, flipped)
    return d


def _components(linked: np.ndarray) -> int:
    n, seen, groups = linked.shape[0], set(), 0
    for start in range(n):
        if start in seen:
            continue
        groups += 1
        todo = [start]
        while todo:
            k = todo.pop()
            if k not in seen:
                seen.add(k)
                todo += [int(j) for j in np.flatnonzero(linked[k]) if j not in seen]
    return groups


def _music_grid(structure) -> list[tuple[float, float]]:  # noqa: ANN001
    """The music's 8-counts: two steady 4-beat bars from the start of each run of steady bars."""
    starts = np.append(np.asarray(structure.bar_starts), structure.duration_s)
    steady = np.asarray(structure.steady)
    beats = np.asarray(structure.beat_times)
    n_beats = [
        1 + int(((beats > a + 0.05) & (beats < b - 0.05)).sum())
        for a, b in zip(starts[:-1], starts[1:], strict=True)
    ]
    ok = steady & (np.array(n_beats) == 4)
    out, k = [], 0
    while k < ok.size:
        if k + 1 < ok.size and ok[k] and ok[k + 1]:
            out.append((float(starts[k]), float(starts[k + 2])))
            k += 2
        else:
            k += 1
    return out


def measure(motion, plan, structure, profile: str, contacts=None) -> dict:  # noqa: ANN001
    """The measures of the module docstring for one finished workout (or, without a plan's routine,
    the plain dance cut into the music's 8-counts)."""
    pos = joint_positions(motion)
    fps = motion.fps
    grid = _music_grid(structure)
    spans = [(c.start_s, c.end_s) for c in plan.routine.cues if c.index > 0] if plan.routine else grid
    frames = [(int(round(a * fps)), min(int(round(b * fps)), pos.shape[0])) for a, b in spans]
    blocks = [_local(pos, a, b) for a, b in frames]
    d = _distances(blocks)
    linked = d < REPEAT_THRESHOLD_M
    minutes = motion.n_frames / fps / 60.0
    repeats = float(linked.any(axis=1).mean()) if len(blocks) > 1 else 0.0
    out = {
        "minutes": round(minutes, 3),
        "eight_counts": len(blocks),
        "repeat_share": round(repeats, 4),
        "median_nearest_distance_m": round(float(np.median(d.min(axis=1))), 4),
        "distinct_moves": _components(linked),
        "distinct_moves_per_3_min": round(_components(linked) * 3.0 / minutes, 2),
    }
    if plan.routine is None:
        return out
    half = SAMPLES // 2
    changes, on_grid, mid = [], 0, 0
    grid_starts = np.array([a for a, _ in grid])
    for k in range(1, len(blocks)):
        prev, cur = blocks[k - 1], blocks[k]
        same = min(
            np.linalg.norm(cur - prev, axis=-1).mean(), np.linalg.norm(cur - _mirrored(prev), axis=-1).mean()
        )
        if same >= REPEAT_THRESHOLD_M:
            changes.append(spans[k][0])
            on_grid += bool(grid_starts.size and np.abs(grid_starts - spans[k][0]).min() < 1.0 / fps)
        first = min(
            np.linalg.norm(cur[:half] - prev[:half], axis=-1).mean(),
            np.linalg.norm(cur[:half] - _mirrored(prev)[:half], axis=-1).mean(),
        )
        second = min(
            np.linalg.norm(cur[half:] - prev[half:], axis=-1).mean(),
            np.linalg.norm(cur[half:] - _mirrored(prev)[half:], axis=-1).mean(),
        )
        mid += bool(first < REPEAT_THRESHOLD_M <= second)
    centres = np.array([0.5 * (a + b) for a, b in spans])
    cues = [c for c in plan.routine.cues if c.index > 0]
    target = np.array([c.target for c in cues])
    energy = np.array([motion_energy(pos[a:b], fps=fps) for a, b in frames])
    safety = measure_safety(motion)
    covered = sum(any(abs(c.start_s - a) < 1.0 / fps for c in cues) for a, _ in grid)
    out |= {
        "moves_in_plan": len({c.move for c in cues}),
        "moves_in_plan_per_3_min": round(len({c.move for c in cues}) * 3.0 / minutes, 2),
        "move_changes": len(changes),
        "changes_on_phrase_boundary": on_grid,
        "mid_phrase_changes": mid,
        "intensity_correlation": round(float(np.corrcoef(energy, target)[0, 1]), 4),
        "target_range": round(float(np.ptp(target)), 3),
        "met_rms_error": round(
            float(met_error_to_target(energy, target, plan.routine.target_energy_m2_s2) or np.nan), 3
        ),
        "flight_frames": safety.flight_frames,
        "airborne_frames_library_rule": int(airborne_frames(pos).sum()),
        "contact_track_flight_frames": None if contacts is None else int(contact_flight(contacts).sum()),
        "performed_contact_flight_frames": safety.contact_flight_frames,
        "head_below_hips_frames": safety.head_below_hips_frames,
        "floor_work_frames": safety.floor_work_frames,
        "limit_violations": safety.limit_violations,
        "cue_coverage": round(covered / max(len(grid), 1), 4),
        "target_check": round(
            float(
                np.abs(
                    target - target_intensity(profile, centres, plan.duration_s, curve=plan.routine.curve)
                ).max()
            )
            if profile != "intervals"
            else 0.0,
            4,
        ),
    }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", type=Path, default=None)
    parser.add_argument("--music", type=Path, default=MUSIC)
    parser.add_argument("--profiles", default="steady,pyramid,intervals")
    parser.add_argument("--impact", default="low")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--songs", type=int, default=len(HELD_OUT_SONGS))
    parser.add_argument(
        "--rotate", action="store_true", help="one profile per song, in turn (a quicker run than every pair)"
    )
    parser.add_argument(
        "--baseline-songs", type=int, default=None, help="dance the first N songs plainly too"
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "routines.json")
    args = parser.parse_args()
    library = shipped_library(args.library)
    runner = synth_runner("blend", library)
    rows = []
    started = time.perf_counter()
    profiles = args.profiles.split(",")
    for n, song in enumerate(HELD_OUT_SONGS[: args.songs]):
        path = args.music / song
        features = prepare_song(path, fps=runner.spec.native_fps)
        structure = analyze_structure(features)
        sha = song_sha256(path)
        if args.baseline_songs is None or n < args.baseline_songs:
            dance = perform_song(runner, features, RenderOptions(), library, song_sha256=sha)
            base = measure(dance.motion, dance.choreography.plan, structure, "dance")
            print(f"{song} dance: {base}", flush=True)
            rows.append({"song": song, "profile": "dance (no --routine)", "seed": 0} | base)
        for profile in [profiles[n % len(profiles)]] if args.rotate else profiles:
            for seed in range(args.seeds):
                options = RenderOptions(routine=profile, impact=args.impact, seed=seed)
                t0 = time.perf_counter()
                workout = perform_song(runner, features, options, library, song_sha256=sha)
                row = {"song": song, "profile": profile, "impact": args.impact, "seed": seed}
                contacts = finished_contacts(workout.generated, workout.motion)
                row |= measure(workout.motion, workout.choreography.plan, structure, profile, contacts)
                row["seconds"] = round(time.perf_counter() - t0, 1)
                print(f"{song} {profile} seed {seed}: {row}", flush=True)
                rows.append(row)
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(json.dumps(_report(args, rows, started), indent=2) + "\n")
    args.out.write_text(json.dumps(_report(args, rows, started), indent=2) + "\n")


def _report(args: argparse.Namespace, rows: list[dict], started: float) -> dict:
    work = [r for r in rows if "intensity_correlation" in r]
    summary = {}
    if work:
        summary = {
            "routines": len(work),
            "repeat_share_min": min(r["repeat_share"] for r in work),
            "repeat_share_mean": round(float(np.mean([r["repeat_share"] for r in work])), 4),
            "dance_repeat_share_mean": round(
                float(np.mean([r["repeat_share"] for r in rows if "intensity_correlation" not in r])), 4
            )
            if len(work) < len(rows)
            else None,
            "distinct_moves_per_3_min_min": min(r["distinct_moves_per_3_min"] for r in work),
            "moves_in_plan_per_3_min_min": min(r["moves_in_plan_per_3_min"] for r in work),
            "changes_on_phrase_boundary": f"{sum(r['changes_on_phrase_boundary'] for r in work)} of "
            f"{sum(r['move_changes'] for r in work)}",
            "mid_phrase_changes": sum(r["mid_phrase_changes"] for r in work),
            "intensity_correlation_min": min(r["intensity_correlation"] for r in work),
            "intensity_correlation_mean": round(
                float(np.mean([r["intensity_correlation"] for r in work])), 4
            ),
            "intensity_correlation_at_least_0_8": f"{sum(r['intensity_correlation'] >= 0.8 for r in work)} "
            f"of {len(work)}",
            "met_rms_error_max": max(r["met_rms_error"] for r in work),
            "met_rms_error_mean": round(float(np.mean([r["met_rms_error"] for r in work])), 3),
            "flight_frames": sum(r["flight_frames"] for r in work),
            "airborne_frames_library_rule": sum(r["airborne_frames_library_rule"] for r in work),
            "contact_track_flight_frames": sum(r["contact_track_flight_frames"] for r in work),
            "performed_contact_flight_frames": sum(r["performed_contact_flight_frames"] for r in work),
            "head_below_hips_frames": sum(r["head_below_hips_frames"] for r in work),
            "cue_coverage_min": min(r["cue_coverage"] for r in work),
        }
    return {
        "command": " ".join(["bench/routines.py", *sys.argv[1:]]),
        "repeat_threshold_m": REPEAT_THRESHOLD_M,
        "library": str(args.library) if args.library else "shipped",
        "machine": platform.node(),
        "wall_s": round(time.perf_counter() - started, 1),
        "summary": summary,
        "rows": rows,
    }


if __name__ == "__main__":
    main()
