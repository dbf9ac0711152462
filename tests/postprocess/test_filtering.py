"""Zero-phase low-pass: constants pass, high frequencies go, phase stays, sign flips are harmless."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.motion import SMPL, Motion
from choreo.motion.rotations import aa_to_quat, quat_to_aa
from choreo.postprocess import lowpass_filter
from choreo.postprocess.filtering import DEFAULT_JOINT_CUTOFF_HZ, joint_cutoffs_hz

FPS = 30.0
ELBOW = SMPL.index("left_elbow")
WRIST = SMPL.index("left_wrist")


def _sine_motion(freq_hz: float, joint: int, n_frames: int = 600, amplitude_rad: float = 0.3) -> Motion:
    t = np.arange(n_frames) / FPS
    rotations = np.zeros((n_frames, 24, 3))
    rotations[:, joint, 2] = amplitude_rad * np.sin(2 * np.pi * freq_hz * t)
    root = np.zeros((n_frames, 3))
    root[:, 1] = 0.9 + 0.05 * np.sin(2 * np.pi * freq_hz * t)
    return Motion(FPS, root, rotations)


def _middle(x: np.ndarray) -> np.ndarray:
    return x[60:-60]


def test_constant_motion_is_unchanged(rng: np.random.Generator) -> None:
    pose = rng.normal(scale=0.8, size=(24, 3))
    motion = Motion(FPS, np.tile([0.3, 0.9, -0.2], (90, 1)), np.tile(pose, (90, 1, 1)))
    out = lowpass_filter(motion)
    np.testing.assert_allclose(
        aa_to_quat(out.rotations) * np.sign(aa_to_quat(out.rotations)[..., 3:]),
        aa_to_quat(motion.rotations) * np.sign(aa_to_quat(motion.rotations)[..., 3:]),
        atol=1e-9,
    )
    np.testing.assert_allclose(out.root_translation, motion.root_translation, atol=1e-12)


def test_low_frequency_kept_high_frequency_removed() -> None:
    slow = lowpass_filter(_sine_motion(1.0, ELBOW))
    fast = lowpass_filter(_sine_motion(13.0, ELBOW))
    assert np.max(np.abs(_middle(slow.rotations[:, ELBOW, 2]))) == pytest.approx(0.3, rel=0.01)
    assert np.max(np.abs(_middle(fast.rotations[:, ELBOW, 2]))) < 0.01
    slow_root = _middle(slow.root_translation[:, 1]) - 0.9
    fast_root = _middle(fast.root_translation[:, 1]) - 0.9
    assert np.max(np.abs(slow_root)) == pytest.approx(0.05, rel=0.01)
    assert np.max(np.abs(fast_root)) < 0.002


def test_filter_is_zero_phase() -> None:
    motion = _sine_motion(2.0, ELBOW)
    out = lowpass_filter(motion, body_cutoff_hz=3.0)
    x = _middle(motion.rotations[:, ELBOW, 2])
    y = _middle(out.rotations[:, ELBOW, 2])
    lags = np.arange(-5, 6)
    corr = [np.dot(np.roll(x, lag), y) for lag in lags]
    assert lags[int(np.argmax(corr))] == 0
    # A zero-phase filter only scales a sinusoid: the output is the input times a gain.
    assert np.corrcoef(x, y)[0, 1] > 0.9999


def test_per_joint_cutoffs_wrist_keeps_more_than_elbow() -> None:
    cutoffs = joint_cutoffs_hz(SMPL.names)
    assert cutoffs[WRIST] == DEFAULT_JOINT_CUTOFF_HZ["left_wrist"] > cutoffs[ELBOW]
    assert cutoffs[SMPL.index("right_ankle")] == DEFAULT_JOINT_CUTOFF_HZ["right_ankle"] < cutoffs[ELBOW]
    at_wrist = lowpass_filter(_sine_motion(9.0, WRIST)).rotations[:, WRIST, 2]
    at_elbow = lowpass_filter(_sine_motion(9.0, ELBOW)).rotations[:, ELBOW, 2]
    assert np.max(np.abs(_middle(at_wrist))) > 2 * np.max(np.abs(_middle(at_elbow)))


def test_angle_wrap_and_quaternion_sign_flips_make_no_glitch() -> None:
    # A turn about Y through 180 degrees: axis-angle flips its axis at pi, and
    # quaternions from it flip sign; the filtered turn must stay on the input.
    n_frames = 120
    angle = np.linspace(2.6, 3.7, n_frames)
    aa = np.zeros((n_frames, 24, 3))
    aa[:, 0, 1] = angle
    aa = quat_to_aa(aa_to_quat(aa))  # canonical form: angle in [0, pi], axis flips
    assert np.max(np.abs(np.diff(aa[:, 0, 1]))) > 6.0
    motion = Motion(FPS, np.zeros((n_frames, 3)), aa)
    out = lowpass_filter(motion)
    q_in = aa_to_quat(motion.rotations[:, 0])
    q_out = aa_to_quat(out.rotations[:, 0])
    angle_error = 2 * np.arccos(np.clip(np.abs(np.sum(q_in * q_out, axis=-1)), 0, 1))
    assert np.max(angle_error) < 1e-3


@pytest.mark.parametrize("n_frames", [0, 1, 2, 3, 10, 27])
def test_short_motions_are_handled(n_frames: int, rng: np.random.Generator) -> None:
    pose = rng.normal(scale=0.5, size=(24, 3))
    motion = Motion(FPS, np.tile([0.0, 0.9, 0.0], (n_frames, 1)), np.tile(pose, (n_frames, 1, 1)))
    out = lowpass_filter(motion)
    assert out.n_frames == n_frames
    np.testing.assert_allclose(out.root_translation, motion.root_translation, atol=1e-9)
    assert np.all(np.isfinite(out.rotations))


def test_input_untouched_and_cutoff_above_nyquist_passes(rng: np.random.Generator) -> None:
    motion = Motion(FPS, rng.normal(size=(50, 3)), rng.normal(scale=0.3, size=(50, 24, 3)))
    before = (motion.root_translation.copy(), motion.rotations.copy())
    out = lowpass_filter(motion, body_cutoff_hz=20.0, joint_cutoff_hz={}, root_cutoff_hz=15.0)
    np.testing.assert_array_equal(motion.root_translation, before[0])
    np.testing.assert_array_equal(motion.rotations, before[1])
    np.testing.assert_allclose(out.root_translation, motion.root_translation)
    q_in, q_out = aa_to_quat(motion.rotations), aa_to_quat(out.rotations)
    np.testing.assert_allclose(np.abs(np.sum(q_in * q_out, axis=-1)), 1.0, atol=1e-9)


def test_bad_parameters_are_named() -> None:
    motion = _sine_motion(1.0, ELBOW, n_frames=40)
    with pytest.raises(ParameterError, match="body_cutoff_hz"):
        lowpass_filter(motion, body_cutoff_hz=0.0)
    with pytest.raises(ParameterError, match="left_wirst"):
        lowpass_filter(motion, joint_cutoff_hz={"left_wirst": 5.0})
    with pytest.raises(ParameterError, match="root_cutoff_hz"):
        lowpass_filter(motion, root_cutoff_hz=-1.0)
    with pytest.raises(ParameterError, match="order"):
        lowpass_filter(motion, order=0)


def test_continuous_in_time_matches_the_core_hemisphere_alignment(rng: np.random.Generator) -> None:
    from choreo.motion.rotations import quat_align_hemisphere
    from choreo.postprocess.filtering import _continuous_in_time

    quats = aa_to_quat(np.cumsum(rng.normal(scale=0.5, size=(200, 24, 3)), axis=0))
    quats *= rng.choice([-1.0, 1.0], size=(200, 24, 1))
    np.testing.assert_array_equal(_continuous_in_time(quats), quat_align_hemisphere(quats, axis=0))
