"""Feet on the floor and out of it: a vertical root correction.

The lowest point under the feet (each foot point's joint height minus its sole
clearance, see :func:`~choreo.motion.contacts.sole_clearance_m`) is put
on the floor, y = 0, in every frame where a foot is in contact, and never
below it. Between contacts (jumps, kicks) the correction is interpolated, so
the flight keeps its own shape. No other joint centre goes below the floor
either (hands and head in floor work). Only the root translation changes: the
pose, and so every joint limit, is left as it is.
"""

from __future__ import annotations

import numpy as np

from choreo.errors import ParameterError
from choreo.motion.contacts import (
    ANKLE_CONTACT_HEIGHT_M,
    TOE_CONTACT_HEIGHT_M,
    UP_AXIS,
    foot_point_indices,
    foot_positions,
    horizontal_speed_m_s,
    point_contacts,
    sole_clearance_m,
)
from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion
from choreo.postprocess.filtering import DEFAULT_ROOT_CUTOFF_HZ, lowpass_signal

__all__ = ["GROUND_CONTACT_SPEED_M_S", "align_floor", "floor_offset_m", "ground_feet", "sole_heights_m"]

GROUND_CONTACT_SPEED_M_S = 0.5
"""A low foot point faster than this is swinging past the floor, not standing on it."""

_FLOOR_PERCENTILE = 5.0
_SMOOTHING_ROUNDS = 3


def sole_heights_m(motion: Motion) -> np.ndarray:
    """Height of the sole under each foot point, ``[frames, 4]`` metres (floor at 0)."""
    positions = foot_positions(motion)
    return positions[..., UP_AXIS] - sole_clearance_m(motion.skeleton)


def floor_offset_m(motion: Motion, *, contact_speed_m_s: float = GROUND_CONTACT_SPEED_M_S) -> float:
    """Where the motion's own floor lies, metres: 0 for a motion already standing on y = 0.

    The floor is the median height of the lowest sole over the frames in
    which a foot point moves slower than ``contact_speed_m_s`` (a planted foot),
    or, if no foot is ever that slow, the 5th percentile over all frames. The
    median of planted frames is robust both to jumps (few, and seldom slow) and
    to feet that sink now and then (a low percentile would follow the sinking).
    """
    if motion.n_frames == 0:
        return 0.0
    joints = foot_positions(motion)
    lowest = (joints[..., UP_AXIS] - sole_clearance_m(motion.skeleton)).min(axis=1)
    return _floor_height(joints, lowest, motion.fps, contact_speed_m_s)


def _floor_height(joints: np.ndarray, lowest: np.ndarray, fps: float, contact_speed_m_s: float) -> float:
    if joints.shape[0] < 2:
        return float(lowest.min())
    speed = horizontal_speed_m_s(joints, fps)
    slow = np.any(np.concatenate([speed, speed[-1:]], axis=0) < contact_speed_m_s, axis=1)
    if not np.any(slow):
        return float(np.percentile(lowest, _FLOOR_PERCENTILE))
    return float(np.median(lowest[slow]))


def align_floor(motion: Motion) -> Motion:
    """Move the whole motion vertically by one constant so its own floor is y = 0.

    Unlike :func:`ground_feet` this changes nothing within the motion; it only
    calibrates the floor height, e.g. of recorded mocap before measuring foot
    contact on it.
    """
    root = motion.root_translation.astype(np.float64, copy=True)
    root[:, UP_AXIS] -= floor_offset_m(motion)
    return motion.replace(root_translation=root, rotations=motion.rotations.copy())


def ground_feet(
    motion: Motion,
    *,
    ankle_height_m: float = ANKLE_CONTACT_HEIGHT_M,
    toe_height_m: float = TOE_CONTACT_HEIGHT_M,
    contact_speed_m_s: float = GROUND_CONTACT_SPEED_M_S,
    smooth_cutoff_hz: float | None = DEFAULT_ROOT_CUTOFF_HZ,
) -> Motion:
    """Shift the root vertically so the feet stand on y = 0 in contact and never sink below.

    Parameters
    ----------
    motion : the motion to ground; left untouched
    ankle_height_m, toe_height_m : contact heights of the ankle and toe joints
        above the floor
    contact_speed_m_s : float > 0, a foot point must move slower than this to be
        in contact
    smooth_cutoff_hz : float > 0, zero-phase low-pass cut-off of the correction
        (the root's by default), so that foot jitter in contact frames does not
        become a jittering body; ``None`` snaps every contact frame exactly

    Returns
    -------
    Motion
        A new motion whose root height differs by a per-frame correction. The
        floor is first estimated by :func:`floor_offset_m` (so a motion that is
        sunk or floats as a whole moves as a whole);
        contact frames then have their lowest sole exactly at 0, the other
        frames interpolate the correction of the neighbouring contacts, raised
        where needed so no sole, and no other joint centre, is ever below 0.
        With smoothing, a contact frame's lowest sole sits within millimetres
        of 0 instead of exactly on it; a constant offset is still removed exactly.

    Raises
    ------
    ParameterError
        If a height or speed is not positive.
    """
    if not np.isfinite(contact_speed_m_s) or contact_speed_m_s <= 0:
        raise ParameterError(f"contact_speed_m_s must be positive, got {contact_speed_m_s}")
    root = motion.root_translation.astype(np.float64, copy=True)
    if motion.n_frames == 0:
        return motion.replace(root_translation=root, rotations=motion.rotations.copy())

    joints = foot_positions(motion)
    lowest = (joints[..., UP_AXIS] - sole_clearance_m(motion.skeleton)).min(axis=1)
    floor_shift = -_floor_height(joints, lowest, motion.fps, contact_speed_m_s)
    joints[..., UP_AXIS] += floor_shift
    contact = point_contacts(
        joints,
        motion.fps,
        ankle_height_m=ankle_height_m,
        toe_height_m=toe_height_m,
        max_speed_m_s=contact_speed_m_s,
    ).any(axis=1)

    frames = np.arange(motion.n_frames)
    if np.any(contact):
        shift = np.interp(frames, frames[contact], -lowest[contact])
    else:
        shift = np.full(motion.n_frames, -lowest.min())
    others = np.setdiff1d(np.arange(motion.skeleton.n_joints), foot_point_indices(motion.skeleton))
    body_lowest = joint_positions(motion)[:, others, UP_AXIS].min(axis=1)
    floor_limit = np.maximum(-lowest, -body_lowest)
    shift = np.maximum(shift, floor_limit)
    if smooth_cutoff_hz is not None:
        # A smooth path that still never dips under the floor: alternate the low-pass with
        # the floor rule; each round leaves smaller kinks where the rule bites.
        for _ in range(_SMOOTHING_ROUNDS):
            shift = np.maximum(lowpass_signal(shift, smooth_cutoff_hz, motion.fps), floor_limit)
    root[:, UP_AXIS] += shift
    return motion.replace(root_translation=root, rotations=motion.rotations.copy())
