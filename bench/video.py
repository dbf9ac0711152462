"""Time to write the shaded 720p preview video of a 30 s excerpt, with its song, on one core.

Usage::

    .venv/bin/python -P bench/video.py [--song PATH] [--seconds 30] [--repeats 3]
                                       [--out bench/results/video.json] [--draw-only]

The dance is a real one (``dance_song`` dances the song as ``choreo render`` does).
The process pins itself, and so the ffmpeg it starts, to one CPU core
(``sched_setaffinity``) and runs ffmpeg's encoder with one thread. For each write it
reports the wall time and the CPU time of Python and ffmpeg together (the part of the
core the write used: on a busy machine the wall time is longer than the CPU time by
the time other processes held the core), with the 1-minute load average.

``--draw-only`` times the drawing alone (every frame painted into its encoder planes, no ffmpeg):
the part of the write that is ours. The script only uses ``preview_frames`` and ``FramePainter``
for it, so it can time another checkout's code too (``PYTHONPATH`` on that checkout).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from choreo.pipeline import RenderOptions, dance_song
from exporters.video import VideoOptions, write_video
from exporters.video.painter import FramePainter
from exporters.video.writer import preview_frames

DEMO_SONG = Path(__file__).resolve().parents[1] / "demo" / "Kevin_MacLeod_-_Vibe_Ace.ogg"


def _cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--song", type=Path, default=DEMO_SONG)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("bench/results/video.json"))
    parser.add_argument("--draw-only", action="store_true", help="time the drawing alone, no ffmpeg")
    args = parser.parse_args(argv)

    dance = dance_song(args.song, RenderOptions())
    motion, song = dance.motion, dance.generated.song
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    video = VideoOptions(duration_s=args.seconds, encoder_threads=1)
    runs = []
    if args.draw_only:
        runs = [_draw(motion, song, video) for _ in range(args.repeats)]
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(0 if args.draw_only else args.repeats):
            path = Path(tmp) / "clip.mp4"
            load = os.getloadavg()[0]
            wall, cpu = time.perf_counter(), _cpu_s()
            write_video(
                motion,
                path,
                audio_path=args.song,
                beat_times=song.beat_times,
                downbeat_times=song.downbeat_times,
                options=video,
            )
            runs.append(
                {
                    "wall_s": round(time.perf_counter() - wall, 3),
                    "cpu_s": round(_cpu_s() - cpu, 3),
                    "load_average_1min": round(load, 2),
                    "size_bytes": path.stat().st_size,
                }
            )
            print(f"video: {runs[-1]}", file=sys.stderr)
    result = {
        "benchmark": "video",
        "song": args.song.name,
        "excerpt_s": args.seconds,
        "video": {"width": video.width, "height": video.height, "fps": video.fps, "codec": "h264+aac"},
        "pinned_to_core": core,
        "draw_only": args.draw_only,
        "code": str(Path(sys.modules[FramePainter.__module__].__file__ or "").parents[2]),
        "runs": runs,
        "best_wall_s": min(r["wall_s"] for r in runs),
        "median_cpu_s": statistics.median(r["cpu_s"] for r in runs),
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: result[k] for k in ("best_wall_s", "median_cpu_s")}))
    return 0


def _draw(motion, song, video: VideoOptions) -> dict:  # noqa: ANN001
    """Paint every frame of the excerpt into its encoder planes, as ``write_video`` does, without ffmpeg."""
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), _cpu_s()
    frames = preview_frames(motion, video)
    painter = FramePainter(
        frames.path,
        motion.skeleton.parents,
        song.beat_times,
        song.downbeat_times,
        frames.span,
    )
    for frame, (joints, t) in enumerate(zip(frames.joints, frames.times, strict=True)):
        painter.paint(frame, joints, float(t))
    run = {
        "wall_s": round(time.perf_counter() - wall, 3),
        "cpu_s": round(_cpu_s() - cpu, 3),
        "load_average_1min": round(load, 2),
        "frames": len(frames.times),
    }
    print(f"draw: {run}", file=sys.stderr)
    return run


if __name__ == "__main__":
    raise SystemExit(main())
