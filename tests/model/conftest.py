"""Fixtures of the model tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest


def _write_split(
    path: Path, rng: np.random.Generator, lengths: tuple[int, ...] = (50, 70), **override
) -> Path:
    """A split in the data helper's layout: float16 motion and music, per-sequence offsets/lengths/style."""
    frames = sum(lengths)
    motion = np.concatenate(
        [0.4 * rng.standard_normal((frames, 72)), rng.uniform(-0.5, 0.5, (frames, 3)) + [0, 0.9, 0]], axis=1
    )
    arrays = {
        "motion": motion.astype(np.float16),
        "music": rng.standard_normal((frames, 35)).astype(np.float16),
        "offsets": np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64),
        "lengths": np.array(lengths, np.int64),
        "style": np.arange(len(lengths), dtype=np.int64) % 4,
    }
    arrays.update(override)
    np.savez(path, **{k: v for k, v in arrays.items() if v is not None})
    return path


@pytest.fixture
def write_split():
    """``write_split(path, rng, lengths, **override)``: a split ``.npz`` in the data helper's layout."""
    return _write_split
