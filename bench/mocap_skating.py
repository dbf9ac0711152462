"""Foot skating of the training mocap per style: what the held-out clip of each style is compared with.

Issue 11 scores the blend's foot skating against the held-out mocap of the same
style, one clip for modern (05_20). This measures the same ratio
(:func:`choreo.metrics.foot_skate.foot_skate_ratio`) on every retimed training
sequence of ``choreo prepare-data`` (the clips the library is cut from), so the
held-out clip can be placed among them.

    .venv/bin/python -P bench/mocap_skating.py --data .device/data --out bench/results/mocap_skating.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from choreo.metrics.foot_skate import foot_skate_ratio  # noqa: E402
from choreo.motion.kinematics import joint_positions  # noqa: E402
from choreo.motion.motion import Motion  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True, help="choreo prepare-data output (train.npz)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with np.load(args.data / "train.npz") as data:
        motion, offsets, lengths = data["motion"], data["offsets"], data["lengths"]
        names = data["styles"].astype(str)
        styles = [str(names[int(i)]) for i in data["style"]]
        clips, fps = data["clip"].astype(str), float(data["fps"])
    per_style: dict[str, list[float]] = {}
    for start, n, style in zip(offsets, lengths, styles, strict=True):
        positions = joint_positions(Motion.from_array(motion[start : start + n].astype(np.float64), fps=fps))
        per_style.setdefault(style, []).append(foot_skate_ratio(positions, fps=fps))
    summary = {
        style: {
            "sequences": len(values),
            "clips": len({c for c, s in zip(clips, styles, strict=True) if s == style}),
            "mean": float(np.mean(values)),
            "p10_p50_p90": [float(v) for v in np.percentile(values, [10, 50, 90])],
        }
        for style, values in per_style.items()
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"data": str(args.data), "foot_skate_by_style": summary}, indent=2))
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
