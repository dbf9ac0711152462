"""Issue 12's gates: the guided network against the blend on the same plans of held-out songs.

For each song and seed: plan, guide, then the blend (the guide post-processed) and
the model (the guided network over the guide, post-processed). Reports spread,
reach, energy, junction jerk ratio, foot skating of both, and the model's mean
joint deviation from the guide more than 0.5 s away from any junction (raw
outputs, before post-processing). Writes JSON to ``--out``.

    python bench/synth_gates.py --model MODEL.onnx --seeds 0,1 --out bench/results/synth_gates.json

Needs the choreography planner and guide (issue 11, ``choreo.choreography``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from choreo.audio.structure import analyze_structure  # noqa: E402
from choreo.metrics.foot_skate import foot_skate_ratio  # noqa: E402
from choreo.metrics.freeze import motion_energy  # noqa: E402
from choreo.metrics.junctions import junction_jerk_ratio  # noqa: E402
from choreo.metrics.spread import pose_spread, reach  # noqa: E402
from choreo.motion.kinematics import joint_positions  # noqa: E402
from choreo.motion.motion import Motion  # noqa: E402
from choreo.pipeline import prepare_song  # noqa: E402
from choreo.postprocess import postprocess  # noqa: E402
from engines.onnxruntime_engine import OnnxRuntimeEngine  # noqa: E402
from engines.runner import SingleSongRunner  # noqa: E402

SONGS = ("Kevin_MacLeod_-_Vibe_Ace.hq.ogg", "hedgewars__Music__hell.ogg", "supertux__misc__theme.ogg")


def planned_songs(music: Path, seeds: str, latent_dim: int):
    """For each held-out song and seed: ``(song, seed, style, plan, guide, model inputs)``."""
    # The planner and guide of issue 11, imported here so that this file reads without them.
    from choreo.choreography import guide as guides
    from choreo.choreography import library as phrases
    from choreo.choreography import planner

    library = phrases.shipped_library()
    for name in SONGS:
        features = prepare_song(next(music.rglob(name)))
        structure = analyze_structure(features)
        for seed in map(int, seeds.split(",")):
            style = library.styles[seed % len(library.styles)]
            plan = planner.plan_dance(library, structure, style=style, seed=seed)
            guide = guides.build_guide(library, plan, features.n_frames, features.fps)
            latent = np.random.default_rng(seed).standard_normal((features.n_frames, latent_dim))
            inputs = {
                "music": features.features.astype(np.float32),
                "guide": guide.poses,
                "junction": guide.junction,
                "latent": latent.astype(np.float32),
            }
            yield name, seed, style, plan, guide, inputs


def _measures(motion: Motion, junctions_s: np.ndarray) -> dict[str, float | None]:
    pos = joint_positions(motion)
    fps = motion.fps
    return {
        "spread_m": pose_spread(pos),
        "reach_m": reach(pos).distance_m,
        "energy": motion_energy(pos, fps=fps),
        "junction_jerk_ratio": junction_jerk_ratio(pos, junctions_s, fps=fps),
        "foot_skate": foot_skate_ratio(pos, fps=fps),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--music", type=Path, default=REPO.parent / "shared" / "data" / "music")
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    runner = SingleSongRunner(OnnxRuntimeEngine(args.model, threads=1), 128)
    rows = []
    for name, seed, style, plan, guide, inputs in planned_songs(
        args.music, args.seeds, runner.spec.latent_dim
    ):
        raw = runner.run_song(inputs)
        guide_m = Motion.from_array(guide.poses.astype(np.float64), fps=guide.fps)
        model_m = Motion.from_array(raw.astype(np.float64), fps=guide.fps)
        away = guide.junction.min(axis=1) > 0.5
        dev = np.linalg.norm(joint_positions(model_m) - joint_positions(guide_m), axis=-1).mean(axis=1)
        junctions = np.asarray(plan.junctions_s)
        row = {
            "song": name,
            "seed": seed,
            "style": style,
            "junctions": int(junctions.size),
            "blend": _measures(postprocess(guide_m), junctions),
            "model": _measures(postprocess(model_m), junctions),
            "model_dev_from_guide_away_cm": float(100 * dev[away].mean()),
            "model_dev_from_guide_near_cm": float(100 * dev[~away].mean()),
        }
        print(json.dumps(row), flush=True)
        rows.append(row)

    def mean(side: str, key: str) -> float:
        vals = [r[side][key] for r in rows if r[side][key] is not None]
        return float(np.mean(vals))

    keys = ("spread_m", "reach_m", "energy", "junction_jerk_ratio", "foot_skate")
    summary = {k: {"blend": mean("blend", k), "model": mean("model", k)} for k in keys}
    dev_away = float(np.mean([r["model_dev_from_guide_away_cm"] for r in rows]))
    gates = {
        "spread_ratio>=0.95": summary["spread_m"]["model"] / summary["spread_m"]["blend"],
        "reach_ratio>=0.95": summary["reach_m"]["model"] / summary["reach_m"]["blend"],
        "energy_ratio>=0.95": summary["energy"]["model"] / summary["energy"]["blend"],
        "dev_away_cm<3": dev_away,
        "junction_jerk_model<blend": [
            summary["junction_jerk_ratio"]["model"],
            summary["junction_jerk_ratio"]["blend"],
        ],
        "foot_skate_model<blend": [summary["foot_skate"]["model"], summary["foot_skate"]["blend"]],
    }
    passed = {
        "spread": gates["spread_ratio>=0.95"] >= 0.95,
        "reach": gates["reach_ratio>=0.95"] >= 0.95,
        "energy": gates["energy_ratio>=0.95"] >= 0.95,
        "deviation": dev_away < 3.0,
        "junction_smoothness": summary["junction_jerk_ratio"]["model"]
        < summary["junction_jerk_ratio"]["blend"],
        "foot_contact": summary["foot_skate"]["model"] < summary["foot_skate"]["blend"],
    }
    out = {"model": str(args.model), "rows": rows, "summary": summary, "gates": gates, "passed": passed}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2))
    print(json.dumps({"summary": summary, "gates": gates, "passed": passed}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
