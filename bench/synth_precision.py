"""fp16 and int8 of the guided model on the plans of held-out songs (issue 12).

Converts the fp32 model with the engines' own passes (``to_mixed_fp16``;
``quantize_int8`` calibrated on chunks of the first song's plan, products
outside the recurrent loop only, as shipped), runs every precision through
ONNX Runtime on the same inputs as ``bench/synth_gates.py``, and reports the
error against fp32 in joint-rotation degrees and the dance measures of each.

    python bench/synth_precision.py --model MODEL.onnx --out bench/results/synth_precision.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from synth_gates import _measures, planned_songs  # noqa: E402

from choreo.motion.motion import Motion  # noqa: E402
from choreo.postprocess import postprocess  # noqa: E402
from engines.accuracy import compare_poses  # noqa: E402
from engines.base import STATE_IN_PREFIX  # noqa: E402
from engines.onnxruntime_engine import OnnxRuntimeEngine  # noqa: E402
from engines.precision import quantize_int8, save_model, to_mixed_fp16  # noqa: E402
from engines.runner import SingleSongRunner  # noqa: E402

CHUNK = 128


def _calibration_chunks(engine: OnnxRuntimeEngine, inputs: dict[str, np.ndarray], count: int) -> list[dict]:
    """The song's first ``count`` chunks with the fp32 state each one starts from."""
    state = engine.initial_state(1)
    chunks = []
    for k in range(count):
        chunk = {name: value[None, k * CHUNK : (k + 1) * CHUNK] for name, value in inputs.items()}
        chunks.append({**chunk, **{STATE_IN_PREFIX + n: v for n, v in state.items()}})
        _, state = engine.run(chunk, state)
    return chunks


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--music", type=Path, default=REPO.parent / "shared" / "data" / "music")
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    fp32 = OnnxRuntimeEngine(args.model, threads=1)
    songs = list(planned_songs(args.music, args.seeds, fp32.spec.latent_dim))
    model = onnx.load(str(args.model))
    tmp = Path(tempfile.mkdtemp(prefix="synth_precision_"))
    save_model(to_mixed_fp16(model), tmp / "fp16.onnx")
    save_model(quantize_int8(model, _calibration_chunks(fp32, songs[0][5], 8)), tmp / "int8.onnx")
    runners = {
        "fp32": SingleSongRunner(fp32, CHUNK),
        "fp16": SingleSongRunner(OnnxRuntimeEngine(tmp / "fp16.onnx", threads=1), CHUNK),
        "int8": SingleSongRunner(OnnxRuntimeEngine(tmp / "int8.onnx", threads=1), CHUNK),
    }
    rows = []
    for name, seed, style, plan, guide, inputs in songs:
        raw = {p: r.run_song(inputs) for p, r in runners.items()}
        junctions = np.asarray(plan.junctions_s)
        row = {"song": name, "seed": seed, "style": style}
        for p, poses in raw.items():
            motion = postprocess(Motion.from_array(poses.astype(np.float64), fps=guide.fps))
            row[p] = _measures(motion, junctions)
            if p != "fp32":
                row[f"{p}_vs_fp32"] = compare_poses(raw["fp32"], poses, guide.fps).to_dict()
        print(json.dumps(row), flush=True)
        rows.append(row)
    summary = {}
    for p in runners:
        summary[p] = {k: float(np.mean([r[p][k] for r in rows if r[p][k] is not None])) for k in rows[0][p]}
        if p != "fp32":
            errs = [r[f"{p}_vs_fp32"] for r in rows]
            summary[f"{p}_vs_fp32"] = {k: float(np.max([e[k] for e in errs])) for k in errs[0]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"model": str(args.model), "rows": rows, "summary": summary}, indent=2))
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
