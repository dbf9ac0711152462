"""Zero-phase low-pass filtering of a motion in a continuous rotation representation.

Generated motion carries frame-to-frame jitter that reads as trembling and
inflates jerk and foot skating. A Butterworth low-pass run forwards and
backwards (:func:`choreo.numeric.butterworth.sos_filtfilt`, what scipy's ``sosfiltfilt`` does)
removes it without delaying the motion, so poses stay on the beats. Axis-angle jumps where
the angle wraps at pi, so the rotations are filtered as unit quaternions made continuous in
time (hemisphere-aligned), then renormalised.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

import numpy as np

from choreo.errors import ParameterError
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_quat, quat_to_aa
from choreo.numeric.butterworth import butter_lowpass_sos, sos_filtfilt

__all__ = [
    "DEFAULT_BODY_CUTOFF_HZ",
    "DEFAULT_JOINT_CUTOFF_HZ",
    "DEFAULT_ROOT_CUTOFF_HZ",
    "joint_cutoffs_hz",
    "lowpass_filter",
    "lowpass_signal",
]

DEFAULT_BODY_CUTOFF_HZ = 8.0
"""Cut-off for trunk, hips, knees, shoulders and elbows: keeps dance accents, drops tremor."""

DEFAULT_ROOT_CUTOFF_HZ = 6.0
"""Cut-off for the root translation: the whole body's path is the slowest signal."""

DEFAULT_JOINT_CUTOFF_HZ: Mapping[str, float] = {
    # Wrists and hands flick fast and weigh little: they keep more of their spectrum.
    "left_wrist": 10.0,
    "right_wrist": 10.0,
    "left_hand": 10.0,
    "right_hand": 10.0,
    # Ankles and feet decide contact: jitter there shows up as skating, so they are smoothed more.
    "left_ankle": 6.0,
    "right_ankle": 6.0,
    "left_foot": 6.0,
    "right_foot": 6.0,
}
"""Per-joint cut-offs that differ from :data:`DEFAULT_BODY_CUTOFF_HZ`, by SMPL joint name."""


def joint_cutoffs_hz(
    names: tuple[str, ...],
    *,
    body_cutoff_hz: float = DEFAULT_BODY_CUTOFF_HZ,
    overrides_hz: Mapping[str, float] | None = None,
) -> np.ndarray:
    """Cut-off frequency of every joint, ``[joints]`` in Hz.

    Parameters
    ----------
    names : joint names of the skeleton, in order
    body_cutoff_hz : float > 0, the cut-off of every joint not named in ``overrides_hz``
    overrides_hz : joint name to cut-off in Hz; defaults to :data:`DEFAULT_JOINT_CUTOFF_HZ`

    Raises
    ------
    ParameterError
        If a cut-off is not positive or an override names an unknown joint.
    """
    overrides = DEFAULT_JOINT_CUTOFF_HZ if overrides_hz is None else overrides_hz
    _check_cutoff(body_cutoff_hz, "body_cutoff_hz")
    cutoffs = np.full(len(names), float(body_cutoff_hz))
    for name, cutoff_hz in overrides.items():
        if name not in names:
            raise ParameterError(f"joint cut-off given for unknown joint {name!r}")
        _check_cutoff(cutoff_hz, f"cut-off of joint {name!r}")
        cutoffs[names.index(name)] = float(cutoff_hz)
    return cutoffs


def lowpass_filter(
    motion: Motion,
    *,
    body_cutoff_hz: float = DEFAULT_BODY_CUTOFF_HZ,
    joint_cutoff_hz: Mapping[str, float] | None = None,
    root_cutoff_hz: float | None = DEFAULT_ROOT_CUTOFF_HZ,
    order: int = 4,
) -> Motion:
    """Zero-phase Butterworth low-pass of every joint rotation and the root translation.

    Parameters
    ----------
    motion : the motion to smooth; left untouched
    body_cutoff_hz : float > 0, cut-off of joints without their own entry
    joint_cutoff_hz : joint name to cut-off in Hz, overriding ``body_cutoff_hz``;
        defaults to :data:`DEFAULT_JOINT_CUTOFF_HZ` (wrists/hands and ankles/feet)
    root_cutoff_hz : float > 0, cut-off of the root translation; ``None`` leaves it as is
    order : int >= 1, Butterworth order (the forward-backward pass doubles it)

    Returns
    -------
    Motion
        A new motion with the same frames, fps and skeleton. A cut-off at or
        above the Nyquist frequency ``fps / 2`` leaves that joint unfiltered.
        Motions too short for the filter's edge padding are padded as far as
        they allow; motions of fewer than two frames come back unchanged.

    Raises
    ------
    ParameterError
        If a cut-off is not positive or ``order`` is below 1.
    """
    if int(order) != order or order < 1:
        raise ParameterError(f"filter order must be a positive integer, got {order}")
    names = motion.skeleton.names
    cutoffs = joint_cutoffs_hz(names, body_cutoff_hz=body_cutoff_hz, overrides_hz=joint_cutoff_hz)
    if root_cutoff_hz is not None:
        _check_cutoff(root_cutoff_hz, "root_cutoff_hz")
    if motion.n_frames < 2:
        root = motion.root_translation.copy()
        return motion.replace(root_translation=root, rotations=motion.rotations.copy())

    quats = _continuous_in_time(aa_to_quat(motion.rotations))
    filtered = quats.copy()
    for cutoff_hz in np.unique(cutoffs):
        joints = np.flatnonzero(cutoffs == cutoff_hz)
        filtered[:, joints] = _zero_phase_lowpass(quats[:, joints], cutoff_hz, motion.fps, int(order))
    norms = np.linalg.norm(filtered, axis=-1, keepdims=True)
    # A filtered quaternion cannot reach zero length from a continuous unit sequence,
    # but guard the division so a degenerate input cannot produce NaN.
    filtered = np.where(norms > 1e-9, filtered / np.maximum(norms, 1e-9), quats)

    root = motion.root_translation.astype(np.float64, copy=True)
    if root_cutoff_hz is not None:
        root = _zero_phase_lowpass(root, root_cutoff_hz, motion.fps, int(order))
    return motion.replace(root_translation=root, rotations=quat_to_aa(filtered))


def _continuous_in_time(quats: np.ndarray) -> np.ndarray:
    """Flip quaternion signs along axis 0 so neighbouring frames have a non-negative dot product.

    The same result as :func:`choreo.motion.rotations.quat_align_hemisphere`
    along time, without a Python loop over frames: frame ``i`` is flipped when
    an odd number of sign changes lie between it and frame 0.
    """
    if quats.shape[0] < 2:
        return quats.copy()
    changes = np.sum(quats[1:] * quats[:-1], axis=-1) < 0.0
    odd = np.cumsum(changes, axis=0) % 2 == 1
    sign = np.concatenate([np.ones((1, *odd.shape[1:])), np.where(odd, -1.0, 1.0)], axis=0)
    return quats * sign[..., None]


def lowpass_signal(signal: np.ndarray, cutoff_hz: float, fps: float, *, order: int = 4) -> np.ndarray:
    """Zero-phase Butterworth low-pass of any signal along its first (time) axis.

    Parameters
    ----------
    signal : np.ndarray [shape=(frames, ...)]
    cutoff_hz : float > 0; at or above ``fps / 2`` the signal is returned as is
    fps : float > 0, samples per second
    order : int >= 1

    Raises
    ------
    ParameterError
        If ``cutoff_hz`` is not positive.
    """
    _check_cutoff(cutoff_hz, "cutoff_hz")
    arr = np.asarray(signal, dtype=np.float64)
    if arr.shape[0] < 2:
        return arr.copy()
    return _zero_phase_lowpass(arr, cutoff_hz, fps, order)


def _check_cutoff(cutoff_hz: float, name: str) -> None:
    if not np.isfinite(cutoff_hz) or cutoff_hz <= 0:
        raise ParameterError(f"{name} must be a positive frequency in Hz, got {cutoff_hz}")


@lru_cache(maxsize=64)
def _butter_sos(order: int, normalized_cutoff: float) -> np.ndarray:
    """The low-pass's second-order sections, designed once per order and cut-off (the design costs
    more than filtering a short signal, and the foot locks filter at the same cut-off several times).
    Shared between calls: not to be written to."""
    return butter_lowpass_sos(order, normalized_cutoff)


def _zero_phase_lowpass(signal: np.ndarray, cutoff_hz: float, fps: float, order: int) -> np.ndarray:
    """Forward-backward Butterworth low-pass along axis 0 of ``signal``."""
    nyquist_hz = fps / 2.0
    if cutoff_hz >= nyquist_hz:
        return signal.copy()
    sos = _butter_sos(order, cutoff_hz / nyquist_hz)
    # scipy's default edge padding; shorter signals get as much padding as they have frames.
    default_padlen = 3 * (2 * len(sos) + 1)
    padlen = min(default_padlen, signal.shape[0] - 1)
    return sos_filtfilt(sos, signal, padlen)
