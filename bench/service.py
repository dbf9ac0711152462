"""Service benchmark: songs per hour through the whole service, and its overhead on one song.

Starts the real service (SeaweedFS S3, uvicorn, Celery workers) with
:class:`tests.harness.localstack.LocalStack` on the Redis at 127.0.0.1:6379
(database ``--redis-db``, flushed before and after) and measures:

- **throughput**, for each ``--cpu-workers`` count: upload ``--songs`` real
  songs of about 100 s, submit them as one album and time until every job is
  done; songs per hour and hours of audio per hour;
- **latency and overhead**: for one 3-minute song, the time from the submit
  request until every artifact is downloaded through its presigned URL,
  against ``choreo render`` of the same song in the same run (a fresh process:
  imports and JIT compilation included, as a user runs it) and against
  ``render_song`` in a process already warmed by one song (the pipeline's
  work alone), each ``--repeats`` times while the stack is up and idle; the
  ratios of the medians are the service's overhead.

One GPU worker runs the engine (ONNX Runtime on the CPU here). Writes JSON to
``--out`` (default ``bench/results/service.json``)::

    .venv/bin/python bench/service.py --cpu-workers 1,2 --songs 4

``--load N`` runs the load run instead: N distinct short cuts of the shared
songs (``--cut-s`` seconds each), uploaded and submitted one song a request by
``--in-flight`` client threads at once, plus 20 identical submits at the same
moment; it reports songs an hour, API latency percentiles per route and
submit-to-done percentiles, and whether the duplicates rendered once
(``bench/results/service_load.json``)::

    .venv/bin/python bench/service.py --load 200 --in-flight 16 --cpu-workers 2
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import redis
import soundfile as sf

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from choreo.client import ChoreoClient  # noqa: E402
from choreo.service.keys import create_key  # noqa: E402
from tests.harness.localstack import LocalStack  # noqa: E402

MUSIC = REPO.parent / "shared" / "data" / "music" / "gpl"
LONG_SONG = MUSIC / "hedgewars__Music__EarthRise.ogg"  # 176 s: a 3-minute song


def _short_songs(n: int) -> list[tuple[Path, float]]:
    """The ``n`` shortest songs of the GPL set (about 95-115 s each), with their durations."""
    with (MUSIC / "MANIFEST.tsv").open() as fh:
        rows = [(MUSIC / r["file"], float(r["duration_s"])) for r in csv.DictReader(fh, delimiter="\t")]
    return sorted(rows, key=lambda r: r[1])[:n]


def _client(stack: LocalStack) -> ChoreoClient:
    _, token = create_key(stack.ctx, team="bench", name="bench", scopes=["content"])
    return ChoreoClient(stack.api_url, token, timeout_s=300)


def _throughput(stack: LocalStack, songs: list[tuple[Path, float]], cpu_workers: int) -> dict[str, Any]:
    with _client(stack) as client:
        start = time.perf_counter()
        shas = [client.upload_track(path)["sha256"] for path, _ in songs]
        uploaded = time.perf_counter()
        submitted = client.submit(shas, force=True)
        client.wait_batch(submitted["batch"]["id"], timeout_s=3600, poll_s=0.5)
        end = time.perf_counter()
        jobs = [client.job(j["id"]) for j in submitted["jobs"]]
    failed = [j for j in jobs if j["state"] != "done"]
    if failed:
        raise RuntimeError(
            f"jobs failed: {[(j['track_name'], j['error_code'], j['error_message']) for j in failed]}"
        )
    wall_s = end - start
    audio_s = sum(d for _, d in songs)
    return {
        "cpu_workers": cpu_workers,
        "songs": len(songs),
        "audio_s": round(audio_s, 1),
        "upload_s": round(uploaded - start, 2),
        "wall_s": round(wall_s, 2),
        "songs_per_hour": round(len(songs) / wall_s * 3600, 1),
        "audio_hours_per_hour": round(audio_s / wall_s, 2),
        "job_submit_to_done_s": [round(j["finished_at"] - j["created_at"], 2) for j in jobs],
    }


def _service_latency(stack: LocalStack, song: Path) -> tuple[float, int]:
    """Seconds from the submit request to every artifact downloaded, and how many artifacts."""
    with _client(stack) as client, tempfile.TemporaryDirectory() as out:
        sha = client.upload_track(song)["sha256"]
        start = time.perf_counter()
        submitted = client.submit([sha], force=True)
        client.wait_batch(submitted["batch"]["id"], timeout_s=3600, poll_s=0.2)
        job = client.job(submitted["jobs"][0]["id"])
        if job["state"] != "done":
            raise RuntimeError(f"the long song's job ended {job['state']}: {job['error_message']}")
        files = client.download(job["id"], out)
        return round(time.perf_counter() - start, 2), len(files)


def _embedded(song: Path, env: dict[str, str]) -> float:
    """``choreo render`` of one song in a fresh process: imports and JIT compilation included."""
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        run = subprocess.run(
            [str(Path(sys.executable).parent / "choreo"), "render", str(song), "-o", out],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=os.environ | env,
        )
        elapsed = time.perf_counter() - start
    if run.returncode != 0:
        raise RuntimeError(f"choreo render failed: {run.stderr[-2000:]}")
    return round(elapsed, 2)


_WARM_RENDER = """
import sys, tempfile, time
from pathlib import Path
from choreo.pipeline import RenderOptions, render_song
options = RenderOptions()
with tempfile.TemporaryDirectory() as out:
    render_song(Path(sys.argv[2]), Path(out), options)
    for _ in range(int(sys.argv[3])):
        start = time.perf_counter()
        render_song(Path(sys.argv[1]), Path(out), options)
        print(time.perf_counter() - start)
"""


def _embedded_warm(song: Path, warm_up: Path, env: dict[str, str], repeats: int) -> list[float]:
    """``render_song`` in a process already warmed by one song: the pipeline's work alone."""
    run = subprocess.run(
        [sys.executable, "-c", _WARM_RENDER, str(song), str(warm_up), str(repeats)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=os.environ | env,
    )
    if run.returncode != 0:
        raise RuntimeError(f"warm render failed: {run.stderr[-2000:]}")
    return [round(float(line), 2) for line in run.stdout.split()[-repeats:]]


def _cuts(n: int, cut_s: float, folder: Path) -> list[Path]:
    """``n`` distinct WAV cuts of ``cut_s`` seconds from the shared songs (several offsets of each)."""
    sources = sorted((MUSIC.parent / "cc").glob("*.ogg")) + sorted(MUSIC.glob("*.ogg"))
    cuts: list[Path] = []
    offset_s = 5.0
    while len(cuts) < n:
        for source in sources:
            info = sf.info(source)
            if offset_s + cut_s > info.duration or len(cuts) == n:
                continue
            data, rate = sf.read(
                source,
                start=int(offset_s * info.samplerate),
                frames=int(cut_s * info.samplerate),
                dtype="float32",
            )
            cuts.append(folder / f"cut{len(cuts):04d}.wav")
            sf.write(cuts[-1], data, rate)
        offset_s += cut_s
        if offset_s > 600:
            raise RuntimeError(f"the shared songs give only {len(cuts)} cuts of {cut_s} s")
    return cuts


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    p50, p90, p95, p99 = (round(float(x), 4) for x in np.percentile(values, [50, 90, 95, 99]))
    return {"n": len(values), "p50": p50, "p90": p90, "p95": p95, "p99": p99, "max": round(max(values), 4)}


def _load_run(stack: LocalStack, cuts: list[Path], in_flight: int) -> dict[str, Any]:
    """Upload and submit every cut with ``in_flight`` threads, then 20 duplicates at once; wait for all."""
    _, token = create_key(stack.ctx, team="load", name="load", scopes=["content"])
    latency: dict[str, list[float]] = {"upload": [], "submit": [], "poll": []}

    def timed(client: httpx.Client, route: str, method: str, url: str, **kwargs: Any) -> httpx.Response:
        start = time.perf_counter()
        answer = client.request(method, url, **kwargs)
        latency[route].append(time.perf_counter() - start)
        if answer.status_code >= 400:
            raise RuntimeError(f"{method} {url}: {answer.status_code} {answer.text[:300]}")
        return answer

    def one_song(path: Path) -> str:
        with httpx.Client(
            base_url=stack.api_url, headers={"Authorization": f"Bearer {token}"}, timeout=120
        ) as c:
            with path.open("rb") as fh:
                sha = timed(c, "upload", "POST", "/v1/tracks", files={"file": (path.name, fh, "audio/wav")})
            job = timed(c, "submit", "POST", "/v1/jobs", json={"tracks": [sha.json()["sha256"]]})
            return job.json()["jobs"][0]["id"]

    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(in_flight) as pool:
        job_ids = list(pool.map(one_song, cuts))
        # 20 identical requests at once for one more song: dedup must make one job of them.
        with httpx.Client(
            base_url=stack.api_url, headers={"Authorization": f"Bearer {token}"}, timeout=120
        ) as c:
            dup_sha = timed(
                c, "upload", "POST", "/v1/tracks", files={"file": ("dup.wav", cuts[0].read_bytes())}
            )
        body = {"tracks": [dup_sha.json()["sha256"]], "options": {"seed": 99}}

        def duplicate(_: int) -> str:
            with httpx.Client(
                base_url=stack.api_url, headers={"Authorization": f"Bearer {token}"}, timeout=120
            ) as c:
                return timed(c, "submit", "POST", "/v1/jobs", json=body).json()["jobs"][0]["id"]

        duplicate_ids = list(pool.map(duplicate, range(20)))
    submitted = time.time()
    every = set(job_ids) | set(duplicate_ids)
    jobs: dict[str, dict] = {}
    with httpx.Client(base_url=stack.api_url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as c:
        deadline = time.monotonic() + 7200
        while time.monotonic() < deadline:
            page = timed(c, "poll", "GET", "/v1/jobs", params={"limit": 200}).json()
            items = page["items"]
            while page["next_cursor"]:
                page = timed(
                    c, "poll", "GET", "/v1/jobs", params={"limit": 200, "cursor": page["next_cursor"]}
                ).json()
                items += page["items"]
            jobs = {j["id"]: j for j in items if j["id"] in every}
            if len(jobs) == len(every) and all(
                j["state"] in ("done", "failed", "cancelled") for j in jobs.values()
            ):
                break
            time.sleep(2)
    ends = [j["finished_at"] for j in jobs.values() if j["finished_at"]]
    wall_s = max(ends) - start
    states = [j["state"] for j in jobs.values()]
    return {
        "songs": len(cuts),
        "duplicate_submits": 20,
        "duplicate_jobs_created": len(set(duplicate_ids)),
        "jobs": len(jobs),
        "done": states.count("done"),
        "failed": [(j["track_name"], j["error_code"]) for j in jobs.values() if j["state"] != "done"],
        "submit_phase_s": round(submitted - start, 2),
        "wall_s": round(wall_s, 2),
        "songs_per_hour": round(len(jobs) / wall_s * 3600, 1),
        "api_latency_s": {route: _percentiles(v) for route, v in latency.items()},
        "submit_to_done_s": _percentiles(
            [j["finished_at"] - j["created_at"] for j in jobs.values() if j["finished_at"]]
        ),
    }


def _run_header() -> dict[str, Any]:
    """The command line and the machine, as both runs' JSON begins."""
    return {
        "command": "python bench/service.py " + " ".join(sys.argv[1:]),
        "machine": {
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "load_avg_1m_at_start": round(os.getloadavg()[0], 2),
        },
    }


def load_main(args: argparse.Namespace) -> int:
    """The load run (``--load N``): see the module docstring."""
    db = redis.Redis.from_url(args.redis_url)
    env = {"CHOREO_ENGINE_THREADS": "1", "OMP_NUM_THREADS": "1"}
    workers = int(args.cpu_workers.split(",")[-1])
    results: dict[str, Any] = {
        **_run_header(),
        "notes": (
            f"{workers} CPU worker process(es) of 2 task threads, one GPU worker (ONNX Runtime on the CPU, "
            f"2 task threads), all on loopback; {args.in_flight} client threads upload and submit one song a "
            "request. API latency is per request as the client saw it; submit-to-done is the job's "
            "finished_at - created_at. The machine's cores are shared with other work."
        ),
    }
    db.flushdb()
    try:
        with (
            tempfile.TemporaryDirectory(prefix="choreo-load-") as root,
            LocalStack(
                Path(root) / "stack", args.redis_url, cpu_workers=workers, cpu_concurrency=2, env=env
            ) as stack,
        ):
            cuts = _cuts(args.load, args.cut_s, Path(root))
            results["cut_s"] = args.cut_s
            results["in_flight"] = args.in_flight
            results["load"] = _load_run(stack, cuts, args.in_flight)
    finally:
        db.flushdb()
    results["machine"]["load_avg_1m_at_end"] = round(os.getloadavg()[0], 2)
    out = args.out if args.out.name != "service.json" else args.out.with_name("service_load.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results["load"], indent=2))
    print(f"wrote {out}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu-workers", default="1,2", help="comma-separated CPU worker counts to try")
    parser.add_argument("--songs", type=int, default=4, help="songs in the throughput album")
    parser.add_argument("--redis-db", type=int, default=12)
    parser.add_argument("--long-song", type=Path, default=LONG_SONG)
    parser.add_argument("--repeats", type=int, default=3, help="timings of the long song, per way (medians)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "service.json")
    parser.add_argument("--load", type=int, default=0, help="run the load run with this many songs instead")
    parser.add_argument("--cut-s", type=float, default=6.0, help="length of each load-run song")
    parser.add_argument("--in-flight", type=int, default=16, help="load-run requests in flight at once")
    parser.add_argument(
        "--redis-url", default=None, help="Redis database to use (and flush); else --redis-db"
    )
    args = parser.parse_args()
    args.redis_url = args.redis_url or f"redis://127.0.0.1:6379/{args.redis_db}"
    if args.load:
        return load_main(args)

    worker_counts = [int(n) for n in args.cpu_workers.split(",")]
    songs = _short_songs(args.songs)
    redis_url = args.redis_url
    db = redis.Redis.from_url(redis_url)
    env = {"CHOREO_ENGINE_THREADS": "1", "OMP_NUM_THREADS": "1"}
    results: dict[str, Any] = {
        **_run_header(),
        "notes": (
            "Each CPU worker is one Celery process running one task at a time; one GPU worker runs the "
            "engine (ONNX Runtime on the CPU here, 2 task threads). Workers and both embedded runs use "
            "OMP_NUM_THREADS=1 and CHOREO_ENGINE_THREADS=1. The machine's 2 cores are shared with other work."
        ),
        "throughput": [],
    }
    try:
        for n in worker_counts:
            db.flushdb()
            with (
                tempfile.TemporaryDirectory(prefix="choreo-bench-") as root,
                LocalStack(Path(root), redis_url, cpu_workers=n, cpu_concurrency=1, env=env) as stack,
            ):
                row = _throughput(stack, songs, n)
                print(f"{n} CPU worker(s): {row['songs_per_hour']} songs/h ({row['wall_s']} s)", flush=True)
                results["throughput"].append(row)
                if n == worker_counts[-1]:
                    # Measured while the stack is up and idle, so all three see the same machine.
                    service = [_service_latency(stack, args.long_song) for _ in range(args.repeats)]
                    cli = [_embedded(args.long_song, env) for _ in range(args.repeats)]
                    warm = _embedded_warm(args.long_song, songs[0][0], env, args.repeats)
    finally:
        db.flushdb()
    duration_s = float(subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(args.long_song)],
        capture_output=True, text=True,
    ).stdout.strip() or 0)  # fmt: skip
    service_s = statistics.median(t for t, _ in service)
    cli_s, warm_s = statistics.median(cli), statistics.median(warm)
    results["latency"] = {
        "song": args.long_song.name,
        "duration_s": round(duration_s, 1),
        "cpu_workers": worker_counts[-1],
        "repeats": args.repeats,
        "artifacts": service[0][1],
        "service_submit_to_artifacts_s": [t for t, _ in service],
        "embedded_choreo_render_s": cli,
        "embedded_warm_in_process_s": warm,
        "median_service_s": service_s,
        "median_choreo_render_s": cli_s,
        "median_warm_in_process_s": warm_s,
        "ratio_to_choreo_render": round(service_s / cli_s, 2),
        "ratio_to_warm_in_process": round(service_s / warm_s, 2),
    }
    results["machine"]["load_avg_1m_at_end"] = round(os.getloadavg()[0], 2)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results["latency"], indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
