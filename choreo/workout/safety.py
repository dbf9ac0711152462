"""What a workout may dance: the safety rules, on library phrases and on the finished motion.

A workout keeps the head above the hips, stays off the floor (no floor work,
no inversions), avoids deep spinal flexion and stays inside the joint limits
with a margin; low impact also keeps a foot on the floor in every frame. That
last rule is stricter than the library's airborne bit (every joint clears 5 cm,
:func:`choreo.motion.contacts.airborne_frames`), which lets small hops
through, and is two rules: a frame is in flight when none of the four foot
points (ankles, toes) is under its contact height
(:func:`choreo.motion.contacts.point_contacts`, without the speed condition),
and when the contact track has neither foot down
(:func:`choreo.postprocess.contacts.detect_contacts`, the track the feet are
locked by and the summary reports: heights with hysteresis, and a foot sliding
faster than 1 m/s is not down). The same rules screen the library's phrases
(:func:`screen_phrases`, with margins) and measure the finished routine
(:func:`measure_safety`, the rules themselves). A low-impact dance's track
holds a foot down through the few frames of a junction between two phrases
where it has neither (:func:`hold_a_foot_down`), so the lock plants that foot; and the finished
motion gets a last pass (:func:`plant_a_foot`) that plants a foot wherever the contact track read on
it, the one :func:`measure_safety` counts, still has neither foot down (a hand-over where both feet
move faster than a standing foot for a frame).

Besides safety, a phrase a class repeats must be followable on the spot: one
that travels more than :data:`MAX_TRAVEL_M` or turns more than
:data:`MAX_TURN_RAD` in its 8-count, or is a held pose, is left out too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.choreography.library import PhraseLibrary
from choreo.choreography.phrases import FLOOR_PELVIS_M
from choreo.contracts.contacts import ContactTrack
from choreo.motion.contacts import (
    ANKLE_CONTACT_HEIGHT_M,
    TOE_CONTACT_HEIGHT_M,
    foot_positions,
    point_contacts,
)
from choreo.motion.kinematics import joint_positions
from choreo.motion.leg_ik import ANKLE_COLUMNS, leg_kinematics, place_ankles
from choreo.motion.motion import Motion
from choreo.motion.skeleton import SMPL
from choreo.postprocess.chain import postprocess
from choreo.postprocess.contacts import detect_contacts
from choreo.postprocess.joint_limits import clamp_joint_limits, limit_violation_mask
from choreo.postprocess.lock_schedule import contact_runs, smoothstep

__all__ = [
    "HEAD_MARGIN_M",
    "LIMIT_MARGIN_RAD",
    "LOCK_MIN_PELVIS_M",
    "LOW_JOINT_M",
    "MAX_SPINE_FLEXION_RAD",
    "MAX_TRAVEL_M",
    "MAX_TURN_RAD",
    "FLIGHT_TOLERANCE_M",
    "SafetyReport",
    "contact_flight",
    "finish_low_impact",
    "hold_a_foot_down",
    "keep_a_foot_down",
    "measure_safety",
    "performed_flight",
    "plant_a_foot",
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
LOCK_MIN_PELVIS_M = FLOOR_PELVIS_M + 0.02
"""The lowest a routine's feet locks take the pelvis when they lower it to bring a lock within reach
(``min_pelvis_m`` of :func:`choreo.postprocess.foot_locking.lock_feet`): 2 cm over floor work's."""
PLANT_PAD_S = 0.07
"""How far past a gap in the finished motion's contact track the foot planted through it is held
(:func:`plant_a_foot`): the track's speeds are central differences averaged over 0.05 s, so a
foot still moving two frames (at 30 fps) beside the gap reads as moving in it."""
PLANT_EASE_S = 0.1
"""How long a foot planted by :func:`plant_a_foot` takes to reach its place, and to leave it."""
PLANT_PASSES = 3
"""How many times :func:`plant_a_foot` reads the track again and plants what is still in flight, and the
most rounds of :func:`finish_low_impact`."""
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


def contact_flight(track: ContactTrack) -> np.ndarray:
    """``[frames]`` bool: the frames of ``track`` where neither foot (heel or toe) is down."""
    return np.asarray(~track.feet.any(axis=1))


@dataclass(frozen=True)
class SafetyReport:
    """Frames of a finished motion that break each rule (all zero for a safe low-impact routine).

    ``flight_frames`` by the strict height rule, ``contact_flight_frames`` by the contact track
    detected on the finished motion itself (:func:`choreo.postprocess.contacts.detect_contacts`).
    """

    flight_frames: int
    contact_flight_frames: int
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
        contact_flight_frames=int(contact_flight(detect_contacts(motion)).sum()),
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
    :data:`LIMIT_MARGIN_RAD`, the followability rules (travel, turn, held pose), and for low
    impact flight by both rules: the strict height rule, and the contact track of the phrase's
    clip danced as a dance of its own, raw and performed (post-processed, its feet locked:
    :func:`performed_flight`); the contact track is read only on the clips that hold a phrase
    passing every other rule (it costs a clean-up), so the count of phrases left out for flight
    is of those. A mirror image is screened as its original (the rules are symmetric).
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
    flight = broken.pop("flight")
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
        out.append(reasons)
    if impact == "low":
        starts = np.append(library.clip_start, motion.n_frames)
        chosen = np.asarray(phrases, dtype=np.int64)
        clips = np.searchsorted(starts, first[chosen], side="right") - 1
        for k in np.unique(clips[[not r for r in out]]).tolist():
            a, b = int(starts[k]), int(starts[k + 1])
            clip = Motion(
                fps=motion.fps, root_translation=motion.root_translation[a:b], rotations=motion.rotations[a:b]
            )
            flight[a:b] |= performed_flight(clip)
        in_flight = np.concatenate([[0], np.cumsum(flight)])
        for p, reasons in zip(chosen.tolist(), out, strict=True):
            if in_flight[int(last[p]) + 1] > in_flight[int(first[p])]:
                reasons.insert(0, "flight")
    return [tuple(r) for r in out]


def performed_flight(motion: Motion) -> np.ndarray:
    """``[frames]`` bool: frames of a raw ``motion`` where its contact track has neither foot down,
    raw or after the clean-up a dance gets (:func:`choreo.postprocess.postprocess`, whose foot locks
    can move a foot faster than a contact allows where a lock gives way), with the feet held where
    they touched down, as a low-impact routine's are."""
    raw = detect_contacts(motion)
    cleaned = postprocess(motion, contacts=raw, lock_at_touch_down=True)
    return contact_flight(raw) | contact_flight(detect_contacts(cleaned))


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


def hold_a_foot_down(track: ContactTrack) -> ContactTrack:
    """``track`` with a foot held down through every run of frames where neither foot is.

    For low-impact routines, whose phrases keep a foot down (:func:`screen_phrases`): what is
    left are a few frames at the junctions of the blend, where a stance foot slides. Through
    such a run the foot down in the frame before it stays down (the one after it, for a run at
    the start), so the feet's lock (:func:`choreo.postprocess.foot_locking.lock_feet`) plants it
    there. A track without any foot down is returned as it is: there is no stance to hold.
    """
    frames = track.frames.copy()
    gap = contact_flight(track)
    down = np.flatnonzero(~gap)
    if not gap.any() or down.size == 0:
        return track
    edges = np.diff(np.concatenate([[0], gap.astype(np.int8), [0]]))
    for start, stop in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
        source = start - 1 if start > 0 else stop
        frames[start:stop, :4] = frames[source, :4]
    return ContactTrack(track.fps, frames)


def finish_low_impact(motion: Motion) -> Motion:
    """A low-impact routine's last passes after the feet's locks: a foot planted through every run
    of frames with neither down (:func:`plant_a_foot`), the joints clamped into their limits, the
    body lowered where no foot point is on the floor (:func:`keep_a_foot_down`), in rounds until
    the finished motion's own contact track has a foot down in every frame (at most
    :data:`PLANT_PASSES` rounds).

    Each pass moves the feet the next one reads: the clamp and the lowering can leave a planted
    foot moving faster than the track allows a standing foot (4 frames of the 12.6-minute held-out
    intervals routine did, with the let-go bounded in speed), and one more round plants it.
    """
    for _ in range(PLANT_PASSES):
        motion = keep_a_foot_down(clamp_joint_limits(plant_a_foot(motion)))
        if not contact_flight(detect_contacts(motion)).any():
            break
    return motion


def plant_a_foot(motion: Motion) -> Motion:
    """``motion`` with a foot planted through every run of frames where its own contact track
    (:func:`~choreo.postprocess.contacts.detect_contacts` of the finished motion) has neither foot down.

    The last pass of a low-impact routine, measured by the rule it must pass. The feet's locks
    hold a foot down in every frame of the dance's track, but at a hand-over the foot leaving
    its lock (eased towards where the dance has it) and the one arriving at its own can both
    be moving faster than the track allows a standing foot for a frame or two, and the finished
    motion's track then has neither down. Through such a run, plus :data:`PLANT_PAD_S` on the
    far side, one of the two feet is held where it stands in the track beside the run, with its
    rotation there: the foot down just before it (held on) or the one down just after (arriving
    that much earlier), whichever moves less to get there; it eases in and out over
    :data:`PLANT_EASE_S`. The track is read again, up to :data:`PLANT_PASSES` times.
    Only the legs move (:func:`~choreo.motion.leg_ik.place_ankles`); a motion whose track has no
    foot down anywhere is returned as it is.
    """
    n = motion.n_frames
    pad = max(1, int(round(PLANT_PAD_S * motion.fps)))
    ease = max(1, int(round(PLANT_EASE_S * motion.fps)))
    frames = np.arange(n)
    for _ in range(PLANT_PASSES):
        track = detect_contacts(motion)
        feet, gaps = track.feet, contact_runs(contact_flight(track))
        if not gaps or not feet.any():
            return motion
        legs = leg_kinematics(motion)
        ankles, own = legs[0][:, ANKLE_COLUMNS], legs[1][:, ANKLE_COLUMNS]
        targets, orientations, weights = ankles.copy(), own.copy(), np.zeros((n, 2))
        for start, stop in gaps:
            before = int(np.argmax(feet[start - 1])) if start > 0 else None
            after = int(np.argmax(feet[stop])) if stop < n else None
            middle = (start + stop + 1) // 2
            choices = []  # the feet held: (leg, the frame it is held as, the frames held) each
            if before is not None:
                choices.append([(before, start - 1, np.arange(start, min(stop + pad, n)))])
            if after is not None:
                choices.append([(after, stop, np.arange(max(start - pad, 0), stop))])
            if before is not None and after is not None and before != after and stop - start > 1:
                choices.append(
                    [
                        (before, start - 1, np.arange(start, min(middle + pad, n))),
                        (after, stop, np.arange(max(middle - pad, 0), stop)),
                    ]
                )
            for leg, source, held in min(choices, key=lambda holds: max(_moved(ankles, *h) for h in holds)):
                # 1 on the frames held, eased in before them and out after them
                off = np.maximum(held[0] - frames, frames - held[-1]).clip(min=0)
                share = smoothstep(np.clip(1.0 - off / (ease + 1), 0.0, 1.0))
                moved = share > weights[:, leg]
                targets[moved, leg], orientations[moved, leg] = ankles[source, leg], own[source, leg]
                weights[moved, leg] = share[moved]
        motion = place_ankles(motion, targets, weights, orientations, legs=legs)
    return motion


def _moved(ankles: np.ndarray, leg: int, source: int, frames: np.ndarray) -> float:
    """How far ``leg``'s ankle moves, at most over ``frames``, to be where it is at ``source``."""
    return float(np.linalg.norm(ankles[frames, leg] - ankles[source, leg], axis=-1).max())
