"""The guide: a plan turned into whole-song poses, phrase by phrase.

Each segment's phrase is warped onto its song beats
(:func:`choreo.choreography.warp.beat_warp`) and sampled on the song's frame
grid. Its heading (the library's yaw, smoothed over about +-0.25 s) and its
root on the floor (x and z, not the height) are turned and moved to continue
where the previous phrase was going, and the remaining difference in pose and
velocity is hidden by inertialization (:mod:`choreo.choreography.inertialize`),
and a foot on the ground on both sides of a junction is held where it stood
by leg IK while the new phrase keeps it down (within the inertialization window).
The first phrase starts at the centre of the floor facing the audience (+Z).
Over the plan's breaks the dancer holds still (:mod:`choreo.choreography.holds`).

Besides the poses the guide gives, per frame, the seconds since the previous
junction and until the next one (``junction``), which a synthesizer that
performs the plan reads, and which foot the source phrase had on the ground
(``feet``, the library's contact bits at the sampled source frame), which the
contacts of the performed dance take in (:func:`choreo.postprocess.contacts.detect_contacts`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from choreo.choreography.holds import hold_breaks
from choreo.choreography.inertialize import hold_planted_feet, inertialize, planted_weights
from choreo.choreography.library import LIBRARY_FPS, PhraseLibrary
from choreo.choreography.warp import BeatWarp, beat_warp, limit_airborne_stretch
from choreo.contracts.plan import Plan, Segment
from choreo.errors import ParameterError
from choreo.motion.kinematics import chain_kinematics
from choreo.motion.leg_ik import LEG_CHAINS, MIN_CORRECTION_M, SOFT_REACH_M, place_ankles
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_quat, quat_multiply, quat_slerp, quat_to_aa
from choreo.motion.skeleton import SMPL

__all__ = ["ARM_JOINTS", "BODY_JOINTS", "Guide", "build_guide", "scale_arms", "scale_body", "segment_warp"]

ARM_JOINTS: tuple[int, ...] = tuple(
    SMPL.index(f"{side}_{joint}")
    for side in ("left", "right")
    for joint in ("collar", "shoulder", "elbow", "wrist")
)
"""The joints a segment's ``arm_amplitude`` scales (:func:`scale_arms`)."""
BODY_JOINTS: tuple[int, ...] = (
    *(SMPL.index(name) for name in ("spine1", "spine2", "spine3", "neck", "head")),
    *ARM_JOINTS,
)
"""The joints a segment's ``body_amplitude`` scales besides the root's path (:func:`scale_body`):
the trunk, neck, head and arms, never the legs."""
_LEG_JOINTS = [SMPL.index(name) for chain in LEG_CHAINS for name in chain]
_REACH_FRAMES = 4
_MAX_DROP_M = 0.08
_NEAR_FRAMES = 6

_MARGIN_FRAMES = 8


@dataclass(frozen=True)
class Guide:
    """The planned dance before post-processing, at ``fps``."""

    poses: np.ndarray
    """[frames, 75] float32, axis-angle rotations then root translation (the ``Motion`` layout)."""
    junction: np.ndarray
    """[frames, 2] float32, seconds since the previous junction (or start) and to the next (or end)."""
    fps: float
    feet: np.ndarray
    """[frames, 2] bool, the left and the right foot on the ground in the source phrase at each frame
    (over a break, those of the frames the held pose stands in for: a held foot is slow, so the
    contacts' speed test, which the bits relax, passes there anyway)."""


def _check_phrase(library: PhraseLibrary, segment: Segment) -> int:
    p = segment.phrase
    if not 0 <= p < library.phrase_key.size:
        raise ParameterError(f"plan phrase {p} is not in the library ({library.phrase_key.size} phrases)")
    return p


def segment_warp(library: PhraseLibrary, segment: Segment) -> BeatWarp:
    """Song time to phrase time (seconds from the phrase's first frame) for ``segment``.

    Both ends and the phrase's beats where the stretch stays regular are pinned to
    their song beats and eased into, so the dancer slows on each (see
    :mod:`choreo.choreography.warp`); its other beats follow the warp between them.
    Where the body is in the air the stretch stays near 1 (:func:`limit_airborne_stretch`).
    """
    p = _check_phrase(library, segment)
    key = int(library.phrase_key[p])
    n = int(library.phrase_beats[p])
    first, last = int(library.key_frame[key]), int(library.key_frame[key + n])
    beats_s = (library.key_frame[key : key + n + 1] - first) / LIBRARY_FPS
    song = np.asarray(segment.song_beats_s, dtype=np.float64)
    if segment.free or song.size < 2:
        warp = beat_warp(beats_s[[0, -1]], song[[0, -1]])
    else:
        warp = beat_warp(beats_s, song, eased=True)
    return limit_airborne_stretch(warp, library.airborne[first : last + 1], LIBRARY_FPS)


def _source(library: PhraseLibrary, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The phrase's clip around it (quaternions, root, feet on the ground ``[n, 2]`` left and right;
    mirrored if it is) and where the phrase starts, s."""
    key = int(library.phrase_key[p])
    clip = int(library.key_clip[key])
    first = int(library.key_frame[key])
    last = int(library.key_frame[key + int(library.phrase_beats[p])])
    lo = max(int(library.clip_start[clip]), first - _MARGIN_FRAMES)
    hi = min(int(library.clip_stop[clip]) - 1, last + _MARGIN_FRAMES)
    mirrored = bool(library.phrase_mirrored[p])
    quats, root = library.frames_quats(lo, hi, mirrored=mirrored)
    bits = library.contacts[lo : hi + 1]
    feet = np.stack([(bits & 1) != 0, (bits & 2) != 0], axis=1)
    return quats, root, feet[:, ::-1] if mirrored else feet, (first - lo) / LIBRARY_FPS


def _sample(quats: np.ndarray, root: np.ndarray, times_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Source frames at ``times_s`` (clipped to the source): slerp per joint, the root linearly."""
    pos = np.clip(times_s * LIBRARY_FPS, 0.0, quats.shape[0] - 1)
    lo = np.minimum(np.floor(pos).astype(int), quats.shape[0] - 2)
    t = pos - lo
    q = quat_slerp(quats[lo], quats[lo + 1], t[:, None])
    r = root[lo] * (1.0 - t)[:, None] + root[lo + 1] * t[:, None]
    return q, r


def _towards_mean(quats: np.ndarray, joints: tuple[int, ...], amplitude: float) -> np.ndarray:
    """``quats`` ``[frames, 24, 4]`` with each of ``joints``' rotations slerped from its mean over the
    frames by ``amplitude`` (1: unchanged, 0: held at the mean, above 1: further out)."""
    part = quats[:, joints]
    signs = np.where(np.sum(part * part[:1], axis=-1, keepdims=True) < 0.0, -1.0, 1.0)
    mean = (part * signs).mean(axis=0)
    mean /= np.maximum(np.linalg.norm(mean, axis=-1, keepdims=True), 1e-12)
    out = quats.copy()
    out[:, joints] = quat_slerp(np.broadcast_to(mean, part.shape), part, max(float(amplitude), 0.0))
    return out


def scale_arms(quats: np.ndarray, amplitude: float) -> np.ndarray:
    """``quats`` ``[frames, 24, 4]`` with each arm joint's rotation brought towards its mean over the
    frames: slerp from the mean by ``amplitude`` (1: unchanged, 0: held at the mean). The arms keep
    their pattern and timing and move less, so the motion's energy falls where a move is danced
    gentler."""
    if amplitude >= 1.0 or quats.shape[0] == 0:
        return quats
    return _towards_mean(quats, ARM_JOINTS, amplitude)


def scale_body(
    quats: np.ndarray, root: np.ndarray, amplitude: float, planted: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A move danced smaller (``amplitude`` under 1) or bigger (above 1) with its feet where they were.

    ``quats`` ``[frames, 24, 4]`` and ``root`` ``[frames, 3]``: the root's sway on the floor about
    the straight line from its first to its last frame (where the move travels to stays) and its
    bounce about its mean height are scaled by ``amplitude``, the trunk, neck, head and arms
    (:data:`BODY_JOINTS`) slerped from their mean local rotations by it, and then the legs are bent
    (:func:`choreo.motion.leg_ik.place_ankles`) so that each ankle is where it was and turned as it
    was: the steps, the foot contacts and the impact stay the move's, the body above them moves
    less (or more). Where a leg would not reach its ankle the root moves only as far as it does
    (:func:`_reachable_shift`). An arm amplitude (:func:`scale_arms`) composes with it; 1 returns
    the inputs. A workout's 8-counts follow their target energy with it
    (:mod:`choreo.workout.intensity`): the arms alone carry too little of a move's energy.
    """
    if amplitude == 1.0 or quats.shape[0] < 2:
        return quats, root
    before = Motion(fps=LIBRARY_FPS, root_translation=root, rotations=quat_to_aa(quats))
    legs, turns = chain_kinematics(before, _LEG_JOINTS)
    line = root[:1] + (root[-1:] - root[:1]) * np.linspace(0.0, 1.0, root.shape[0])[:, None]
    line[:, 1] = root[:, 1].mean()
    shift = (amplitude - 1.0) * (root - line)
    moved = root + _reachable_shift(legs, shift, planted)
    scaled = _towards_mean(quats, BODY_JOINTS, amplitude)
    after = Motion(fps=LIBRARY_FPS, root_translation=moved, rotations=quat_to_aa(scaled))
    weights = np.repeat((np.linalg.norm(moved - root, axis=-1) > MIN_CORRECTION_M)[:, None], 2, axis=1)
    kept = place_ankles(after, legs[:, 2::3], weights.astype(np.float64), orientations=turns[:, 2::3])
    return aa_to_quat(kept.rotations), moved


def _reachable_shift(legs: np.ndarray, shift: np.ndarray, planted: np.ndarray) -> np.ndarray:
    """Per frame, the root's move (``shift`` ``[frames, 3]``, scaled and lowered) that keeps each
    planted leg's hip within reach of its ankle: ``legs`` ``[frames, 6, 3]`` are the hips, knees and
    ankles, ``planted`` ``[frames, 2]`` the feet on the ground. A leg's reach is its length less
    :data:`~choreo.motion.leg_ik.SOFT_REACH_M` (or as far as the frame had it); the hips move with
    the root (the pelvis keeps its turn). Where the sway would take a hip out of reach the root is
    first lowered, up to :data:`_MAX_DROP_M` (the knees bend, as a dancer's who sways less but
    keeps the step), then the sway is cut. Both are smoothed over :data:`_REACH_FRAMES` either side
    (the nearby extreme, then the mean, which keeps to it) so the root does not jerk."""
    share, drop = np.ones(shift.shape[0]), np.zeros(shift.shape[0])
    planted = _near_planted(planted)
    gaps, reaches = [], []
    for hip, knee, ankle in ((0, 1, 2), (3, 4, 5)):
        gap = legs[:, hip] - legs[:, ankle]
        length = np.linalg.norm(legs[:, hip] - legs[:, knee], axis=-1)
        length += np.linalg.norm(legs[:, knee] - legs[:, ankle], axis=-1)
        gaps.append(gap)
        reaches.append(np.maximum(length - SOFT_REACH_M, np.linalg.norm(gap, axis=-1)))
    for foot, (gap, reach) in enumerate(zip(gaps, reaches, strict=True)):
        # on the floor |gap + w shift| = the reach left beside the hip's height, lowered the most
        height = np.maximum(gap[:, 1] + shift[:, 1] - _MAX_DROP_M, 0.0)
        flat = np.maximum(
            np.sqrt(np.maximum(reach**2 - height**2, 0.0)), np.linalg.norm(gap[:, [0, 2]], axis=-1)
        )
        a = np.maximum(np.sum(shift[:, [0, 2]] ** 2, axis=-1), 1e-12)
        b = np.sum(gap[:, [0, 2]] * shift[:, [0, 2]], axis=-1)
        c = np.sum(gap[:, [0, 2]] ** 2, axis=-1) - flat**2
        reached = (-b + np.sqrt(np.maximum(b * b - a * c, 0.0))) / a
        share = np.minimum(share, np.where(planted[:, foot], reached, 1.0))
    share = np.clip(_smoothed(share, np.min), 0.0, 1.0)
    for foot, (gap, reach) in enumerate(zip(gaps, reaches, strict=True)):
        moved = gap + share[:, None] * shift
        highest = np.sqrt(np.maximum(reach**2 - np.sum(moved[:, [0, 2]] ** 2, axis=-1), 0.0))
        drop = np.maximum(drop, np.where(planted[:, foot], moved[:, 1] - highest, 0.0))
    drop = np.clip(_smoothed(drop, np.max), 0.0, _MAX_DROP_M)
    return share[:, None] * shift - drop[:, None] * np.array([0.0, 1.0, 0.0])


def _near_planted(planted: np.ndarray) -> np.ndarray:
    """``planted`` ``[frames, 2]`` with each foot also counted down :data:`_NEAR_FRAMES` either side
    of its contacts: the finished dance's contacts (detected again on its motion) and the feet's
    locks start and end there too, and a foot moved off its place there pops at the lock's release."""
    k = _NEAR_FRAMES
    padded = np.pad(planted, ((k, k), (0, 0)), mode="edge")
    return np.asarray(np.lib.stride_tricks.sliding_window_view(padded, 2 * k + 1, axis=0).any(axis=-1))


def _smoothed(values: np.ndarray, extreme: Callable[..., np.ndarray]) -> np.ndarray:
    """``values`` with each frame the mean over :data:`_REACH_FRAMES` either side of the ``extreme``
    (np.min or np.max) over as many: every frame keeps to the bound its own value set."""
    n, k = values.size, _REACH_FRAMES
    windows = np.lib.stride_tricks.sliding_window_view(np.pad(values, k, mode="edge"), 2 * k + 1)
    near = extreme(windows, axis=-1)
    return np.convolve(np.pad(near, k, mode="edge"), np.ones(2 * k + 1) / (2 * k + 1), "valid")[:n]


def _turn(quats: np.ndarray, root: np.ndarray, yaw: float) -> tuple[np.ndarray, np.ndarray]:
    """Turn the body about +Y by ``yaw`` (the root orientation and the root path about the origin)."""
    half = 0.5 * yaw
    turn = np.array([0.0, np.sin(half), 0.0, np.cos(half)])
    quats = quats.copy()
    quats[:, 0] = quat_multiply(turn, quats[:, 0])
    c, s = np.cos(yaw), np.sin(yaw)
    moved = root.copy()
    moved[:, 0] = c * root[:, 0] + s * root[:, 2]
    moved[:, 2] = -s * root[:, 0] + c * root[:, 2]
    return quats, moved


def build_guide(library: PhraseLibrary, plan: Plan, n_frames: int, fps: float) -> Guide:
    """The guide of ``plan`` over ``n_frames`` frames at ``fps`` (frame ``k`` at ``k / fps`` s).

    Raises
    ------
    ParameterError
        When the plan names phrases the library does not have, or does not reach the last frame.
    """
    if plan.segments[-1].end_s * fps < n_frames - 1 - 1e-6:
        raise ParameterError(
            f"the plan ends at {plan.segments[-1].end_s:.2f} s but the song runs {n_frames / fps:.2f} s"
        )
    quats = np.zeros((n_frames, 24, 4))
    quats[..., 3] = 1.0
    root = np.zeros((n_frames, 3))
    planted = np.zeros((n_frames, 2), dtype=bool)
    yaw_end = 0.0
    prev_tail: tuple[np.ndarray, np.ndarray] | None = None
    prev_feet = np.zeros(2, dtype=bool)
    holds: list[tuple[int, np.ndarray]] = []
    pos_end = np.zeros(2)
    for i, seg in enumerate(plan.segments):
        p = _check_phrase(library, seg)
        last = i == len(plan.segments) - 1
        a = int(np.ceil(seg.start_s * fps - 1e-9)) if i else 0
        b = n_frames if last else int(np.ceil(seg.end_s * fps - 1e-9))
        if b <= a:
            continue
        # one frame past the segment's end: where this phrase is going at the next junction
        frames = np.arange(a, b + 1)
        source_q, source_root, source_feet, offset_s = _source(library, p)
        times_s = segment_warp(library, seg).phrase_time(frames / fps) + offset_s
        seg_q, seg_root = _sample(source_q, source_root, times_s)
        feet = source_feet[np.clip(np.rint(times_s * LIBRARY_FPS).astype(int), 0, source_feet.shape[0] - 1)]
        seg_q, seg_root = scale_body(
            scale_arms(seg_q, seg.arm_amplitude), seg_root, seg.body_amplitude, planted=feet
        )
        key = int(library.phrase_key[p])
        end_key = key + int(library.phrase_beats[p])
        turn = (yaw_end if i else 0.0) - float(library.key_heading[key])
        seg_q, seg_root = _turn(seg_q, seg_root, turn)
        seg_root[:, [0, 2]] += pos_end - seg_root[0, [0, 2]]
        if prev_tail is not None:
            seg_q, seg_root = inertialize(seg_q, seg_root, prev_tail[0], prev_tail[1], fps)
            # held up to the segment's last frame, which with the one past it hands over to the next
            holds.append((a, planted_weights(prev_feet, feet[: b - a - 1], fps)))
        quats[a:b] = seg_q[: b - a]
        root[a:b] = seg_root[: b - a]
        planted[a:b] = feet[: b - a]
        # the next phrase continues from where this one is going at its end
        prev_tail = (seg_q[-2:].copy(), seg_root[-2:].copy())
        prev_feet = feet[-1]
        pos_end = seg_root[-1, [0, 2]].copy()
        yaw_end = float(library.key_heading[end_key]) + turn
    if plan.breaks_s:
        quats, root = hold_breaks(quats, root, np.asarray(plan.breaks_s), fps)
    joined = hold_planted_feet(Motion(fps=fps, root_translation=root, rotations=quat_to_aa(quats)), holds)
    poses = np.concatenate([joined.rotations.reshape(n_frames, -1), root], axis=1).astype(np.float32)
    return Guide(poses=poses, junction=_junction_clock(plan, n_frames, fps), fps=fps, feet=planted)


def _junction_clock(plan: Plan, n_frames: int, fps: float) -> np.ndarray:
    t = np.arange(n_frames) / fps
    marks = np.concatenate([[0.0], plan.junctions_s, [max(plan.duration_s, n_frames / fps)]])
    idx = np.clip(np.searchsorted(marks, t, side="right") - 1, 0, marks.size - 2)
    return np.stack([t - marks[idx], marks[idx + 1] - t], axis=1).astype(np.float32)
