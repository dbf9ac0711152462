"""Anatomical joint limits: clamp rotations into a human range and count what falls outside.

Each joint's local rotation is split into a *twist* about its bone (the rest
direction from the joint to its child) and a *swing* that moves the bone. The
swing is a rotation about an axis perpendicular to the bone; its rotation
vector has two components, along the joint's ``swing_axis`` and along
``twist_axis x swing_axis``. A limit bounds the twist angle and both swing
components, each by an interval. Hinges fall out of the same form: a knee's
flexion is its swing about the left-right axis, bounded on one side by zero
(it never bends backwards), with a narrow band for the other swing component.

Clamping moves each out-of-range number to the nearest bound and rebuilds the
rotation, so a rotation inside its limits is returned exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from choreo.errors import ParameterError
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_quat, quat_conjugate, quat_multiply, quat_to_aa
from choreo.motion.skeleton import SMPL, Skeleton
from choreo.numeric.vectors import dot

__all__ = [
    "LIMIT_TOLERANCE_RAD",
    "SMPL_JOINT_LIMITS",
    "JointLimit",
    "clamp_joint_limits",
    "count_limit_violations",
    "limit_violation_mask",
    "swing_twist",
]

LIMIT_TOLERANCE_RAD = 1e-4
"""Slack when counting violations, far below anything visible (0.006 degrees)."""

_MAX_SWING_RAD = np.pi - 1e-3


@dataclass(frozen=True)
class JointLimit:
    """Range of one joint's local rotation, in radians.

    Parameters
    ----------
    twist_min_rad, twist_max_rad : interval of the twist angle about the bone
    swing1_min_rad, swing1_max_rad : interval of the swing component about ``swing_axis``
    swing2_min_rad, swing2_max_rad : interval of the swing component about
        ``twist_axis x swing_axis``
    swing_axis : np.ndarray [shape=(3,)], in the joint's rest frame; for a hinge,
        the hinge axis. Only its part perpendicular to the bone is used.
    """

    twist_min_rad: float
    twist_max_rad: float
    swing1_min_rad: float
    swing1_max_rad: float
    swing2_min_rad: float
    swing2_max_rad: float
    swing_axis: tuple[float, float, float] = (1.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        pairs = (
            ("twist", self.twist_min_rad, self.twist_max_rad),
            ("swing1", self.swing1_min_rad, self.swing1_max_rad),
            ("swing2", self.swing2_min_rad, self.swing2_max_rad),
        )
        for name, low, high in pairs:
            if not (-np.pi <= low <= high <= np.pi):
                raise ParameterError(f"{name} limits must satisfy -pi <= min <= max <= pi: [{low}, {high}]")

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of ``(twist, swing1, swing2)``."""
        low = np.array([self.twist_min_rad, self.swing1_min_rad, self.swing2_min_rad])
        high = np.array([self.twist_max_rad, self.swing1_max_rad, self.swing2_max_rad])
        return low, high


def _deg(*values: float) -> tuple[float, ...]:
    return tuple(float(np.deg2rad(v)) for v in values)


def _ball(
    twist_deg: float,
    swing1_deg: tuple[float, float],
    swing2_deg: tuple[float, float],
    axis: tuple[float, float, float] = (1, 0, 0),
) -> JointLimit:
    t = _deg(twist_deg)[0]
    s1 = _deg(*swing1_deg)
    s2 = _deg(*swing2_deg)
    x, y, z = (float(a) for a in axis)
    return JointLimit(-t, t, s1[0], s1[1], s2[0], s2[1], (x, y, z))


# Generous human ranges (dance includes splits, high kicks, pointed feet and breakdance
# freezes): the limits catch impossible poses (a knee or elbow bent backwards, a head
# turned around), not merely unusual ones. They were checked against the retargeted CMU
# dance mocap (salsa, modern, breakdance, whirl, mirrored): they hold at least its 0.5th
# to 99.5th percentiles of every style, except where the retargeted values themselves are
# not anatomical (see docs/metrics.md). Swing axes are in SMPL's rest frame (Y up, +X
# left, +Z front).
SMPL_JOINT_LIMITS: Mapping[str, JointLimit] = {
    # Hips: bone points down. swing1 about X: negative lifts the thigh forward (flexion),
    # swing2 about Z is abduction. Twist is internal/external rotation.
    "left_hip": _ball(80, (-170, 60), (-90, 90)),
    "right_hip": _ball(80, (-170, 60), (-90, 90)),
    # Knees: hinge about X, positive bends the shin backwards (flexion), never the other way.
    "left_knee": _ball(50, (-5, 160), (-45, 45)),
    "right_knee": _ball(50, (-5, 160), (-45, 45)),
    "spine1": _ball(45, (-45, 90), (-45, 45)),
    "spine2": _ball(45, (-40, 60), (-40, 40)),
    "spine3": _ball(45, (-40, 60), (-40, 40)),
    # Ankles: swing1 about X points the foot (negative, down to ballet's pointe) or flexes it.
    # Twist rolls the foot about the ankle-to-toe bone (it moves no joint, only the foot's mesh).
    "left_ankle": _ball(50, (-100, 70), (-65, 65)),
    "right_ankle": _ball(50, (-100, 70), (-65, 65)),
    "left_foot": _ball(25, (-60, 60), (-30, 30)),
    "right_foot": _ball(25, (-60, 60), (-30, 30)),
    "neck": _ball(80, (-60, 70), (-60, 60)),
    "head": _ball(60, (-90, 60), (-50, 50)),
    # Collars and shoulders: bone along +-X; swing1 about Z raises and lowers the arm,
    # swing2 about the in-plane perpendicular swings it forward and back.
    "left_collar": _ball(40, (-75, 75), (-55, 55), axis=(0, 0, 1)),
    "right_collar": _ball(40, (-75, 75), (-55, 55), axis=(0, 0, 1)),
    "left_shoulder": _ball(120, (-170, 170), (-170, 170), axis=(0, 0, 1)),
    "right_shoulder": _ball(120, (-170, 170), (-170, 170), axis=(0, 0, 1)),
    # Elbows: hinge about Y. The left forearm (+X) folds forward (+Z) under a negative
    # rotation about Y, the right one (-X) under a positive one. Twist is pronation.
    "left_elbow": _ball(100, (-160, 5), (-60, 60), axis=(0, 1, 0)),
    "right_elbow": _ball(100, (-5, 160), (-60, 60), axis=(0, 1, 0)),
    "left_wrist": _ball(90, (-80, 80), (-105, 105), axis=(0, 1, 0)),
    "right_wrist": _ball(90, (-80, 80), (-105, 105), axis=(0, 1, 0)),
    "left_hand": _ball(30, (-60, 60), (-65, 65), axis=(0, 1, 0)),
    "right_hand": _ball(30, (-60, 60), (-65, 65), axis=(0, 1, 0)),
}
"""Limits per SMPL joint name; the pelvis (global orientation) is free."""


def _bone_axes(
    skeleton: Skeleton, joint: int, swing_axis: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit twist axis, swing axis and their cross product in the joint's rest frame."""
    children = skeleton.children(joint)
    bone = skeleton.offsets[children[0]] if children else skeleton.offsets[joint]
    twist_axis = bone / np.linalg.norm(bone)
    e1 = swing_axis - np.dot(swing_axis, twist_axis) * twist_axis
    norm = np.linalg.norm(e1)
    if norm < 1e-6:
        raise ParameterError(f"swing axis of joint {skeleton.names[joint]!r} is parallel to its bone")
    e1 = e1 / norm
    return twist_axis, e1, np.cross(twist_axis, e1)


def swing_twist(aa: np.ndarray, twist_axis: np.ndarray, e1: np.ndarray, e2: np.ndarray) -> np.ndarray:
    """Twist angle and the two swing components of axis-angle rotations.

    Parameters
    ----------
    aa : np.ndarray [shape=(..., 3)], axis-angle rotations
    twist_axis, e1, e2 : np.ndarray [shape=(..., 3)], broadcasting against ``aa``:
        orthonormal unit vectors (bone, swing axis, their cross product)

    Returns
    -------
    np.ndarray [shape=(..., 3)]
        ``(twist, swing1, swing2)`` in radians, with the rotation equal to
        ``swing(swing1 * e1 + swing2 * e2)`` applied after ``twist`` about the bone.
    """
    quat = aa_to_quat(aa)
    quat = np.where(quat[..., 3:4] < 0.0, -quat, quat)
    along = dot(quat[..., :3], twist_axis)
    twist_angle = 2.0 * np.arctan2(along, quat[..., 3])
    twist_q = aa_to_quat(twist_angle[..., None] * twist_axis)
    swing_vec = quat_to_aa(quat_multiply(quat, quat_conjugate(twist_q)))
    return np.stack([twist_angle, dot(swing_vec, e1), dot(swing_vec, e2)], axis=-1)


def _resolve(skeleton: Skeleton, limits: Mapping[str, JointLimit] | None) -> Mapping[str, JointLimit]:
    resolved = SMPL_JOINT_LIMITS if limits is None else limits
    for name in resolved:
        if name not in skeleton.names:
            raise ParameterError(f"joint limit given for unknown joint {name!r}")
    return resolved


@dataclass(frozen=True)
class _LimitTable:
    """Every limited joint of a skeleton, stacked: joints ``[K]``, axes ``[K, 3]``, bounds ``[K, 3]``."""

    joints: np.ndarray
    twist_axis: np.ndarray
    e1: np.ndarray
    e2: np.ndarray
    low: np.ndarray
    high: np.ndarray


def _table(skeleton: Skeleton, limits: Mapping[str, JointLimit] | None) -> _LimitTable:
    resolved = _resolve(skeleton, limits)
    joints, axes, lows, highs = [], [], [], []
    for name, limit in resolved.items():
        joint = skeleton.index(name)
        joints.append(joint)
        axes.append(_bone_axes(skeleton, joint, np.asarray(limit.swing_axis, dtype=np.float64)))
        low, high = limit.bounds()
        lows.append(low)
        highs.append(high)
    if not joints:
        empty = np.zeros((0, 3))
        return _LimitTable(np.zeros(0, dtype=int), empty, empty, empty, empty, empty)
    stacked = np.array(axes)
    return _LimitTable(
        np.array(joints), stacked[:, 0], stacked[:, 1], stacked[:, 2], np.array(lows), np.array(highs)
    )


def clamp_joint_limits(motion: Motion, *, limits: Mapping[str, JointLimit] | None = None) -> Motion:
    """Clamp every limited joint's twist and swing into its range.

    Parameters
    ----------
    motion : the motion to clamp; left untouched
    limits : joint name to :class:`JointLimit`; defaults to :data:`SMPL_JOINT_LIMITS`

    Returns
    -------
    Motion
        A new motion; joints within their limits keep their rotations exactly,
        and the root translation is unchanged.

    Raises
    ------
    ParameterError
        If ``limits`` names a joint the skeleton lacks.
    """
    rotations = motion.rotations.astype(np.float64, copy=True)
    table = _table(motion.skeleton, limits)
    params = swing_twist(rotations[:, table.joints], table.twist_axis, table.e1, table.e2)
    clamped = np.clip(params, table.low, table.high)
    changed = np.any(clamped != params, axis=-1)  # [frames, K]
    if not np.any(changed):
        return motion.replace(root_translation=motion.root_translation.copy(), rotations=rotations)
    frame_idx, limit_idx = np.nonzero(changed)
    c = clamped[frame_idx, limit_idx]
    # A swing of pi or more is ambiguous (it equals a shorter swing the other way):
    # shrink it towards zero, which stays inside the box since every box holds zero.
    swing_norm = np.linalg.norm(c[:, 1:], axis=-1, keepdims=True)
    c[:, 1:] *= np.minimum(1.0, _MAX_SWING_RAD / np.maximum(swing_norm, 1e-12))
    e1, e2, twist_axis = table.e1[limit_idx], table.e2[limit_idx], table.twist_axis[limit_idx]
    swing_q = aa_to_quat(c[:, 1:2] * e1 + c[:, 2:3] * e2)
    quat = quat_multiply(swing_q, aa_to_quat(c[:, 0:1] * twist_axis))
    rotations[frame_idx, table.joints[limit_idx]] = quat_to_aa(quat)
    return motion.replace(root_translation=motion.root_translation.copy(), rotations=rotations)


def limit_violation_mask(
    motion: Motion,
    *,
    limits: Mapping[str, JointLimit] | None = None,
    tolerance_rad: float = LIMIT_TOLERANCE_RAD,
) -> np.ndarray:
    """Which frames and joints lie outside their limits, ``[frames, joints]`` bool.

    Unlimited joints (the pelvis) are never flagged.
    """
    mask = np.zeros((motion.n_frames, motion.skeleton.n_joints), dtype=bool)
    table = _table(motion.skeleton, limits)
    params = swing_twist(motion.rotations[:, table.joints], table.twist_axis, table.e1, table.e2)
    outside = (params < table.low - tolerance_rad) | (params > table.high + tolerance_rad)
    mask[:, table.joints] = np.any(outside, axis=-1)
    return mask


def count_limit_violations(
    motion: Motion,
    *,
    limits: Mapping[str, JointLimit] | None = None,
    tolerance_rad: float = LIMIT_TOLERANCE_RAD,
) -> int:
    """Number of (frame, joint) pairs outside their limits; 0 after :func:`clamp_joint_limits`.

    Parameters
    ----------
    motion : the motion to check
    limits : joint name to :class:`JointLimit`; defaults to :data:`SMPL_JOINT_LIMITS`
    tolerance_rad : float >= 0, slack on every bound
    """
    return int(limit_violation_mask(motion, limits=limits, tolerance_rad=tolerance_rad).sum())


# Keep the default table consistent with the skeleton it names.
_resolve(SMPL, SMPL_JOINT_LIMITS)
