"""in_place drops horizontal root travel and nothing else."""

from __future__ import annotations

import numpy as np

from choreo.motion import Motion
from choreo.postprocess import in_place


def test_in_place_zeroes_horizontal_root_motion_and_keeps_height(rng: np.random.Generator) -> None:
    motion = Motion(30.0, rng.normal(size=(40, 3)), rng.normal(scale=0.4, size=(40, 24, 3)))
    before = motion.root_translation.copy()
    out = in_place(motion)
    np.testing.assert_array_equal(motion.root_translation, before)
    np.testing.assert_array_equal(out.root_translation[:, [0, 2]], 0.0)
    np.testing.assert_array_equal(out.root_translation[:, 1], before[:, 1])
    np.testing.assert_array_equal(out.rotations, motion.rotations)
