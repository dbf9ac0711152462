"""Less foot skating: move the body over the planted foot instead of sliding the foot.

When a foot point stays on the ground from one frame to the next, it should
not move. This step finds, for every pair of frames, the contact point that
moved least horizontally and shifts the root by the opposite of that
movement, so the most planted foot stays put and the body travels over it.
The correction is smoothed with the same zero-phase low-pass as the root
(6 Hz by default): switching the anchor between feet otherwise jerks the body
from frame to frame. Only the horizontal root translation changes; heights
and poses do not.
"""

from __future__ import annotations

import numpy as np

from choreo.errors import ParameterError
from choreo.motion.contacts import (
    ANKLE_CONTACT_HEIGHT_M,
    HORIZONTAL_AXES,
    TOE_CONTACT_HEIGHT_M,
    foot_positions,
    point_contacts,
)
from choreo.motion.motion import Motion
from choreo.postprocess.filtering import DEFAULT_ROOT_CUTOFF_HZ, lowpass_signal

__all__ = ["PIN_CONTACT_SPEED_M_S", "pin_feet"]

PIN_CONTACT_SPEED_M_S = 1.0
"""Foot points on the ground slower than this are treated as meant to stand still."""


def pin_feet(
    motion: Motion,
    *,
    strength: float = 1.0,
    ankle_height_m: float = ANKLE_CONTACT_HEIGHT_M,
    toe_height_m: float = TOE_CONTACT_HEIGHT_M,
    contact_speed_m_s: float = PIN_CONTACT_SPEED_M_S,
    smooth_cutoff_hz: float | None = DEFAULT_ROOT_CUTOFF_HZ,
) -> Motion:
    """Cancel the horizontal slide of the most planted foot point by moving the root.

    Parameters
    ----------
    motion : a grounded motion (floor at y = 0); left untouched
    strength : float in [0, 1], share of the slide that is cancelled
    ankle_height_m, toe_height_m : contact heights of the ankle and toe joints
    contact_speed_m_s : float > 0, faster foot points are not pinned
    smooth_cutoff_hz : float > 0, zero-phase low-pass cut-off of the correction;
        ``None`` applies it frame by frame

    Returns
    -------
    Motion
        A new motion whose horizontal root path differs by the accumulated
        (and smoothed) corrections.

    Raises
    ------
    ParameterError
        If ``strength`` is outside [0, 1] or ``contact_speed_m_s`` is not positive.
    """
    if not 0.0 <= strength <= 1.0:
        raise ParameterError(f"strength must lie in [0, 1], got {strength}")
    if not np.isfinite(contact_speed_m_s) or contact_speed_m_s <= 0:
        raise ParameterError(f"contact_speed_m_s must be positive, got {contact_speed_m_s}")
    root = motion.root_translation.astype(np.float64, copy=True)
    if motion.n_frames < 2 or strength == 0.0:
        return motion.replace(root_translation=root, rotations=motion.rotations.copy())

    feet = foot_positions(motion)
    contact = point_contacts(
        feet,
        motion.fps,
        ankle_height_m=ankle_height_m,
        toe_height_m=toe_height_m,
        max_speed_m_s=contact_speed_m_s,
    )
    planted = contact[1:] & contact[:-1]
    steps = np.diff(feet[..., HORIZONTAL_AXES], axis=0)
    step_len = np.where(planted, np.linalg.norm(steps, axis=-1), np.inf)
    anchor = np.argmin(step_len, axis=1)
    anchored = np.isfinite(step_len[np.arange(len(anchor)), anchor])
    slide = steps[np.arange(len(anchor)), anchor] * anchored[:, None]
    correction = np.concatenate([np.zeros((1, 2)), -strength * np.cumsum(slide, axis=0)])
    if smooth_cutoff_hz is not None:
        correction = lowpass_signal(correction, smooth_cutoff_hz, motion.fps)
    root[:, HORIZONTAL_AXES[0]] += correction[:, 0]
    root[:, HORIZONTAL_AXES[1]] += correction[:, 1]
    return motion.replace(root_translation=root, rotations=motion.rotations.copy())
