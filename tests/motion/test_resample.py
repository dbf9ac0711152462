"""Frame-rate conversion: slerp for rotations, linear root, same time span."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.motion import Motion
from choreo.motion.resample import resample
from choreo.motion.rotations import aa_to_mat


def _spinning(fps: float, n: int, rate_rad_s: float = 2.0) -> Motion:
    t = np.arange(n) / fps
    rotations = np.zeros((n, 24, 3))
    rotations[:, 4, 0] = rate_rad_s * t  # left knee turns steadily about X
    rotations[:, 0, 1] = np.pi * 0.9 + 0.0 * t  # root near the +/-pi wrap: slerp must not take the long way
    root = np.stack([t, np.full(n, 0.9), -0.5 * t], axis=1)
    return Motion(fps=fps, root_translation=root, rotations=rotations)


@pytest.mark.parametrize("target_fps", [24, 25, 50, 60])
def test_resample_hits_the_analytic_pose_at_every_new_frame(target_fps: int) -> None:
    source = _spinning(30, 90)
    out = resample(source, target_fps)
    assert out.fps == target_fps
    assert out.n_frames == int(np.ceil(3.0 * target_fps))
    expected = _spinning(target_fps, out.n_frames)
    inside = np.arange(out.n_frames) / target_fps <= (source.n_frames - 1) / 30
    np.testing.assert_allclose(
        aa_to_mat(out.rotations[inside]), aa_to_mat(expected.rotations[inside]), atol=1e-9
    )
    np.testing.assert_allclose(out.root_translation[inside], expected.root_translation[inside], atol=1e-12)
    # Past the last source frame the last pose is held.
    np.testing.assert_allclose(
        out.root_translation[~inside], source.root_translation[-1][None].repeat((~inside).sum(), 0)
    )


def test_round_trip_through_60_fps_returns_the_original() -> None:
    source = _spinning(30, 61)
    back = resample(resample(source, 60), 30, n_frames=source.n_frames)
    np.testing.assert_allclose(aa_to_mat(back.rotations), aa_to_mat(source.rotations), atol=1e-9)
    np.testing.assert_allclose(back.root_translation, source.root_translation, atol=1e-12)


def test_resample_leaves_its_input_untouched() -> None:
    source = _spinning(30, 10)
    before = source.to_array().copy()
    resample(source, 60)
    np.testing.assert_array_equal(source.to_array(), before)


def test_resample_rejects_bad_rates() -> None:
    with pytest.raises(ParameterError, match="fps"):
        resample(_spinning(30, 10), 0)
