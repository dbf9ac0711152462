"""Foot skating: how often a foot on the ground slides, and how often a foot is on the ground.

A foot point (ankle or toe joint) is on the ground while below its contact
height (8 cm for the ankle, 5 cm for the toe; the floor is y = 0). A frame
skates when such a point moves horizontally faster than 0.3 m/s towards the
next frame (1 cm a frame at 30 fps). The measure is the share of frame steps
that skate; :func:`contact_share` is the share of frames with a foot on the
ground, reported beside it (a dance whose feet never count as planted does not
skate either).

The ruler is frozen here: this module keeps its own copy of the contact
definition the project measured with before the post-processing learned to
lock feet (:mod:`choreo.motion.contacts` at 86fa4b6), so changing how the
clean-up finds contacts cannot move the measure.
"""

from __future__ import annotations

import numpy as np

from choreo.metrics._positions import check_fps, check_positions
from choreo.motion.skeleton import SMPL, Skeleton

__all__ = [
    "ANKLE_CONTACT_HEIGHT_M",
    "SKATE_SPEED_M_S",
    "TOE_CONTACT_HEIGHT_M",
    "contact_share",
    "foot_skate_ratio",
    "skating_frames",
]

SKATE_SPEED_M_S = 0.3
ANKLE_CONTACT_HEIGHT_M = 0.08
TOE_CONTACT_HEIGHT_M = 0.05
_FOOT_POINTS = ("left_ankle", "left_foot", "right_ankle", "right_foot")
_UP = 1
_HORIZONTAL = (0, 2)


def _feet(positions: np.ndarray, skeleton: Skeleton) -> np.ndarray:
    pos = check_positions(positions, min_frames=1)
    return pos[:, [skeleton.index(name) for name in _FOOT_POINTS]]


def _on_ground(feet: np.ndarray, ankle_height_m: float, toe_height_m: float) -> np.ndarray:
    """``[frames, 4]`` bool: each foot point below its contact height."""
    return feet[..., _UP] < np.array([ankle_height_m, toe_height_m, ankle_height_m, toe_height_m])


def skating_frames(
    positions: np.ndarray,
    *,
    fps: float,
    skeleton: Skeleton = SMPL,
    ankle_height_m: float = ANKLE_CONTACT_HEIGHT_M,
    toe_height_m: float = TOE_CONTACT_HEIGHT_M,
    skate_speed_m_s: float = SKATE_SPEED_M_S,
) -> np.ndarray:
    """Which frame steps skate, ``[frames - 1]`` bool (step ``k`` goes from frame ``k`` to ``k + 1``)."""
    fps = check_fps(fps)
    check_positions(positions, min_frames=2)
    feet = _feet(positions, skeleton)
    on_ground = _on_ground(feet, ankle_height_m, toe_height_m)
    speed = np.linalg.norm(np.diff(feet[..., _HORIZONTAL], axis=0), axis=-1) * fps
    return np.any(on_ground[:-1] & (speed > skate_speed_m_s), axis=1)


def foot_skate_ratio(
    positions: np.ndarray,
    *,
    fps: float,
    skeleton: Skeleton = SMPL,
    ankle_height_m: float = ANKLE_CONTACT_HEIGHT_M,
    toe_height_m: float = TOE_CONTACT_HEIGHT_M,
    skate_speed_m_s: float = SKATE_SPEED_M_S,
) -> float:
    """Share of frame steps in which a foot on the ground slides faster than ``skate_speed_m_s``.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres, Y up, floor at y = 0
    fps : float > 0, frame rate of ``positions``
    skeleton : names the foot joints (``left_ankle``, ``left_foot``, ...)
    ankle_height_m, toe_height_m : contact heights of the ankle and toe joints
    skate_speed_m_s : horizontal speed above which a grounded foot skates

    Returns
    -------
    float in [0, 1]; 0 for a motion of one frame.
    """
    if np.shape(positions)[0] < 2:
        return 0.0
    steps = skating_frames(
        positions,
        fps=fps,
        skeleton=skeleton,
        ankle_height_m=ankle_height_m,
        toe_height_m=toe_height_m,
        skate_speed_m_s=skate_speed_m_s,
    )
    return float(np.mean(steps))


def contact_share(
    positions: np.ndarray,
    *,
    skeleton: Skeleton = SMPL,
    ankle_height_m: float = ANKLE_CONTACT_HEIGHT_M,
    toe_height_m: float = TOE_CONTACT_HEIGHT_M,
) -> float:
    """Share of frames in which at least one foot point is on the ground, by the same frozen heights.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres, Y up, floor at y = 0
    skeleton, ankle_height_m, toe_height_m : as :func:`foot_skate_ratio`

    Returns
    -------
    float in [0, 1].
    """
    feet = _feet(positions, skeleton)
    return float(np.mean(_on_ground(feet, ankle_height_m, toe_height_m).any(axis=1)))
