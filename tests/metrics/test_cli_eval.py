"""``choreo eval`` end to end: the demo song with two seeds, beside a reference file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from choreo.cli.main import main
from choreo.motion import REST_PELVIS_HEIGHT_M, Motion

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_SONG = REPO_ROOT / "demo" / "Kevin_MacLeod_-_Vibe_Ace.ogg"
ROW_KEYS = {"song", "seed", "fps", "duration_s", "beat_align", "foot_skate", "pfc", "jerk", "freeze_ratio"}
ROW_KEYS |= {"limit_violations"}


def _clip(fps: int, duration_s: float = 12.0) -> np.ndarray:
    """A rest pose that bobs and swings an arm: a stand-in for one retimed mocap clip."""
    t = np.arange(int(duration_s * fps)) / fps
    root = np.zeros((t.size, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M + 0.02 + 0.03 * (1 - np.cos(2 * np.pi * t))  # floor 2 cm low
    rotations = np.zeros((t.size, 24, 3))
    rotations[:, 16, 2] = 0.6 * np.cos(np.pi * t)
    return Motion(float(fps), root, rotations).to_array().astype(np.float32)


def _write_reference(path: Path, song: str) -> None:
    arrays: dict[str, np.ndarray] = {}
    for fps in (30, 60):
        clips = [_clip(fps), _clip(fps, 8.0)]
        lengths = np.array([len(c) for c in clips])
        arrays[f"motion_{fps}fps"] = np.concatenate(clips)
        arrays[f"lengths_{fps}fps"] = lengths
        arrays[f"offsets_{fps}fps"] = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        arrays[f"song_start_frame_{fps}fps"] = np.array([5 * fps, 20 * fps])
    arrays["clip"] = np.array(["clip_a", "clip_b"])
    arrays["song"] = np.array([song, song])
    arrays["style"] = np.array([0, 1])
    arrays["styles"] = np.array(["salsa", "modern", "breakdance", "whirl"])
    np.savez_compressed(path, **arrays)


def _write_style_reference(path: Path) -> None:
    """A train.npz of three styles: 'salsa' (two clips) moves like the reference clips, 'modern' (two
    clips) stands still, and 'whirl' has one clip only, too few to be a style."""
    moving = _clip(30, 16.0)
    still = moving.copy()
    still[:, :72] = 0.0
    still[:, 72:] = moving[0, 72:]
    sequences = [moving, moving, still, still, still]
    lengths = np.array([len(m) for m in sequences])
    arrays = {
        "motion": np.concatenate(sequences).astype(np.float16),
        "offsets": np.concatenate([[0], np.cumsum(lengths)[:-1]]),
        "lengths": lengths,
        "style": np.array([0, 0, 1, 1, 3]),
        "styles": np.array(["salsa", "modern", "breakdance", "whirl"]),
        "clip": np.array(["s1", "s2", "m1", "m2", "w1"]),
        "fps": np.int64(30),
    }
    np.savez_compressed(path, **arrays)


def test_eval_scores_songs_seeds_and_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reference = tmp_path / "reference.npz"
    _write_reference(reference, DEMO_SONG.name)
    styles = tmp_path / "train.npz"
    _write_style_reference(styles)
    out = tmp_path / "eval.json"
    code = main(
        ["eval", str(DEMO_SONG), "--seeds", "2", "--json", str(out), "--reference", str(reference)]
        + [
            "--style-reference",
            str(styles),
            "--style",
            "salsa",
        ]  # a style the centroids hold (auto: breakdance)
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "generated dances at 30 fps" in printed and "retimed mocap" in printed
    report = json.loads(out.read_text())
    assert [r["seed"] for r in report["songs"]] == [0, 1]
    for row in report["songs"] + report["reference"]:
        assert set(row) >= ROW_KEYS
        assert row["fps"] == 30 and 0.0 <= row["beat_align"] <= 1.0 and 0.0 <= row["foot_skate"] <= 1.0
        assert row["freeze_ratio"] is None  # the demo song is one minute long
    assert all(r["limit_violations"] == 0 for r in report["songs"])
    for row in report["songs"] + report["reference"]:
        assert row["beat_align_30fps"] == row["beat_align"] and 0.0 <= row["beat_align_60fps"] <= 1.0
    assert set(report["summary"]["generated_mean"]) >= {"beat_align_30fps", "beat_align_60fps", "jerk"}
    assert report["songs"][0]["duration_s"] == pytest.approx(61.5, abs=0.1)
    assert [r["clip"] for r in report["reference"]] == ["clip_a", "clip_b"]
    assert report["reference"][0]["duration_s"] == pytest.approx(12.0)
    assert report["reference"][0]["foot_skate"] == 0.0  # its floor was calibrated, its feet stand still
    diversity = report["diversity"]
    assert diversity["between_songs"] is None  # one song only
    assert diversity["between_seeds"] > 0.0
    assert diversity["normalised_by"] == "reference"
    # Issue 11's measures: the clips move like the 'salsa' windows, so clip_a (salsa) is told right
    # and clip_b (labelled modern) wrong; with one song there is no mismatched song.
    assert [r["style_separability"] for r in report["reference"]] == [1.0, 0.0]
    for row in report["songs"] + report["reference"]:
        assert row["pose_spread"] >= 0.0 and row["reach"] > 0.2 and row["longest_stall_s"] >= 0.0
        assert row["beat_align_own_minus_mismatched"] is None
        assert row["beat_align_own_minus_half_beat"] == pytest.approx(
            row["beat_align_own"] - row["beat_align_half_beat"], abs=2e-4
        )
    assert report["songs"][0]["style"] == "salsa" and 0.0 <= report["songs"][0]["style_separability"] <= 1.0
    assert report["mismatched_song"] == {DEMO_SONG.name: None}
    assert set(report["summary"]["by_style"]) == {"salsa", "modern"}


def test_eval_reports_bad_reference_and_seeds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "reference.npz"
    bad.write_bytes(b"not a zip")
    assert main(["eval", str(DEMO_SONG), "--reference", str(bad)]) == 2
    assert f"--reference {bad}" in capsys.readouterr().err
    assert main(["eval", str(DEMO_SONG), "--seeds", "0"]) == 2
    assert "--seeds" in capsys.readouterr().err


def test_eval_goes_on_past_a_bad_song(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.ogg"
    broken.write_bytes(b"OggS" + bytes(200))
    reference = tmp_path / "reference.npz"
    _write_reference(reference, "missing_song.ogg")
    out = tmp_path / "eval.json"
    code = main(["eval", str(broken), "--json", str(out), "--reference", str(reference)])
    err = capsys.readouterr().err
    assert code == 1
    assert f"FAILED {broken}: " in err and "[corrupt_audio]" in err
    assert "reference clip clip_a not scored: song 'missing_song.ogg'" in err
    report = json.loads(out.read_text())
    assert report["songs"] == [] and report["reference"] == []
    failures = [(f["song"], f.get("clip"), f["code"]) for f in report["failures"]]
    assert failures == [
        (str(broken), None, "corrupt_audio"),
        ("missing_song.ogg", "clip_a", "bad_parameter"),
        ("missing_song.ogg", "clip_b", "bad_parameter"),
    ]
