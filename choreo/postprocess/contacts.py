"""Which heels, toes and hands touch the floor: heights and speeds with hysteresis, scaled by the body.

A point touches down when its sole (the joint's height minus its clearance
above a flat foot, :func:`~choreo.motion.contacts.sole_clearance_m`; a hand
joint's own height) is low and slow, and stays down until it rises or moves
clearly faster: the release thresholds are higher than the touch-down ones,
so a foot that trembles on a threshold does not flicker on and off. Heights and
speeds scale with the leg length of the motion's skeleton (a smaller body
steps less high and less fast), speeds are central differences in m/s and the
shortest contact is a time, so the rule reads a retimed (warped) step and
every frame rate alike. Heights are measured from the motion's own floor (the
median height of the lowest slow point), so a raw dance that floats or sinks
as a whole is read as standing on it. The speeds are generous (a foot touches
down below 1 m/s): the blend's stances slide, and a stance that slides is to
be held, not left to skate.

Where the dance comes from a phrase library, the library's own bits (which
foot its source mocap had on the ground, :func:`choreo.choreography.guide.build_guide`
samples them onto the song's frames) join in as ``planted``: a foot its source
had planted stands in for the speed test, so a stance that the warp or the
synthesizer made slide faster than the speed thresholds is still read as a
stance; the height test always stays the motion's own, so a foot the
synthesizer lifted from the floor is not read as down because its source was.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.contracts.contacts import CONTACT_POINTS, ContactTrack
from choreo.errors import ParameterError
from choreo.motion.contacts import HORIZONTAL_AXES, UP_AXIS, sole_clearance_m
from choreo.motion.kinematics import chain_kinematics
from choreo.motion.motion import Motion
from choreo.motion.skeleton import SMPL, Skeleton
from choreo.postprocess.ground import GROUND_CONTACT_SPEED_M_S

__all__ = [
    "CONTACT_JOINTS",
    "FOOT_RULE",
    "HAND_RULE",
    "MIN_CONTACT_S",
    "MIN_FLIGHT_S",
    "ContactRule",
    "body_scale",
    "detect_contacts",
]

CONTACT_JOINTS: tuple[str, ...] = (
    "left_ankle",
    "left_foot",
    "right_ankle",
    "right_foot",
    "left_hand",
    "right_hand",
)
"""The joint of each point of :data:`~choreo.contracts.contacts.CONTACT_POINTS` (the heel is the ankle's)."""

MIN_CONTACT_S = 0.05
"""A contact shorter than this (a foot brushing the floor in a swing) is dropped."""

MIN_FLIGHT_S = 0.1
"""A moment with nothing on the floor this short or shorter is no flight (a body in the air that
long rises 1.2 cm at most): the foot that lands next is down through it, a weight shift rather
than a hop. Salsa's quick steps read as such gaps, a frame or two between one foot's lift-off and the
other's touch-down, where its mocap has a foot down in 99 % of frames (issue 21)."""

_SPEED_WINDOW_S = 0.05


@dataclass(frozen=True)
class ContactRule:
    """Touch-down and release thresholds of one kind of point for the SMPL body: sole heights in
    metres above the floor, horizontal speeds in m/s; a point must pass both to touch down and
    stays down until it exceeds either release threshold."""

    touch_m: float
    release_m: float
    touch_m_s: float
    release_m_s: float


FOOT_RULE = ContactRule(touch_m=0.06, release_m=0.09, touch_m_s=1.0, release_m_s=2.0)
HAND_RULE = ContactRule(touch_m=0.04, release_m=0.07, touch_m_s=0.5, release_m_s=1.0)


def body_scale(skeleton: Skeleton) -> float:
    """The skeleton's leg length (hip to knee to ankle, both legs' mean) over SMPL's."""

    def leg(s: Skeleton) -> float:
        lengths = s.bone_lengths()
        return float(
            np.mean(
                [
                    lengths[s.index(f"{side}_knee")] + lengths[s.index(f"{side}_ankle")]
                    for side in ("left", "right")
                ]
            )
        )

    return leg(skeleton) / leg(SMPL)


def detect_contacts(
    motion: Motion, planted: np.ndarray | None = None, *, bridge_flights: bool = False
) -> ContactTrack:
    """The contacts of every heel, toe and hand in every frame of ``motion``.

    Parameters
    ----------
    motion : the motion
    planted : np.ndarray [shape=(frames, 2)] bool, optional: per frame, whether the source
        had the left and the right foot on the ground (the phrase library's bits); where it
        did, that foot's heel and toe pass the speed tests and need only the height tests
        (touch-down and release as everywhere)
    bridge_flights : fill every moment of at most :data:`MIN_FLIGHT_S` with no point down by the
        feet that land after it (the dance's track, which the locks hold and the summary gives;
        the workouts' safety checks read the motion strictly, without)

    Returns
    -------
    ContactTrack
        At the motion's fps; a motion of fewer than two frames has no contacts.

    Raises
    ------
    ParameterError
        If ``planted`` is not ``[frames, 2]`` for the motion's frames.
    """
    n = motion.n_frames
    if planted is not None and planted.shape != (n, 2):
        raise ParameterError(f"planted feet must be ({n}, 2) for this motion, got shape {planted.shape}")
    if n < 2:
        return ContactTrack(motion.fps, np.zeros((n, len(CONTACT_POINTS)), dtype=bool))
    skeleton = motion.skeleton
    points = chain_kinematics(motion, [skeleton.index(name) for name in CONTACT_JOINTS])[0]
    clearance = np.concatenate([sole_clearance_m(skeleton), np.zeros(2)])
    soles = points[..., UP_AXIS] - clearance
    speeds = _smoothed_speed(points, motion.fps)
    heights = soles - _floor_m(soles, speeds)
    scale = body_scale(skeleton)
    out = np.zeros((n, len(CONTACT_POINTS)), dtype=bool)
    min_frames = max(1, int(np.ceil(MIN_CONTACT_S * motion.fps - 1e-9)))
    for column in range(len(CONTACT_POINTS)):
        rule = FOOT_RULE if column < 4 else HAND_RULE
        sourced = planted[:, column // 2] if planted is not None and column < 4 else False
        touch = (heights[:, column] < rule.touch_m * scale) & (
            (speeds[:, column] < rule.touch_m_s * scale) | sourced
        )
        hold = (heights[:, column] < rule.release_m * scale) & (
            (speeds[:, column] < rule.release_m_s * scale) | sourced
        )
        out[:, column] = _drop_short(_hysteresis(touch, hold), min_frames)
    if bridge_flights:
        out = _bridge_short_flights(out, int(np.floor(MIN_FLIGHT_S * motion.fps + 1e-9)))
    return ContactTrack(motion.fps, out)


def _floor_m(soles: np.ndarray, speeds: np.ndarray) -> float:
    """The motion's own floor: the median height of the lowest point over the frames in which that
    point is slow, as :func:`~.ground.floor_offset_m` finds it for the feet, here with the hands
    counted (a handstand stands on them); the 5th percentile if nothing is ever slow."""
    lowest = np.argmin(soles, axis=1)
    frames = np.arange(soles.shape[0])
    slow = speeds[frames, lowest] < GROUND_CONTACT_SPEED_M_S
    height = soles[frames, lowest]
    return float(np.median(height[slow])) if np.any(slow) else float(np.percentile(height, 5.0))


def _smoothed_speed(points: np.ndarray, fps: float) -> np.ndarray:
    """Horizontal speed of each point, ``[frames, points]`` m/s: central differences, then a moving
    mean over :data:`_SPEED_WINDOW_S` (one frame's jitter is not a step)."""
    velocity = np.gradient(points[..., HORIZONTAL_AXES], axis=0) * fps
    speed = np.linalg.norm(velocity, axis=-1)
    half = int(round(_SPEED_WINDOW_S * fps)) // 2
    width = 2 * half + 1
    if half == 0:
        return speed
    padded = np.pad(speed, ((half, half), (0, 0)), mode="edge")
    kernel = np.ones(width) / width
    return np.stack([np.convolve(padded[:, k], kernel, mode="valid") for k in range(speed.shape[1])], axis=1)


def _hysteresis(touch: np.ndarray, hold: np.ndarray) -> np.ndarray:
    """In contact from a ``touch`` frame on, for as long as ``hold`` lasts."""
    index = np.arange(touch.size)
    hold = hold | touch
    run_start = np.maximum.accumulate(np.where(hold & ~np.concatenate([[False], hold[:-1]]), index, -1))
    last_touch = np.maximum.accumulate(np.where(touch, index, -1))
    return hold & (last_touch >= run_start) & (run_start >= 0)


def _drop_short(contact: np.ndarray, min_frames: int) -> np.ndarray:
    edges = np.diff(np.concatenate([[0], contact.astype(np.int8), [0]]))
    out = contact.copy()
    for start, stop in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
        if stop - start < min_frames:
            out[start:stop] = False
    return out


def _bridge_short_flights(contacts: np.ndarray, max_frames: int) -> np.ndarray:
    """``contacts`` with every run of at most ``max_frames`` frames in which no point is down, between
    two frames in which some point is, filled by the feet that are down in the frame after it (the
    landing foot is down from the lift-off on); a gap with only hands landing is left as it is."""
    down = contacts.any(axis=1)
    edges = np.diff(np.concatenate([[0], (~down).astype(np.int8), [0]]))
    out = contacts.copy()
    for start, stop in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
        if start > 0 and stop < down.size and stop - start <= max_frames:
            out[start:stop, :4] = contacts[stop, :4]
    return out
