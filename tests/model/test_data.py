"""Loading and featurising the training arrays (no torch needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.model.data import load_split, normalisation_stats, pose_features
from choreo.motion.rotations import sixd_to_aa
from engines.network.config import POSE_DIM


def test_pose_features_keep_rotations_height_and_root_motion(rng: np.random.Generator) -> None:
    lengths = np.array([30, 40])
    motion = np.concatenate([0.5 * rng.standard_normal((70, 72)), rng.standard_normal((70, 3))], axis=1)
    feats, root_xz = pose_features(motion, lengths)
    assert feats.shape == (70, POSE_DIM)
    back = sixd_to_aa(feats[:, :144].reshape(70, 24, 6).astype(np.float64))
    np.testing.assert_allclose(back, motion[:, :72].reshape(70, 24, 3), atol=1e-5)
    np.testing.assert_allclose(feats[:, 144], motion[:, 73], atol=1e-6)
    np.testing.assert_allclose(feats[[0, 30], 145:], 0.0)  # each sequence starts at rest
    np.testing.assert_allclose(feats[1:30, 145:], np.diff(motion[:30, [72, 74]], axis=0), atol=1e-6)
    np.testing.assert_allclose(root_xz[:30].mean(axis=0), 0.0, atol=1e-6)  # centred per sequence
    np.testing.assert_allclose(
        np.diff(root_xz[30:], axis=0), np.diff(motion[30:, [72, 74]], axis=0), atol=1e-5
    )


def test_load_split_reads_the_data_helper_layout(
    tmp_path: Path, rng: np.random.Generator, write_split
) -> None:
    data = load_split(write_split(tmp_path / "train.npz", rng))
    assert data.n_frames == 120
    assert data.features.dtype == np.float32 and data.music.dtype == np.float32
    stats = normalisation_stats(data)
    assert np.all(stats["pose_std"] > 0) and np.all(stats["music_std"] > 0)
    np.testing.assert_allclose(stats["pose_mean"][[0, 2, 3, 5, POSE_DIM - 2, POSE_DIM - 1]], 0.0)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"music": None}, "missing array 'music'"),
        ({"style": None}, "style index"),
        ({"motion": np.zeros((120, 72), np.float16)}, "motion must be"),
        ({"music": np.zeros((119, 35), np.float16)}, "music must be"),
        ({"offsets": np.array([0, 60])}, "end to end"),
        ({"motion": np.full((120, 75), np.nan, np.float16)}, "NaN"),
    ],
)
def test_bad_split_names_the_file_and_the_problem(
    tmp_path: Path, rng: np.random.Generator, write_split, override: dict, message: str
) -> None:
    path = write_split(tmp_path / "bad.npz", rng, **override)
    with pytest.raises(ParameterError, match=message) as info:
        load_split(path)
    assert "bad.npz" in str(info.value)


def test_missing_split_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="not found"):
        load_split(tmp_path / "nothing.npz")
