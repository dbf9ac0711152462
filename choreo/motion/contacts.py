"""Foot contact: which foot points touch the floor, shared by grounding, pinning and the metrics.

A foot has two points, its ankle joint and its toe joint (SMPL's ``*_foot``).
A point is on the ground while its joint is below a height threshold (8 cm for
the ankle, whose joint sits about 7 cm above the heel; 5 cm for the toe,
whose joint sits about 1.5 cm above the sole), optionally also moving slower
than a horizontal speed.
"""

from __future__ import annotations

import numpy as np

from choreo.errors import ParameterError
from choreo.motion.kinematics import chain_kinematics
from choreo.motion.motion import Motion
from choreo.motion.skeleton import REST_PELVIS_HEIGHT_M, Skeleton

__all__ = [
    "ANKLE_CONTACT_HEIGHT_M",
    "FLIGHT_CLEARANCE_M",
    "FOOT_POINT_NAMES",
    "HORIZONTAL_AXES",
    "TOE_CONTACT_HEIGHT_M",
    "UP_AXIS",
    "airborne_frames",
    "foot_point_indices",
    "foot_point_thresholds_m",
    "foot_positions",
    "horizontal_speed_m_s",
    "point_contacts",
    "sole_clearance_m",
]

ANKLE_CONTACT_HEIGHT_M = 0.08
TOE_CONTACT_HEIGHT_M = 0.05

FLIGHT_CLEARANCE_M = 0.08
"""In a flight the lowest joint rises at least this high (a toe on tiptoe stays under it)."""

FOOT_POINT_NAMES: tuple[str, ...] = ("left_ankle", "left_foot", "right_ankle", "right_foot")
"""The four foot points, left foot first, ankle before toe."""

UP_AXIS = 1
HORIZONTAL_AXES = (0, 2)


def foot_point_indices(skeleton: Skeleton) -> np.ndarray:
    """Joint indices of :data:`FOOT_POINT_NAMES` in ``skeleton``, ``[4]``."""
    return np.array([skeleton.index(name) for name in FOOT_POINT_NAMES])


def foot_positions(motion: Motion) -> np.ndarray:
    """World positions of the four foot points, ``[frames, 4, 3]`` metres.

    The same forward kinematics as :func:`choreo.motion.kinematics.joint_positions`,
    run only along the chains from the root to the feet, which is all that
    grounding and pinning need.
    """
    return chain_kinematics(motion, foot_point_indices(motion.skeleton))[0]


def foot_point_thresholds_m(
    *, ankle_height_m: float = ANKLE_CONTACT_HEIGHT_M, toe_height_m: float = TOE_CONTACT_HEIGHT_M
) -> np.ndarray:
    """Contact height of each foot point, ``[4]`` metres, in :data:`FOOT_POINT_NAMES` order."""
    for name, value in (("ankle_height_m", ankle_height_m), ("toe_height_m", toe_height_m)):
        if not np.isfinite(value) or value <= 0:
            raise ParameterError(f"{name} must be a positive height in metres, got {value}")
    return np.array([ankle_height_m, toe_height_m, ankle_height_m, toe_height_m], dtype=np.float64)


def sole_clearance_m(skeleton: Skeleton) -> np.ndarray:
    """Height of each foot point's joint above the floor when the foot stands flat, ``[4]`` metres.

    Taken from the rest pose, which stands on the floor with the pelvis at
    :data:`~choreo.motion.skeleton.REST_PELVIS_HEIGHT_M`; so a joint position
    minus its clearance is the height of the sole beneath it.
    """
    rest_heights = skeleton.rest_positions()[foot_point_indices(skeleton), UP_AXIS] + REST_PELVIS_HEIGHT_M
    return np.maximum(rest_heights, 0.0)


def horizontal_speed_m_s(positions: np.ndarray, fps: float) -> np.ndarray:
    """Horizontal speed between consecutive frames, ``[frames - 1, points]`` in m/s.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, points, 3)], metres, Y up
    fps : float > 0, frames per second of ``positions``
    """
    steps = np.diff(positions[..., HORIZONTAL_AXES], axis=0)
    return np.linalg.norm(steps, axis=-1) * fps


def point_contacts(
    foot_positions: np.ndarray,
    fps: float,
    *,
    ankle_height_m: float = ANKLE_CONTACT_HEIGHT_M,
    toe_height_m: float = TOE_CONTACT_HEIGHT_M,
    max_speed_m_s: float | None = None,
) -> np.ndarray:
    """Which foot points are on the ground, ``[frames, 4]`` bool.

    Parameters
    ----------
    foot_positions : np.ndarray [shape=(frames, 4, 3)], metres, Y up, the points of
        :data:`FOOT_POINT_NAMES` with the floor at y = 0
    fps : float > 0
    ankle_height_m, toe_height_m : contact heights of the ankle and toe joints
    max_speed_m_s : if given, a point also has to move horizontally slower than
        this (speed towards the next frame; the last frame uses the previous one)
    """
    thresholds = foot_point_thresholds_m(ankle_height_m=ankle_height_m, toe_height_m=toe_height_m)
    contact = foot_positions[..., UP_AXIS] < thresholds
    if max_speed_m_s is not None and foot_positions.shape[0] > 1:
        speed = horizontal_speed_m_s(foot_positions, fps)
        speed = np.concatenate([speed, speed[-1:]], axis=0)
        contact &= speed < max_speed_m_s
    return contact


def airborne_frames(positions: np.ndarray) -> np.ndarray:
    """Frames in which nothing touches the floor (a jump or a leap), ``[frames]`` bool.

    A flight is a run of frames in which every joint is above the toe's
    contact height (:data:`TOE_CONTACT_HEIGHT_M`: the feet, and hands, knees
    or back in floor work, are off the floor) and the lowest joint clears
    :data:`FLIGHT_CLEARANCE_M` at least once, so dancing on tiptoe is not a
    flight, while the whole jump from take-off to landing is.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres, Y up, the floor at y = 0
    """
    lowest = np.asarray(positions)[..., UP_AXIS].min(axis=-1)
    clear = lowest > TOE_CONTACT_HEIGHT_M
    edges = np.diff(np.concatenate([[0], clear.astype(np.int8), [0]]))
    out = np.zeros(lowest.size, dtype=bool)
    for start, stop in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
        if lowest[start:stop].max() > FLIGHT_CLEARANCE_M:
            out[start:stop] = True
    return out
