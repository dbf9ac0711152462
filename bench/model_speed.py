"""Time the dance model alone: a 3-minute song (5400 frames at 30 fps) through ONNX Runtime on the CPU.

Usage::

    .venv/bin/python bench/model_speed.py [--model PATH] [--threads 2] [--out bench/results/model_speed.json]

The song is generated the way the pipeline does it: batch 1, chunks of 128
frames (the last one shorter), state carried between chunks. Inputs are random
arrays of the contract's shapes (the model's cost does not depend on their
values). The first pass (ONNX Runtime's first-call costs) is reported apart
from the best and median of the following repeats, with the process CPU time
(a check when other programs share the cores: wall time then grows, CPU time
does not) and the load average. The goal is under 1 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the repository's ``engines`` package, not bench/engines.py

from choreo.models import DEFAULT_MODEL_PATH  # noqa: E402
from engines.base import MAX_CHUNK_FRAMES  # noqa: E402
from engines.onnxruntime_engine import OnnxRuntimeEngine  # noqa: E402
from engines.runner import SingleSongRunner  # noqa: E402

SONG_FRAMES = 5400


def generate_song(engine: OnnxRuntimeEngine, inputs: dict[str, np.ndarray]) -> tuple[float, float]:
    """Wall-clock and process CPU seconds to generate the whole song chunk by chunk."""
    start, cpu_start = time.perf_counter(), time.process_time()
    SingleSongRunner(engine, MAX_CHUNK_FRAMES).run_song(inputs)
    return time.perf_counter() - start, time.process_time() - cpu_start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL_PATH)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("bench/results/model_speed.json"))
    args = parser.parse_args()

    engine = OnnxRuntimeEngine(args.model, threads=args.threads)
    spec = engine.spec
    rng = np.random.default_rng(0)
    # Random inputs of the model's widths: the engine's time does not depend on their values.
    inputs = {
        name: rng.standard_normal((SONG_FRAMES, width)).astype(np.float32)
        for name, width in spec.input_widths.items()
    }
    first, _ = generate_song(engine, inputs)
    timed = [generate_song(engine, inputs) for _ in range(args.repeats)]
    runs = [wall for wall, _ in timed]
    cpu = [used for _, used in timed]
    result = {
        "model": str(args.model),
        "model_version": spec.version,
        "trained": spec.trained,
        "song_frames": SONG_FRAMES,
        "chunk_frames": MAX_CHUNK_FRAMES,
        "threads": args.threads,
        "first_s": round(first, 4),
        "best_s": round(min(runs), 4),
        "median_s": round(statistics.median(runs), 4),
        "runs_s": [round(r, 4) for r in runs],
        "cpu_median_s": round(statistics.median(cpu), 4),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "realtime_factor": round(SONG_FRAMES / spec.native_fps / statistics.median(runs), 1),
        "machine": {
            "cpu_count": os.cpu_count(),
            "processor": platform.processor(),
            "python": platform.python_version(),
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
