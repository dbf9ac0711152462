"""What a workout may dance: the safety rules, on library phrases and on the finished motion.

A workout keeps the head above the hips, stays off the floor (no floor work,
no inversions), avoids deep spinal flexion and stays inside the joint limits
with a margin; low impact also keeps a foot on the floor in every frame. That
last rule is stricter than the library's airborne bit (every joint clears 5 cm,
:func:`choreo.motion.contacts.airborne_frames`), which lets small hops
through: a frame is in flight here when none of the four foot points (ankles,
toes) is under its contact height (:func:`choreo.motion.contacts.point_contacts`,
without the speed condition). The same functions screen the library's phrases
(:func:`screen_phrases`, with margins) and measure the finished routine
(:func:`measure_safety`, the rules themselves).

Besides safety, a phrase a class repeats must be followable on the spot: one
that travels more than :data:`MAX_TRAVEL_M` or turns more than
:data:`MAX_TURN_RAD` in its 8-count, or is a held pose, is left out too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.choreography.library import PhraseLibrary
from choreo.choreography.phrases import FLOOR_PELVIS_M
from choreo.motion.contacts import (
    ANKLE_CONTACT_HEIGHT_M,
    TOE_CONTACT_HEIGHT_M,
    foot_positions,
    point_contacts,
)
from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion
from choreo.motion.skeleton import SMPL
from choreo.postprocess.joint_limits import limit_violation_mask

__all__ = [
    "HEAD_MARGIN_M",
    "LIMIT_MARGIN_RAD",
    "LOW_JOINT_M",
    "MAX_SPINE_FLEXION_RAD",
    "MAX_TRAVEL_M",
    "MAX_TURN_RAD",
    "FLIGHT_TOLERANCE_M",
    "SafetyReport",
    "keep_a_foot_down",
    "measure_safety",
    "rule_frames",
    "screen_phrases",
]

HEAD_MARGIN_M = 0.2
"""A phrase's head must stay this far above its pelvis (standing it is about 0.55 m above)."""
LOW_JOINT_M = 0.15
"""A knee or hand lower than this is on the floor: floor work."""
MAX_SPINE_FLEXION_RAD = np.deg2rad(60.0)
"""The pelvis-to-neck line may lean this far from vertical, no further."""
LIMIT_MARGIN_RAD = np.deg2rad(2.0)
"""A phrase must stay this far inside the joint limits (the post-processing clamps to the limits)."""
MAX_TRAVEL_M = 1.0
MAX_TURN_RAD = np.deg2rad(60.0)
FLIGHT_TOLERANCE_M = 0.02
"""A phrase whose feet all rise at most this much above their contact heights (a heel lifting a
little late) is low impact: :func:`keep_a_foot_down` lowers the finished body onto the floor there."""

_J = {name: SMPL.index(name) for name in SMPL.names}
_FEET = [_J[n] for n in ("left_ankle", "left_foot", "right_ankle", "right_foot")]
_LOW = [_J[n] for n in ("left_knee", "right_knee", "left_wrist", "right_wrist", "left_hand", "right_hand")]


def rule_frames(
    positions: np.ndarray, fps: float, *, head_margin_m: float = 0.0, flight_tolerance_m: float = 0.0
) -> dict[str, np.ndarray]:
    """Per rule, the frames that break it, ``[frames]`` bool each.

    ``flight``: no foot point on the floor (within ``flight_tolerance_m``); ``head below hips``: the
    head lower than the pelvis plus ``head_margin_m``; ``floor work``: the pelvis under
    :data:`~choreo.choreography.phrases.FLOOR_PELVIS_M` or a knee or hand under :data:`LOW_JOINT_M`;
    ``inversion``: an ankle above the head; ``deep spinal flexion``: the trunk leaning more than
    :data:`MAX_SPINE_FLEXION_RAD`. ``positions`` are ``[frames, 24, 3]`` metres, Y up, floor at 0.
    """
    pos = np.asarray(positions, dtype=np.float64)
    y = pos[..., 1]
    feet = point_contacts(
        pos[:, _FEET],
        fps,
        ankle_height_m=ANKLE_CONTACT_HEIGHT_M + flight_tolerance_m,
        toe_height_m=TOE_CONTACT_HEIGHT_M + flight_tolerance_m,
    )
    trunk = pos[:, _J["neck"]] - pos[:, _J["pelvis"]]
    lean = np.arccos(np.clip(trunk[:, 1] / np.maximum(np.linalg.norm(trunk, axis=-1), 1e-9), -1.0, 1.0))
    return {
        "flight": ~feet.any(axis=1),
        "head below hips": y[:, _J["head"]] < y[:, _J["pelvis"]] + head_margin_m,
        "floor work": (y[:, _J["pelvis"]] < FLOOR_PELVIS_M) | (y[:, _LOW].min(axis=1) < LOW_JOINT_M),
        "inversion": np.maximum(y[:, _J["left_ankle"]], y[:, _J["right_ankle"]]) > y[:, _J["head"]],
        "deep spinal flexion": lean > MAX_SPINE_FLEXION_RAD,
    }


@dataclass(frozen=True)
class SafetyReport:
    """Frames of a finished motion that break each rule (all zero for a safe low-impact routine)."""

    flight_frames: int
    head_below_hips_frames: int
    floor_work_frames: int
    inversion_frames: int
    deep_spinal_flexion_frames: int
    limit_violations: int
    frames: int


def measure_safety(motion: Motion) -> SafetyReport:
    """The rules measured on a finished motion, without margins (the joint limits exactly)."""
    broken = rule_frames(joint_positions(motion), motion.fps)
    return SafetyReport(
        flight_frames=int(broken["flight"].sum()),
        head_below_hips_frames=int(broken["head below hips"].sum()),
        floor_work_frames=int(broken["floor work"].sum()),
        inversion_frames=int(broken["inversion"].sum()),
        deep_spinal_flexion_frames=int(broken["deep spinal flexion"].sum()),
        limit_violations=int(limit_violation_mask(motion).sum()),
        frames=motion.n_frames,
    )


def screen_phrases(library: PhraseLibrary, phrases: np.ndarray, *, impact: str) -> list[tuple[str, ...]]:
    """Why each of ``phrases`` may not be danced in a workout of ``impact``: an empty tuple if it may.

    The rules of :func:`rule_frames` with :data:`HEAD_MARGIN_M`, the joint limits with
    :data:`LIMIT_MARGIN_RAD`, flight only for low impact, and the followability rules (travel,
    turn, held pose). A mirror image is screened as its original (the rules are symmetric).
    """
    first, last = library.phrase_frames
    motion = Motion(
        fps=library.fps,
        root_translation=library.root.astype(np.float64),
        rotations=library.rotations.astype(np.float64),
    )
    broken = rule_frames(
        joint_positions(motion),
        library.fps,
        head_margin_m=HEAD_MARGIN_M,
        flight_tolerance_m=FLIGHT_TOLERANCE_M,
    )
    if impact != "low":
        del broken["flight"]
    limits = limit_violation_mask(motion, tolerance_rad=-LIMIT_MARGIN_RAD).any(axis=1)
    cumulative = {name: np.concatenate([[0], np.cumsum(mask)]) for name, mask in broken.items()}
    cumulative["outside joint limits"] = np.concatenate([[0], np.cumsum(limits)])
    out = []
    for p in np.asarray(phrases, dtype=np.int64).tolist():
        a, b = int(first[p]), int(last[p]) + 1
        reasons = [name for name, c in cumulative.items() if c[b] > c[a]]
        if float(np.hypot(*library.phrase_move[p])) > MAX_TRAVEL_M:
            reasons.append("travels")
        if abs(float(library.phrase_turn[p])) > MAX_TURN_RAD:
            reasons.append("turns")
        if library.phrase_still[p]:
            reasons.append("held pose")
        out.append(tuple(reasons))
    return out


def keep_a_foot_down(motion: Motion) -> Motion:
    """``motion`` with the body lowered, frame by frame, where no foot point is on the floor.

    For low-impact routines, whose phrases rise at most :data:`FLIGHT_TOLERANCE_M` above
    contact (:func:`screen_phrases`): in such a frame the root comes down until the lowest foot
    point is 2 mm under its contact height; elsewhere nothing moves. No foot goes under the floor:
    in those frames every foot point was above its contact height.
    """
    heights = foot_positions(motion)[..., 1]
    thresholds = np.array([ANKLE_CONTACT_HEIGHT_M, TOE_CONTACT_HEIGHT_M] * 2)
    drop = np.maximum((heights - thresholds).min(axis=1) + 0.002, 0.0)
    if not drop.any():
        return motion
    root = motion.root_translation.copy()
    root[:, 1] -= drop
    return Motion(fps=motion.fps, root_translation=root, rotations=motion.rotations, skeleton=motion.skeleton)
