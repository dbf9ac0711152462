"""Engine benchmark: speed per backend, batch and chunk length; latency; batcher efficiency; memory.

Writes JSON (merged into ``--out``, default ``bench/results/engines.json``, one
entry per backend and machine) and prints a table. Run the CPU backend here and
the torch backends on a GPU machine::

    .venv/bin/python bench/engines.py --backends onnxruntime
    python bench/engines.py --backends torch-eager,torch-cuda,torch-cuda-fp16 --ceiling   # on the GPU

Backends: ``onnxruntime`` (CPU, fp32), ``torch-eager`` (the dance network in
torch on CUDA, fp32, no CUDA graphs: the baseline), ``torch-cuda`` (fp32, CUDA
graphs per shape bucket: the default), ``torch-cuda-fp16`` (the same with the
matrix products in fp16 under autocast), ``tensorrt`` (where installed;
precision from ``--precision``).
Inputs are random conditioning of the model's widths: speed does not depend
on the values.

``--tensorrt-builds`` times engine builds instead (seconds per profile and
precision, fresh builds without the engine cache) with the TensorRT flavour this
machine has; TensorRT-RTX builds on the CPU, so it runs here::

    .venv/bin/python bench/engines.py --tensorrt-builds --calibration-dir ../shared/data/music/gpl
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from choreo.contracts.model_spec import ModelSpec  # noqa: E402
from engines.batcher import SequenceBatcher  # noqa: E402

BATCHES = (1, 8, 64, 256)
CHUNKS = (16, 64, 128)


def _inputs(spec: ModelSpec, batch: int, frames: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random inputs of the model's widths: a one-hot style, a guide near a standing pose, junction times."""
    out = {}
    for name, width in spec.input_widths.items():
        if name == "style":
            value = np.zeros((batch, frames, width), np.float32)
            value[np.arange(batch), :, rng.integers(0, width, batch)] = 1.0
        elif name == "guide":
            value = 0.3 * rng.standard_normal((batch, frames, width))
            value[..., 73] += 0.9
        elif name == "junction":
            value = rng.uniform(0.0, 2.0, (batch, frames, width))
        else:
            value = rng.standard_normal((batch, frames, width))
        out[name] = value.astype(np.float32)
    return out


def _load(backend: str, model: Path, args: argparse.Namespace) -> Any:
    if backend == "onnxruntime":
        from engines.onnxruntime_engine import OnnxRuntimeEngine

        return OnnxRuntimeEngine(model, threads=args.threads)
    if backend == "torch-eager":
        from engines.torch_engine import TorchEngine

        return TorchEngine(model, device="cuda:0", dtype="fp32", cuda_graphs=False)
    if backend in ("torch-cuda", "torch-cuda-fp16", "torch-cuda-uncompiled"):
        from engines.torch_engine import TorchEngine

        dtype = "fp16" if backend.endswith("fp16") else "fp32"
        compiled = not backend.endswith("uncompiled")  # as a worker runs it (CHOREO_ENGINE_TORCH_COMPILE)
        return TorchEngine(
            model, device="cuda:0", dtype=dtype, cuda_graphs=True, compile_step=compiled, max_batch=256
        )
    if backend == "tensorrt":
        from engines.settings import EngineSettings
        from engines.tensorrt_engine import TensorRTEngine

        return TensorRTEngine.from_onnx(model, EngineSettings(precision=args.precision, profile="offline"))
    raise SystemExit(f"unknown backend {backend!r}")


def _gpu_mib() -> dict[str, float]:
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    return {
        "allocated_mib": torch.cuda.memory_allocated() / 2**20,
        "reserved_mib": torch.cuda.memory_reserved() / 2**20,
        "peak_allocated_mib": torch.cuda.max_memory_allocated() / 2**20,
    }


def _rss_mib() -> float:
    """This process's resident memory now (Linux ``/proc``)."""
    with open("/proc/self/statm") as f:
        resident_pages = int(f.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _time_calls(engine: Any, inputs: dict[str, np.ndarray], batch: int, budget_s: float) -> tuple[float, int]:
    """Seconds per call (median of timed calls after a warm-up), carrying the state."""
    state = engine.initial_state(batch)
    for _ in range(2):
        _, state = engine.run(inputs, state)
    times = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < budget_s and len(times) < 50):
        t0 = time.perf_counter()
        _, state = engine.run(inputs, state)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), len(times)


def bench_speed(engine: Any, batches: list[int], chunks: list[int], budget_s: float) -> list[dict[str, Any]]:
    rng = np.random.default_rng(0)
    rows = []
    for frames in chunks:
        for batch in batches:
            inputs = _inputs(engine.spec, batch, frames, rng)
            per_call, n = _time_calls(engine, inputs, batch, budget_s)
            row = {
                "batch": batch,
                "chunk_frames": frames,
                "call_ms": per_call * 1e3,
                "frames_per_s": batch * frames / per_call,
                "timed_calls": n,
            }
            if batch == 1:
                row["latency_ms_per_frame"] = per_call * 1e3 / frames
            rows.append(row)
            print(
                f"  B={batch:4d} T={frames:4d}: {row['frames_per_s']:>14,.0f} frames/s"
                f"  ({row['call_ms']:.2f} ms/call)"
            )
    return rows


def _batcher_window(samples: list[tuple[float, int, int, int, float, int]], slots: int) -> dict[str, Any]:
    """The batcher's rates over the window in which every slot was busy and songs still waited.

    ``samples`` are ``(time, frames, calls, rows, engine_s, in_flight)`` snapshots;
    the window runs from the first snapshot after the first engine call with more
    songs in flight than slots to the last snapshot with more songs than slots.
    """
    full = [s for s in samples if s[2] >= 1 and s[5] > slots]
    if len(full) < 2 or full[-1][0] <= full[0][0]:
        return {"error": "no steady state: the waiting queue was never non-empty for long enough"}
    first, last = full[0], full[-1]
    seconds = last[0] - first[0]
    calls = last[2] - first[2]
    return {
        "seconds": seconds,
        "frames": last[1] - first[1],
        "frames_per_s": (last[1] - first[1]) / seconds,
        "engine_calls": calls,
        "mean_rows_per_call": (last[3] - first[3]) / max(calls, 1),
        "engine_busy_fraction": (last[4] - first[4]) / seconds,
    }


def bench_batcher(
    engine: Any, songs_in_flight: int, chunks_per_song: int, chunk_frames: int
) -> dict[str, Any]:
    """Frames/s through the batcher with ``songs_in_flight`` slots, against the engine alone.

    Eight times as many songs as slots are submitted from eight threads. The
    steady state (every slot busy, songs still waiting: what "64 songs in
    flight" means for a loaded worker) is measured from snapshots of the
    batcher's counters taken every millisecond; the whole album, including the
    start and the drain at the end, is reported beside it.
    """
    rng = np.random.default_rng(1)
    alone_s, _ = _time_calls(
        engine, _inputs(engine.spec, songs_in_flight, chunk_frames, rng), songs_in_flight, 1.0
    )
    engine_fps = songs_in_flight * chunk_frames / alone_s
    n_songs = 8 * songs_in_flight
    lengths = rng.integers(
        chunks_per_song * chunk_frames // 2, chunks_per_song * chunk_frames * 3 // 2, n_songs
    )
    songs = [{k: v[0] for k, v in _inputs(engine.spec, 1, int(n), rng).items()} for n in lengths]
    gpu_before = _gpu_mib()
    with SequenceBatcher(engine, max_batch=songs_in_flight, chunk_frames=chunk_frames) as batcher:
        warm_start = time.perf_counter()
        batcher.warm_up()  # a worker does this at start: each batch bucket's graph is captured once
        warm_up_s = time.perf_counter() - warm_start
        stats = batcher.stats
        samples: list[tuple[float, int, int, int, float, int]] = []
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                in_flight = batcher.in_flight()
                samples.append(
                    (time.perf_counter(), stats.frames, stats.calls, stats.rows, stats.engine_s, in_flight)
                )
                done.wait(0.001)

        sampler = threading.Thread(target=sample)
        sampler.start()
        start = time.perf_counter()
        futures = []

        # Submit from several threads, as Celery workers would.
        def submit(part: list[dict[str, np.ndarray]]) -> None:
            futures.extend(batcher.submit(s) for s in part)

        threads = [threading.Thread(target=submit, args=(songs[i::8],)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for f in futures:
            f.result()
        wall_s = time.perf_counter() - start
        done.set()
        sampler.join()
    frames = int(lengths.sum())
    steady = _batcher_window(samples, songs_in_flight)
    if "frames_per_s" in steady:
        steady["efficiency"] = steady["frames_per_s"] / engine_fps
    album = {
        "seconds": wall_s,
        "frames": frames,
        "frames_per_s": frames / wall_s,
        "efficiency": frames / wall_s / engine_fps,
        "engine_calls": stats.calls,
        "mean_rows_per_call": stats.rows / max(stats.calls, 1),
        "engine_busy_fraction": stats.engine_s / wall_s,
    }
    return {
        "songs_in_flight": songs_in_flight,
        "songs": n_songs,
        "chunk_frames": chunk_frames,
        "engine_alone_frames_per_s": engine_fps,
        "efficiency_steady_state": steady.get("efficiency"),
        "efficiency_whole_album": album["efficiency"],
        "steady_state": steady,
        "whole_album": album,
        "warm_up_s": warm_up_s,
        "gpu_before": gpu_before,
        "gpu_after": _gpu_mib(),
    }


def bench_memory_256(engine: Any, chunk_frames: int) -> dict[str, Any]:
    """GPU memory with 256 songs in flight (torch backends), against the goal of 2 GB."""
    import torch

    rng = np.random.default_rng(2)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    songs = [{k: v[0] for k, v in _inputs(engine.spec, 1, 4 * chunk_frames, rng).items()} for _ in range(256)]
    with SequenceBatcher(engine, max_batch=256, chunk_frames=chunk_frames) as batcher:
        for f in [batcher.submit(s) for s in songs]:
            f.result()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    state_bytes = 4 * sum(int(np.prod(s)) for s in engine.spec.state_shapes.values())
    return {
        "songs_in_flight": 256,
        "allocated_before_mib": base / 2**20,
        "peak_allocated_mib": peak / 2**20,
        "reserved_mib": torch.cuda.memory_reserved() / 2**20,
        "peak_over_engine_mib": (peak - base) / 2**20,
        "gpu_bytes_per_song_in_flight": (peak - base) / 256,
        "state_bytes_per_song": state_bytes,
        "goal_mib": 2048,
        "meets_goal": peak / 2**20 < 2048,
    }


def bench_ceiling(batch: int = 256, frames: int = 128, hidden: int = 512) -> dict[str, Any]:
    """A bare cuDNN LSTM (fp16, CUDA graph): the ceiling an LSTM of this size reaches on this GPU."""
    import torch

    lstm = torch.nn.LSTM(hidden, hidden, batch_first=True).cuda().half()
    x = torch.randn(batch, frames, hidden, device="cuda", dtype=torch.half)
    with torch.no_grad():
        for _ in range(3):
            lstm(x)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            lstm(x)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(50):
            graph.replay()
        torch.cuda.synchronize()
    per = (time.perf_counter() - start) / 50
    return {"hidden": hidden, "batch": batch, "chunk_frames": frames, "frames_per_s": batch * frames / per}


def make_reference(path: Path, model: Path, songs_dir: Path, count: int, cache_dir: Path) -> None:
    """Save real songs' inputs and their ONNX Runtime fp32 poses, for accuracy checks elsewhere."""
    from choreo.enginetools.calibration import read_manifest, select_calibration_songs
    from choreo.enginetools.precision_files import calibration_styles, song_model_inputs
    from engines.onnxruntime_engine import OnnxRuntimeEngine
    from engines.runner import SingleSongRunner

    reference = OnnxRuntimeEngine(model, threads=2)
    songs = select_calibration_songs(
        read_manifest(songs_dir), calibration_styles(reference.spec), count=count, seed=1
    )
    arrays: dict[str, np.ndarray] = {}
    for i, song in enumerate(songs):
        inputs = song_model_inputs(song, reference.spec, cache_dir)
        for name, value in inputs.items():
            arrays[f"{i}/{name}"] = value
        arrays[f"{i}/poses"] = SingleSongRunner(reference, 128).run_song(inputs)
        arrays[f"{i}/name"] = np.array(f"{song.path.name} ({song.style}, {song.tempo_bpm:.0f} bpm)")
    from engines.precision import file_sha256

    arrays["model_sha256"] = np.array(file_sha256(model))
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)


def bench_accuracy(engine: Any, reference: Path, model: Path) -> list[dict[str, Any]]:
    """Whole real songs through the engine against the saved ONNX Runtime fp32 poses."""
    from engines.accuracy import compare_poses
    from engines.precision import file_sha256
    from engines.runner import SingleSongRunner

    if str(np.load(reference)["model_sha256"]) != file_sha256(model):
        print(f"  accuracy skipped: {reference} was made with another model than {model}")
        return [{"error": "reference made with another model"}]
    data = np.load(reference)
    rows = []
    songs = {k.split("/")[0] for k in data.files if "/" in k}
    for i in range(len(songs)):
        inputs = {name: data[f"{i}/{name}"] for name in ("music", "style", "latent")}
        got = SingleSongRunner(engine, 128).run_song(inputs)
        rows.append({"song": str(data[f"{i}/name"]), **compare_poses(data[f"{i}/poses"], got).to_dict()})
        print(f"  {rows[-1]['song']}: rotation mean {rows[-1]['rotation_mean_deg']:.4f} deg")
    return rows


def bench_builds(
    model: Path, cache_dir: Path, calibration_dir: Path | None, repeats: int
) -> list[dict[str, Any]]:
    """Seconds to build each profile x precision engine of ``model`` (median of ``repeats`` fresh builds).

    The ONNX conversions are made (and cached) first and timed apart; int8 needs
    ``calibration_dir``. Each build goes to a new folder, so none is a cache hit.
    """
    import tempfile

    from choreo.enginetools.precision_files import prepare_precision_model
    from engines.settings import EngineSettings
    from engines.tensorrt_build import build_plan
    from engines.tensorrt_flavour import build_target, get_flavour

    flavour = get_flavour()
    rows = []
    for precision in ("fp32", "fp16", "int8"):
        if precision == "int8" and calibration_dir is None:
            print("  int8 skipped: give --calibration-dir")
            continue
        settings = EngineSettings(cache_dir=cache_dir, calibration_dir=calibration_dir, precision=precision)
        t0 = time.perf_counter()
        onnx_path, _ = prepare_precision_model(model, precision, settings)
        convert_s = time.perf_counter() - t0
        spec = ModelSpec.from_metadata(_onnx_metadata(onnx_path))
        gpu = None
        if not flavour.is_rtx:
            from engines.cuda_memory import gpu_name

            gpu = gpu_name(settings.device)
        target = build_target(flavour.name, gpu=gpu, targets=settings.rtx_targets)
        for profile_name in ("realtime", "offline"):
            results = []
            for _ in range(repeats):
                with tempfile.TemporaryDirectory() as tmp:
                    results.append(
                        build_plan(
                            onnx_path,
                            Path(tmp) / "engine.plan",
                            flavour=flavour,
                            spec=spec,
                            profile=settings.profiles[profile_name],
                            profile_name=profile_name,
                            target=target,
                            workspace_mib=settings.workspace_mib,
                            rtx_targets=settings.rtx_targets,
                            timing_cache=None if flavour.is_rtx else Path(tmp) / "timing.cache",
                        )
                    )
            seconds = [r.seconds for r in results]
            row = {
                "precision": precision,
                "profile": profile_name,
                "shapes": settings.profiles[profile_name].model_dump(mode="json"),
                "build_s": float(np.median(seconds)),
                "build_s_each": seconds,
                "plan_mib": results[0].plan_bytes / 2**20,
                "quantize_layers": results[0].quantize_layers,
                "conversion_s": convert_s,
                "target": target,
            }
            rows.append(row)
            print(
                f"  {precision:5s} {profile_name:9s} build {row['build_s']:.2f} s "
                f"(each {', '.join(f'{x:.2f}' for x in seconds)}), plan {row['plan_mib']:.1f} MiB"
            )
    return rows


def _onnx_metadata(path: Path) -> dict[str, str]:
    import onnx

    return {p.key: p.value for p in onnx.load(str(path), load_external_data=False).metadata_props}


def _machine() -> dict[str, Any]:
    info: dict[str, Any] = {"cpu": platform.processor() or platform.machine(), "cpus": os.cpu_count()}
    try:
        import torch

        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
            info["torch"] = torch.__version__
    except ImportError:
        pass
    import onnxruntime

    info["onnxruntime"] = onnxruntime.__version__
    return info


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backends", default="onnxruntime")
    parser.add_argument("--model", type=Path, default=REPO / "choreo" / "models" / "choreo-guided.onnx")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "engines.json")
    parser.add_argument("--batches", default=",".join(map(str, BATCHES)))
    parser.add_argument("--chunks", default=",".join(map(str, CHUNKS)))
    parser.add_argument("--budget-s", type=float, default=1.0, help="timing budget per shape")
    parser.add_argument("--threads", type=int, default=2, help="ONNX Runtime threads")
    parser.add_argument("--precision", default="fp16", help="TensorRT precision")
    parser.add_argument(
        "--batcher-chunks",
        type=int,
        default=48,
        help="mean chunks per song in the batcher run (48: 3.4-minute songs, an album's; 16: 68 s)",
    )
    parser.add_argument("--ceiling", action="store_true", help="also time a bare cuDNN LSTM (GPU)")
    parser.add_argument("--reference", type=Path, default=None, help="real-song reference poses (.npz)")
    parser.add_argument("--make-reference", type=Path, default=None, help="write the reference .npz and stop")
    parser.add_argument("--songs", type=Path, default=None, help="songs folder with MANIFEST.tsv")
    parser.add_argument("--count", type=int, default=4, help="songs in the reference")
    parser.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "choreo" / "engines")
    parser.add_argument("--tensorrt-builds", action="store_true", help="time TensorRT engine builds and stop")
    parser.add_argument(
        "--builds-out", type=Path, default=REPO / "bench" / "results" / "tensorrt_builds.json"
    )
    parser.add_argument("--calibration-dir", type=Path, default=None, help="int8 calibration songs")
    parser.add_argument("--repeats", type=int, default=3, help="builds timed per profile and precision")
    args = parser.parse_args()
    if args.tensorrt_builds:
        from engines.precision import file_sha256
        from engines.tensorrt_flavour import get_flavour

        machine = _machine()
        flavour = get_flavour()
        print(f"{flavour.label} builds on {machine.get('gpu', 'cpu')}")
        out = json.loads(args.builds_out.read_text()) if args.builds_out.is_file() else {"runs": {}}
        load_before = os.getloadavg()[0]
        builds = bench_builds(args.model, args.cache_dir, args.calibration_dir, args.repeats)
        out["runs"][f"{flavour.name}@{machine.get('gpu', 'cpu')}"] = {
            "flavour": flavour.label,
            "machine": machine,
            "model": str(args.model.relative_to(REPO) if args.model.is_relative_to(REPO) else args.model),
            "model_sha256": file_sha256(args.model),
            "repeats": args.repeats,
            # The machine is shared: its 1-minute load average says how busy it was.
            "load_average_1m": {"before": load_before, "after": os.getloadavg()[0]},
            "builds": builds,
        }
        _write(args.builds_out, out)
        print(f"wrote {args.builds_out}")
        return 0
    if args.make_reference is not None:
        make_reference(args.make_reference, args.model, args.songs, args.count, args.cache_dir)
        print(f"wrote {args.make_reference}")
        return 0

    machine = _machine()
    label = machine.get("gpu", "cpu")
    results = json.loads(args.out.read_text()) if args.out.is_file() else {"runs": {}}
    batches = [int(b) for b in args.batches.split(",")]
    chunks = [int(c) for c in args.chunks.split(",")]
    for backend in args.backends.split(","):
        print(f"{backend} on {label}")
        try:
            results["runs"][f"{backend}@{label}"] = bench_backend(backend, args, machine, batches, chunks)
        except Exception as exc:  # record and go on: one backend failing must not lose the others
            results["runs"][f"{backend}@{label}"] = {
                "backend": backend,
                "machine": machine,
                "error": repr(exc),
            }
            print(f"  FAILED: {exc!r}")
        _write(args.out, results)
    if args.ceiling:
        try:
            results["cudnn_lstm_ceiling"] = {"machine": machine, **bench_ceiling()}
            print(f"  bare cuDNN LSTM ceiling: {results['cudnn_lstm_ceiling']['frames_per_s']:,.0f} frames/s")
        except Exception as exc:  # the ceiling is context, not a result
            results["cudnn_lstm_ceiling"] = {"machine": machine, "error": repr(exc)}
    _write(args.out, results)
    print(f"wrote {args.out}")
    return 0


def _write(path: Path, results: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2))


def bench_backend(
    backend: str, args: argparse.Namespace, machine: dict[str, Any], batches: list[int], chunks: list[int]
) -> dict[str, Any]:
    """Every measurement of one backend."""
    rss_before = _rss_mib()
    t0 = time.perf_counter()
    engine = _load(backend, args.model, args)
    entry: dict[str, Any] = {
        "backend": backend,
        "machine": machine,
        "model_version": engine.spec.version,
        "model_trained": engine.spec.trained,
        "load_s": time.perf_counter() - t0,
    }
    first = _inputs(engine.spec, 1, 128, np.random.default_rng(3))
    engine.run(first, engine.initial_state(1))
    entry["cpu_rss_after_load_mib"] = _rss_mib()  # a worker that has loaded the engine and run a chunk
    if args.reference is not None:
        entry["accuracy_vs_ort_fp32"] = bench_accuracy(engine, args.reference, args.model)
    entry["speed"] = bench_speed(engine, batches, chunks, args.budget_s)
    entry["gpu_after_speed"] = _gpu_mib()
    songs_in_flight = 64
    entry["batcher"] = bench_batcher(engine, songs_in_flight, args.batcher_chunks, 128)
    steady = entry["batcher"]["steady_state"]
    print(
        f"  batcher efficiency at {songs_in_flight} songs: steady state "
        f"{entry['batcher']['efficiency_steady_state'] or float('nan'):.3f} "
        f"(busy {steady.get('engine_busy_fraction', float('nan')):.3f}, "
        f"{steady.get('mean_rows_per_call', float('nan')):.1f} rows/call), "
        f"whole album {entry['batcher']['efficiency_whole_album']:.3f}"
    )
    if backend.startswith("torch"):
        entry["memory_256_songs"] = bench_memory_256(engine, 128)
        print(f"  256 songs in flight: peak {entry['memory_256_songs']['peak_allocated_mib']:.0f} MiB")
    entry["cpu_rss_mib"] = _rss_mib()
    entry["cpu_rss_growth_mib"] = entry["cpu_rss_mib"] - rss_before
    entry["total_s"] = time.perf_counter() - t0
    return entry


if __name__ == "__main__":
    sys.exit(main())
