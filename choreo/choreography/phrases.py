"""Cut one retargeted clip into beat keys and phrases of whole pulse beats.

A *key* is a beat of the clip's pulse grid moved to the nearest minimum of the
smoothed joint speed within a quarter period (the body's accent, smoothed as
the beat-alignment measure smooths it), so phrases start and end where the
motion is slowest and every phrase beat is a moment a warp can pin onto a song
beat. A key that found a minimum is a *stop*; the others are grid points only
(the dancer comes to a stop about once a second, the pulse is faster). A
phrase of ``n`` beats runs from key ``k`` to key ``k + n`` of the same clip.

Per key the cutter also computes what the planner and the transition costs
need: the pose and joint velocities in the body's heading frame, the smoothed
heading, the root position, and whether the body is standing or on the floor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import gaussian_filter1d

from choreo.choreography.pulse import Pulse, estimate_pulse
from choreo.motion.contacts import foot_positions, point_contacts
from choreo.motion.kinematics import facing_angle, joint_positions
from choreo.motion.motion import Motion
from choreo.motion.stops import SPEED_SIGMA_FRAMES, mean_joint_speeds, speed_minima

__all__ = [
    "FLOOR_PELVIS_M",
    "HEADING_SIGMA_S",
    "PHRASE_BEATS",
    "ClipKeys",
    "cut_keys",
    "smoothed_heading",
]

PHRASE_BEATS: tuple[int, ...] = (2, 3, 4, 6, 8)
"""Phrase lengths in pulse beats: 2, 4 and 8 for music in 4/4, 3 and 6 for 3/4."""

FLOOR_PELVIS_M = 0.55
"""A pelvis below this height (SMPL stands with it at about 0.9 m) is floor work."""

HEADING_SIGMA_S = 0.125
"""Gaussian smoothing of the heading (about +-0.25 s): spins make the instant yaw meaningless."""

_VELOCITY_WEIGHT_S = 0.1


@dataclass(frozen=True)
class ClipKeys:
    """The beat keys of one clip (or its mirror image) and what is known at each.

    Arrays have one row per key; frames are indices into the clip.
    """

    pulse: Pulse
    frames: np.ndarray
    """[keys] int, clip frame of each key, increasing."""
    features: np.ndarray
    """[keys, 144] float, pose (24 x 3, m) and velocity (24 x 3, m/s x 0.1 s) in the heading frame."""
    heading_rad: np.ndarray
    """[keys] smoothed heading about +Y (0 faces +Z), unwrapped along the clip."""
    root_xz: np.ndarray
    """[keys, 2] root position on the floor, m."""
    floor: np.ndarray
    """[keys] bool, the body is on the floor (pelvis below :data:`FLOOR_PELVIS_M`)."""
    stop: np.ndarray
    """[keys] bool, the key is a real speed minimum (a kinematic beat), not only a grid point."""
    energy: np.ndarray
    """[keys - 1] mean squared joint speed between consecutive keys, m^2/s^2."""
    contacts: np.ndarray
    """[frames] uint8, bit 0 left foot, bit 1 right foot on the ground."""


def smoothed_heading(motion: Motion) -> np.ndarray:
    """Heading about +Y per frame, unwrapped and smoothed over about +-0.25 s, radians."""
    heading = np.unwrap(facing_angle(motion))
    return gaussian_filter1d(heading, HEADING_SIGMA_S * motion.fps, mode="nearest")


def _snap(
    grid: np.ndarray, minima: np.ndarray, window: float, n_frames: int
) -> tuple[np.ndarray, np.ndarray]:
    """Grid beats moved onto the nearest speed minimum within ``window`` frames; and which were moved."""
    snapped = np.rint(grid).astype(int)
    stop = np.zeros(grid.size, dtype=bool)
    if minima.size:
        nearest = minima[np.clip(np.searchsorted(minima, grid), 1, minima.size) - 1]
        after = minima[np.clip(np.searchsorted(minima, grid), 0, minima.size - 1)]
        pick = np.where(np.abs(after - grid) < np.abs(nearest - grid), after, nearest)
        stop = np.abs(pick - grid) <= window
        snapped = np.where(stop, pick, snapped)
    snapped = np.clip(snapped, 0, n_frames - 1)
    keep = np.concatenate([[True], np.diff(snapped) > window])
    return snapped[keep], stop[keep]


def cut_keys(motion: Motion, pulse: Pulse | None = None) -> ClipKeys:
    """Beat keys of ``motion`` (a clip at the library's frame rate).

    Parameters
    ----------
    motion : a retargeted clip, feet on the floor at y = 0
    pulse : the clip's pulse; estimated from its speed when not given (a mirror
        image passes its original's, so both are cut at the same frames)
    """
    pos = joint_positions(motion)
    speed = mean_joint_speeds(pos, motion.fps)
    minima = speed_minima(speed, SPEED_SIGMA_FRAMES)
    if pulse is None:
        pulse = estimate_pulse(speed, motion.fps, minima)
    period_frames = pulse.period_s * motion.fps
    grid = pulse.grid_s((motion.n_frames - 1) / motion.fps) * motion.fps
    frames, stop = _snap(grid, minima, 0.25 * period_frames, motion.n_frames)

    heading = smoothed_heading(motion)
    vel = np.gradient(pos, axis=0) * motion.fps
    local = pos[frames] - pos[frames, :1] * np.array([1.0, 0.0, 1.0])
    c, s = np.cos(-heading[frames]), np.sin(-heading[frames])
    rot = np.zeros((frames.size, 3, 3))
    rot[:, 0, 0], rot[:, 0, 2], rot[:, 1, 1], rot[:, 2, 0], rot[:, 2, 2] = c, s, 1.0, -s, c
    local = np.einsum("kab,kjb->kja", rot, local)
    local_vel = np.einsum("kab,kjb->kja", rot, vel[frames]) * _VELOCITY_WEIGHT_S
    features = np.concatenate([local.reshape(frames.size, -1), local_vel.reshape(frames.size, -1)], axis=1)

    speed_sq = np.sum(np.diff(pos, axis=0) ** 2, axis=-1).mean(axis=1) * motion.fps**2
    cumulative = np.concatenate([[0.0], np.cumsum(speed_sq)])
    spans = np.maximum(np.diff(frames), 1)
    energy = (cumulative[frames[1:]] - cumulative[frames[:-1]]) / spans

    feet = point_contacts(foot_positions(motion), motion.fps, max_speed_m_s=0.3)
    contacts = np.asarray(feet[:, :2].any(axis=1) * 1 + feet[:, 2:].any(axis=1) * 2, dtype=np.uint8)
    return ClipKeys(
        pulse=pulse,
        frames=frames,
        features=features,
        heading_rad=heading[frames],
        root_xz=motion.root_translation[frames][:, [0, 2]],
        floor=motion.root_translation[frames, 1] < FLOOR_PELVIS_M,
        stop=stop,
        energy=energy,
        contacts=contacts,
    )
