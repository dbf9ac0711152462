"""The composed post-processing on a jittery motion: smooth, within limits, on the floor."""

from __future__ import annotations

import numpy as np

from choreo.motion import REST_PELVIS_HEIGHT_M, SMPL, Motion, joint_positions
from choreo.postprocess import count_limit_violations, postprocess
from choreo.postprocess.ground import sole_heights_m


def _jittery(rng: np.random.Generator, n_frames: int = 300) -> Motion:
    drift = np.cumsum(rng.normal(scale=0.03, size=(n_frames, 24, 3)), axis=0)
    rotations = 0.5 * drift / (1 + np.abs(drift)) + rng.normal(scale=0.05, size=(n_frames, 24, 3))
    rotations[:, 4, 0] -= 0.6  # left knee bent backwards: must be clamped
    root = np.zeros((n_frames, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M - 0.2 + rng.normal(scale=0.01, size=n_frames)
    root[:, 0] = np.cumsum(rng.normal(scale=0.01, size=n_frames))
    return Motion(30.0, root, rotations)


def _jerk(values: np.ndarray) -> float:
    return float(np.mean(np.abs(np.diff(values, n=3, axis=0))))


def test_postprocess_smooths_clamps_and_grounds(rng: np.random.Generator) -> None:
    motion = _jittery(rng)
    before = motion.to_array()
    out = postprocess(motion, lock=False)
    np.testing.assert_array_equal(motion.to_array(), before)
    assert out.n_frames == motion.n_frames and out.fps == motion.fps
    assert count_limit_violations(motion) > 0
    assert count_limit_violations(out) == 0
    soles = sole_heights_m(out).min(axis=1)
    assert soles.min() >= -1e-9
    assert np.mean(soles < 0.005) > 0.5  # standing on the floor a good share of the time
    assert np.mean(soles < 0.03) > 0.9  # and never far above it
    assert _jerk(out.rotations) < 0.3 * _jerk(motion.rotations)


def test_the_locks_keep_the_floor_the_limits_and_the_root_path(rng: np.random.Generator) -> None:
    motion = _jittery(rng)
    grounded, locked = postprocess(motion, lock=False), postprocess(motion)
    # The clamp after the locks may turn an ankle back into range by a little: millimetres at most.
    assert sole_heights_m(locked).min() >= -0.003
    assert count_limit_violations(locked) == 0
    np.testing.assert_array_equal(locked.root_translation[:, [0, 2]], grounded.root_translation[:, [0, 2]])


def test_postprocess_with_all_steps_off_copies_the_motion(rng: np.random.Generator) -> None:
    motion = _jittery(rng, n_frames=60)
    off = postprocess(
        motion, smooth=False, leg_ik=False, clamp_limits=False, soft_knees=False, ground=False, lock=False
    )
    np.testing.assert_array_equal(off.to_array(), motion.to_array())
    assert off.root_translation is not motion.root_translation


def test_lock_at_touch_down_reaches_the_feet_locks() -> None:
    """A stance gliding 15 cm/s: held where it touched down with ``lock_at_touch_down`` (a low-impact
    workout's), at the mean of its slide without."""
    n = 30
    root = np.zeros((n, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M
    root[:, 2] = 0.15 * np.arange(n) / 30.0
    motion = Motion(30.0, root, np.zeros((n, 24, 3)))
    steps = {"smooth": False, "leg_ik": False, "clamp_limits": False, "soft_knees": False, "ground": False}
    ankle = SMPL.index("left_ankle")
    path = joint_positions(motion)[:, ankle, 2]
    at_touch_down = joint_positions(postprocess(motion, lock_at_touch_down=True, **steps))[:, ankle, 2]
    at_mean = joint_positions(postprocess(motion, **steps))[:, ankle, 2]
    np.testing.assert_allclose(at_touch_down, path[0], atol=1e-3)
    np.testing.assert_allclose(at_mean, path.mean(), atol=1e-3)
