"""Feet that hold the floor: each foot locked where it touched down, for the whole of its contact.

While a foot is in contact (:class:`~choreo.contracts.contacts.ContactTrack`,
heel or toe) one point of it is held still on the floor plane at the place it
touched down: the heel (ankle joint) when the heel is down at any time of the
contact, with the foot turned flat (it keeps its heading, so a pivot still
turns), otherwise the toe, with the foot's own tilt (tiptoe stays tiptoe). The
legs reach the locks with the two-bone IK (:func:`choreo.motion.leg_ik.place_ankles`,
whose soft reach keeps knees from snapping straight); where a lock lies
beyond a leg's comfortable reach the pelvis lowers, by at most
:data:`MAX_PELVIS_DROP_M`, rather than the leg stretching. After lift-off
the lock eases out over :data:`EASE_S`. The root's
horizontal path is never touched: the dancer stays where the plan puts it,
and the legs do the work. A foot that is not locked and moves fast swings
clear of the floor (:data:`SWING_CLEARANCE_M`); none goes below it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from choreo.contracts.contacts import ContactTrack
from choreo.errors import ParameterError
from choreo.motion.contacts import HORIZONTAL_AXES, UP_AXIS, sole_clearance_m
from choreo.motion.leg_ik import ANKLE_COLUMNS, leg_kinematics, place_ankles
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_mat, mat_to_quat, quat_slerp, quat_to_mat
from choreo.postprocess.contacts import body_scale
from choreo.postprocess.filtering import DEFAULT_ROOT_CUTOFF_HZ, lowpass_signal
from choreo.postprocess.joint_limits import JointLimit, clamp_joint_limits

__all__ = [
    "EASE_S",
    "MAX_PELVIS_DROP_M",
    "REACH_MARGIN_M",
    "SWING_CLEARANCE_M",
    "SWING_SPEED_M_S",
    "lock_feet",
]

EASE_S = 0.2
"""How long a lock takes to settle onto the floor after touch-down, and to let go after lift-off."""

MAX_PELVIS_DROP_M = 0.08
"""The most the pelvis lowers (for the SMPL body) to bring a lock within reach."""

REACH_MARGIN_M = 0.005
"""A locked leg is kept this much short of straight (a knee of about 167 degrees at most)."""

SWING_SPEED_M_S = 0.3
"""A foot without a lock moving faster than this (for the SMPL body) is swinging and clears the floor."""

SWING_CLEARANCE_M = 0.04
"""How high a swinging foot's lowest sole is lifted, at least (for the SMPL body)."""

_TOE_NAMES = ("left_foot", "right_foot")
_FLOOR_ROUNDS = 2


def lock_feet(
    motion: Motion, contacts: ContactTrack, *, joint_limits: Mapping[str, JointLimit] | None = None
) -> Motion:
    """Hold every foot in contact at its touch-down point, bending the legs, lowering the pelvis if need be.

    Parameters
    ----------
    motion : the grounded motion (floor at y = 0); left untouched
    contacts : its contacts, at its fps and frame count
    joint_limits : joint name to limit (default: the SMPL table); the solved legs are
        clamped into them before the floor pass, so a foot the ankle cannot turn
        flat lifts its heel rather than pushing its toe through the floor

    Returns
    -------
    Motion
        A new motion with new leg rotations and a root whose height may be lower
        where a lock is out of reach; the root's horizontal path is unchanged.

    Raises
    ------
    ParameterError
        If the contacts do not match the motion's frames and fps.
    """
    if contacts.n_frames != motion.n_frames or contacts.fps != motion.fps:
        raise ParameterError(
            f"contacts ({contacts.n_frames} frames at {contacts.fps} fps) do not match "
            f"the motion ({motion.n_frames} frames at {motion.fps} fps)"
        )
    if motion.n_frames < 2 or not contacts.frames[:, :4].any():
        return _clear_swings(motion, np.zeros((motion.n_frames, 2)))
    skeleton = motion.skeleton
    clearance = sole_clearance_m(skeleton).reshape(2, 2)  # [leg, (ankle, toe)]
    toe_offsets = np.stack([skeleton.offsets[skeleton.index(name)] for name in _TOE_NAMES])  # [leg, 3]
    positions, world = leg_kinematics(motion)
    ankles = positions[:, ANKLE_COLUMNS]
    own = world[:, ANKLE_COLUMNS]
    flat = _flat(own)
    ease = max(1, int(round(EASE_S * motion.fps)))

    n = motion.n_frames
    targets = ankles.copy()
    weights = np.zeros((n, 2))
    orientations = own.copy()
    for leg in range(2):
        heel, toe = contacts.frames[:, 2 * leg], contacts.frames[:, 2 * leg + 1]
        toes = ankles[:, leg] + own[:, leg] @ toe_offsets[leg]
        for start, stop in _runs(heel | toe):
            frames = np.arange(start, stop)
            settle = _smoothstep(np.minimum(1.0, (frames - start + 1) / (ease + 1)))[:, None]
            if heel[start:stop].any():  # the heel is held, the foot turned flat at its touch-down heading
                rotation = _slerp(
                    own[frames, leg], np.broadcast_to(flat[start, leg], (frames.size, 3, 3)), settle
                )
                target = np.broadcast_to(ankles[start, leg], (frames.size, 3)).copy()
                floor = clearance[leg, 0]
                target[:, UP_AXIS] = ankles[frames, leg, UP_AXIS] + settle[:, 0] * (
                    floor - ankles[frames, leg, UP_AXIS]
                )
            else:  # on tiptoe: the toe is held, the foot keeps its own tilt
                rotation = own[frames, leg]
                toe_at = np.broadcast_to(toes[start], (frames.size, 3)).copy()
                floor = clearance[leg, 1]
                toe_at[:, UP_AXIS] = toes[frames, UP_AXIS] + settle[:, 0] * (floor - toes[frames, UP_AXIS])
                target = toe_at - rotation @ toe_offsets[leg]
            targets[frames, leg] = target
            weights[frames, leg] = 1.0
            orientations[frames, leg] = rotation
            after = np.arange(stop, min(n, stop + ease))
            fade = _smoothstep(1.0 - (after - stop + 1) / (ease + 1))
            later = fade > weights[after, leg]
            after, fade = after[later], fade[later]
            targets[after, leg] = target[-1]
            weights[after, leg] = fade
            orientations[after, leg] = rotation[-1]

    drop = _pelvis_drop(motion, positions, targets, weights)
    root = motion.root_translation.astype(np.float64, copy=True)
    root[:, UP_AXIS] -= drop
    lowered = motion.replace(root_translation=root, rotations=motion.rotations.astype(np.float64))
    locked = place_ankles(lowered, targets, weights, orientations)
    for _ in range(_FLOOR_ROUNDS):
        locked = _clear_swings(clamp_joint_limits(locked, limits=joint_limits), weights)
    return locked


def _clear_swings(motion: Motion, weights: np.ndarray) -> Motion:
    """Lift each foot that is not held where it would sweep along the floor or go through it.

    A foot that moves faster than :data:`SWING_SPEED_M_S` without a lock is
    swinging: its lowest sole is raised to :data:`SWING_CLEARANCE_M` (the share
    of it by how far it is from a lock, and eased in with its speed), so it
    either stands or clears the floor; a foot whose sole is below the floor is
    raised onto it. The lift is smoothed like the root, never below what it must be.
    """
    n = motion.n_frames
    positions, world = leg_kinematics(motion)
    ankles = positions[:, ANKLE_COLUMNS]
    skeleton = motion.skeleton
    toe_offsets = np.stack([skeleton.offsets[skeleton.index(name)] for name in _TOE_NAMES])
    toes = ankles + np.einsum("flij,lj->fli", world[:, ANKLE_COLUMNS], toe_offsets)
    clearance = sole_clearance_m(skeleton).reshape(2, 2)
    lowest = np.minimum(ankles[..., UP_AXIS] - clearance[:, 0], toes[..., UP_AXIS] - clearance[:, 1])
    scale = body_scale(skeleton)
    speed = np.maximum(_speed(ankles, motion.fps), _speed(toes, motion.fps)) if n > 1 else np.zeros((n, 2))
    swinging = np.clip((speed / scale - 0.8 * SWING_SPEED_M_S) / (0.4 * SWING_SPEED_M_S), 0.0, 1.0)
    swinging = _smoothstep(swinging) * (weights < 1.0)
    floor = np.maximum(-lowest, 0.0)
    lift = np.maximum(swinging * SWING_CLEARANCE_M * scale - lowest, floor)
    lift = np.where(weights >= 1.0, floor, np.maximum(_smooth_above(lift, motion.fps), 0.0))
    targets = ankles.copy()
    targets[..., UP_AXIS] += lift
    return place_ankles(motion, targets, (lift > 1e-6).astype(np.float64))


def _speed(points: np.ndarray, fps: float) -> np.ndarray:
    """Horizontal speed ``[frames, 2]`` m/s by central differences."""
    return np.linalg.norm(np.gradient(points[..., HORIZONTAL_AXES], axis=0), axis=-1) * fps


def _flat(rotations: np.ndarray) -> np.ndarray:
    """The rotations turned flat: the same heading about the up axis, no tilt (the rest pose's foot)."""
    forward = rotations[..., :, 2]  # each rotation's image of +Z
    yaw = np.arctan2(forward[..., HORIZONTAL_AXES[0]], forward[..., HORIZONTAL_AXES[1]])
    axis = np.zeros((*yaw.shape, 3))
    axis[..., UP_AXIS] = yaw
    return aa_to_mat(axis.reshape(-1, 3)).reshape(*yaw.shape, 3, 3)


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist(), strict=True))


def _smoothstep(t: np.ndarray) -> np.ndarray:
    return t * t * (3.0 - 2.0 * t)


def _slerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Rotation matrices ``[n, 3, 3]`` a share ``t [n, 1]`` of the way from ``a`` to ``b``."""
    return quat_to_mat(quat_slerp(mat_to_quat(a), mat_to_quat(b), t[:, 0]))


def _pelvis_drop(
    motion: Motion, positions: np.ndarray, targets: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """How far the pelvis lowers in each frame, ``[frames]`` metres, so each lock is within reach."""
    scale = body_scale(motion.skeleton)
    need = np.zeros(motion.n_frames)
    for leg in range(2):
        c = 4 * leg
        hip, knee, ankle = positions[:, c + 1], positions[:, c + 2], positions[:, c + 3]
        reach = (np.linalg.norm(knee - hip, axis=1) + np.linalg.norm(ankle - knee, axis=1)) - REACH_MARGIN_M
        wanted = hip + weights[:, leg, None] * (targets[:, leg] - ankle) + (ankle - hip)
        offset = wanted - hip
        across = np.linalg.norm(offset[:, HORIZONTAL_AXES], axis=1)
        below = hip[:, UP_AXIS] - wanted[:, UP_AXIS]
        room = np.sqrt(np.maximum(reach**2 - across**2, 0.0))
        need = np.maximum(need, below - room)
    need = np.clip(need, 0.0, MAX_PELVIS_DROP_M * scale)
    return np.minimum(_smooth_above(need, motion.fps), MAX_PELVIS_DROP_M * scale)


def _smooth_above(need: np.ndarray, fps: float) -> np.ndarray:
    """A smooth curve (per column, along frames) that is never below ``need``.

    The need is widened by a running maximum over half a period of the root's
    cut-off, low-passed like the root, and raised back to the need where the
    low-pass still dips under it (seldom, and by little, after the widening).
    """
    if need.shape[0] <= 12:
        return need
    width = max(1, int(round(fps / DEFAULT_ROOT_CUTOFF_HZ / 2)))
    padded = np.pad(need, [(width, width)] + [(0, 0)] * (need.ndim - 1), mode="edge")
    widened = np.max(np.lib.stride_tricks.sliding_window_view(padded, 2 * width + 1, axis=0), axis=-1)
    return np.maximum(lowpass_signal(widened, DEFAULT_ROOT_CUTOFF_HZ, fps), need)
