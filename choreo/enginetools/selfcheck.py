"""``choreo engines selfcheck``: does each backend and precision give the fp32 dance, and how fast?

For every (backend, precision) that can run here, each real song is generated
in full, chunk by chunk, and compared with ONNX Runtime in fp32 on the same
inputs: joint-rotation error in degrees against the documented tolerance of
the precision, and the normalised trajectory MSE. Then the engine's speed is
measured on the song's chunks. Where TensorRT is missing, the fp16 and int8
ONNX files still run in ONNX Runtime, which measures what each precision costs
in accuracy on the CPU. The ``choreo eval`` measures of the post-processed dance
(beat alignment, foot skating, PFC, jerk) must not get worse than with fp32
beyond :data:`DANCE_TOLERANCES`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from choreo.enginetools.calibration import CalibrationSong
from choreo.enginetools.precision_files import prepare_precision_model, song_analysis, song_model_inputs
from engines.accuracy import compare_poses
from engines.base import Engine
from engines.onnxruntime_engine import OnnxRuntimeEngine
from engines.runner import SingleSongRunner
from engines.settings import EngineSettings

__all__ = [
    "DANCE_TOLERANCES",
    "TOLERANCES",
    "Tolerance",
    "dance_scores",
    "dance_worse",
    "selfcheck",
]


@dataclass(frozen=True)
class Tolerance:
    """How far a precision may stray from fp32, in joint-rotation degrees."""

    mean_deg: float
    p99_deg: float


TOLERANCES = {
    "fp32": Tolerance(mean_deg=0.01, p99_deg=0.1),
    "fp16": Tolerance(mean_deg=0.1, p99_deg=1.0),
    "int8": Tolerance(mean_deg=0.5, p99_deg=3.0),
}
"""Per-precision tolerances against ONNX Runtime fp32 over each song's first minute (docs/engines.md):
about ten times what ONNX Runtime measured for the converted models on real songs with the trained model
(fp16 0.009 / 0.11 degrees, int8 0.077 / 0.94), leaving room for other kernels' rounding."""

DANCE_TOLERANCES = {"beat_align": -0.02, "foot_skate": 0.02, "pfc": 0.005, "jerk": 0.10}
"""How much worse a dance metric of the post-processed dance may get than with fp32: beat alignment may
drop by 0.02, the foot-skate ratio and PFC rise by 0.02 and 0.005, jerk rise by 10 % (relative)."""

HORIZON_S = 60.0
"""The joint-rotation tolerance applies to each song's first minute. The model is autoregressive:
a rounding difference shifts the dance a little, and the shift grows over minutes into another,
equally valid dance (the whole-song numbers and the dance metrics show it); the first minute
measures the precision itself."""


def dance_scores(poses: np.ndarray, beat_times_s: np.ndarray, fps: float) -> dict[str, float]:
    """The ``choreo eval`` measures of the post-processed dance."""
    from choreo.metrics.score import score_motion
    from choreo.motion.motion import Motion
    from choreo.postprocess import postprocess

    scores = score_motion(postprocess(Motion.from_array(poses.astype(np.float64), fps=fps)), beat_times_s)
    return {k: float(v) for k, v in scores.to_dict().items() if k in DANCE_TOLERANCES and v is not None}


def dance_worse(reference: dict[str, float], tested: dict[str, float]) -> dict[str, float]:
    """The metrics that got worse beyond :data:`DANCE_TOLERANCES`, with their change."""
    worse = {}
    for key, limit in DANCE_TOLERANCES.items():
        delta = tested[key] - reference[key]
        if key == "beat_align":
            bad = delta < limit
        elif key == "jerk":
            bad = delta > limit * max(abs(reference[key]), 1e-9)
        else:
            bad = delta > limit
        if bad:
            worse[key] = delta
    return worse


def _speed(engine: Engine, inputs: dict[str, np.ndarray], batch: int, frames: int, repeats: int) -> float:
    chunk = {k: np.repeat(v[None, :frames], batch, axis=0) for k, v in inputs.items()}
    state = engine.initial_state(batch)
    engine.run(chunk, state)
    start = time.perf_counter()
    for _ in range(repeats):
        _, state = engine.run(chunk, state)
    return batch * frames * repeats / (time.perf_counter() - start)


def selfcheck(
    model_path: Path,
    settings: EngineSettings,
    songs: Sequence[CalibrationSong],
    candidates: Sequence[tuple[str, str, Callable[[Path], Engine]]],
    *,
    chunk_frames: int = 128,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Compare each candidate engine with ONNX Runtime fp32 on ``songs``.

    Parameters
    ----------
    candidates : ``(backend name, precision, load(onnx path) -> engine)``
    """
    reference = OnnxRuntimeEngine(model_path, threads=settings.threads)
    fps = reference.spec.native_fps
    inputs = [song_model_inputs(s, reference.spec, settings.cache_dir) for s in songs]
    beats = [song_analysis(s.path, fps, settings.cache_dir).beat_times for s in songs]
    expected = [SingleSongRunner(reference, chunk_frames).run_song(x) for x in inputs]
    expected_scores = [dance_scores(p, b, fps) for p, b in zip(expected, beats, strict=True)]
    results = []
    for backend, precision, load in candidates:
        onnx_path, _ = prepare_precision_model(model_path, precision, settings)
        engine = load(onnx_path)
        runner = SingleSongRunner(engine, chunk_frames)
        per_song: list[dict[str, Any]] = []
        for song, x, ref, ref_scores, b in zip(songs, inputs, expected, expected_scores, beats, strict=True):
            got = runner.run_song(x)
            horizon = int(HORIZON_S * fps)
            err = compare_poses(ref[:horizon], got[:horizon], fps=fps)
            whole = compare_poses(ref, got, fps=fps)
            scores = dance_scores(got, b, fps)
            per_song.append(
                {
                    "song": song.path.name,
                    "style": song.style,
                    **err.to_dict(),
                    "whole_song": whole.to_dict(),
                    "dance_fp32": ref_scores,
                    "dance": scores,
                    "dance_worse": dance_worse(ref_scores, scores),
                }
            )
        tol = TOLERANCES[precision]
        mean_deg = float(np.mean([s["rotation_mean_deg"] for s in per_song]))
        p99_deg = float(np.max([s["rotation_p99_deg"] for s in per_song]))
        dance_ok = not any(s["dance_worse"] for s in per_song)
        passed = mean_deg <= tol.mean_deg and p99_deg <= tol.p99_deg and dance_ok
        frames_per_s = _speed(engine, inputs[0], batch=1, frames=chunk_frames, repeats=5)
        row = {
            "backend": backend,
            "precision": precision,
            "passed": passed,
            "rotation_mean_deg": mean_deg,
            "rotation_p99_deg": p99_deg,
            "rotation_max_deg": float(np.max([s["rotation_max_deg"] for s in per_song])),
            "trajectory_mse_norm": float(np.mean([s["trajectory_mse_norm"] for s in per_song])),
            "pose_mse_norm": float(np.mean([s["pose_mse_norm"] for s in per_song])),
            "horizon_s": HORIZON_S,
            "whole_song_rotation_mean_deg": float(
                np.mean([s["whole_song"]["rotation_mean_deg"] for s in per_song])
            ),
            "whole_song_rotation_p99_deg": float(
                np.max([s["whole_song"]["rotation_p99_deg"] for s in per_song])
            ),
            "whole_song_trajectory_mse_norm": float(
                np.mean([s["whole_song"]["trajectory_mse_norm"] for s in per_song])
            ),
            "tolerance": {"mean_deg": tol.mean_deg, "p99_deg": tol.p99_deg, "dance": DANCE_TOLERANCES},
            "dance_metrics_ok": dance_ok,
            "frames_per_s_batch1": frames_per_s,
            "songs": per_song,
        }
        log(
            f"{backend:12s} {precision:5s} {'PASS' if passed else 'FAIL'}  first {HORIZON_S:.0f} s: "
            f"rotation mean {mean_deg:.4f} deg, "
            f"p99 {p99_deg:.4f} deg (tolerance {tol.mean_deg}/{tol.p99_deg}), "
            f"trajectory MSE {row['trajectory_mse_norm']:.2e} (pose {row['pose_mse_norm']:.2e}); "
            f"whole songs: "
            f"rotation mean {row['whole_song_rotation_mean_deg']:.3f} deg, "
            f"p99 {row['whole_song_rotation_p99_deg']:.2f} deg; "
            f"dance metrics {'within' if dance_ok else 'BEYOND'} tolerance, "
            f"{frames_per_s:,.0f} frames/s at batch 1"
        )
        results.append(row)
    return {
        "model": str(model_path),
        "model_version": reference.spec.version,
        "model_trained": reference.spec.trained,
        "songs": [
            {"file": s.path.name, "tempo_bpm": s.tempo_bpm, "style": s.style, "seed": s.seed} for s in songs
        ],
        "chunk_frames": chunk_frames,
        "results": results,
    }
