"""Foot skating: how often a foot on the ground slides.

A foot point (ankle or toe joint) is on the ground while below its contact
height (8 cm for the ankle, 5 cm for the toe; the floor is y = 0). A frame
skates when such a point moves horizontally faster than 0.3 m/s towards the
next frame (1 cm a frame at 30 fps). The measure is the share of frame steps
that skate.
"""

from __future__ import annotations

import numpy as np

from choreo.metrics._positions import check_fps, check_positions
from choreo.motion.contacts import (
    ANKLE_CONTACT_HEIGHT_M,
    TOE_CONTACT_HEIGHT_M,
    foot_point_indices,
    horizontal_speed_m_s,
    point_contacts,
)
from choreo.motion.skeleton import SMPL, Skeleton

__all__ = ["SKATE_SPEED_M_S", "foot_skate_ratio", "skating_frames"]

SKATE_SPEED_M_S = 0.3


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
    pos = check_positions(positions, min_frames=2)
    feet = pos[:, foot_point_indices(skeleton)]
    on_ground = point_contacts(feet, fps, ankle_height_m=ankle_height_m, toe_height_m=toe_height_m)
    sliding = horizontal_speed_m_s(feet, fps) > skate_speed_m_s
    return np.any(on_ground[:-1] & sliding, axis=1)


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
