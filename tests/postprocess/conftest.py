"""Motions with known right answers for the post-processing tests."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from choreo.motion import REST_PELVIS_HEIGHT_M, Motion


def _standing(n_frames: int, fps: float = 30.0, height_m: float = REST_PELVIS_HEIGHT_M) -> Motion:
    root = np.zeros((n_frames, 3))
    root[:, 1] = height_m
    return Motion(fps=fps, root_translation=root, rotations=np.zeros((n_frames, 24, 3)))


@pytest.fixture
def standing() -> Callable[..., Motion]:
    """Factory: the rest pose standing on the floor (toes 1.5 cm up), ``n_frames`` long."""
    return _standing
