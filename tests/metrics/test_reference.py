"""Reading reference.npz: clips, their song windows, and clear errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.metrics.reference import load_reference


def _write(path: Path, *, with_60: bool = True) -> None:
    rates = (30, 60) if with_60 else (30,)
    arrays: dict[str, np.ndarray] = {}
    for fps in rates:
        lengths = np.array([2 * fps, 3 * fps])
        arrays[f"motion_{fps}fps"] = np.zeros((lengths.sum(), 75), dtype=np.float32)
        arrays[f"lengths_{fps}fps"] = lengths
        arrays[f"offsets_{fps}fps"] = np.array([0, lengths[0]])
        arrays[f"song_start_frame_{fps}fps"] = np.array([3 * fps, 10 * fps])
    arrays["clip"] = np.array(["a", "b"])
    arrays["song"] = np.array(["one.ogg", "two.ogg"])
    arrays["style"] = np.array([2, 0])
    arrays["styles"] = np.array(["salsa", "modern", "breakdance", "whirl"])
    np.savez(path, **arrays)


def test_clips_and_their_song_windows(tmp_path: Path) -> None:
    path = tmp_path / "reference.npz"
    _write(path)
    dances = load_reference(path, fps=60)
    assert [(d.clip, d.style, d.song) for d in dances] == [
        ("a", "breakdance", "one.ogg"),
        ("b", "salsa", "two.ogg"),
    ]
    assert dances[1].motion.fps == 60 and dances[1].motion.n_frames == 180
    assert dances[1].song_start_s == pytest.approx(10.0)
    # Song beats at 9.5 .. 14 s: those from 10 s to 13 s fall inside clip b, on its own clock.
    np.testing.assert_allclose(
        dances[1].beats_in_clip(np.arange(9.5, 14.0, 0.5)), [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    )


def test_missing_file_rate_or_garbage_is_named(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="no such file"):
        load_reference(tmp_path / "nothing.npz", fps=30)
    path = tmp_path / "reference.npz"
    _write(path, with_60=False)
    with pytest.raises(ParameterError, match="motion_60fps"):
        load_reference(path, fps=60)
    garbage = tmp_path / "garbage.npz"
    garbage.write_text("not numpy")
    with pytest.raises(ParameterError, match="garbage.npz"):
        load_reference(garbage, fps=30)
