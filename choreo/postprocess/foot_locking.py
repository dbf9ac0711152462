"""Feet that hold the floor: each foot locked at the mean of its path, for the whole of its contact.

While a foot is in contact (:class:`~choreo.contracts.contacts.ContactTrack`,
heel or toe) one point of it is held still on the floor plane at the mean of
where the dance puts that point during the contact (its touch-down point, with
``lock_at_touch_down``): the heel (ankle joint) when the heel is down at any time of the
contact, with the foot in one rotation for the whole contact (its touch-down
rotation turned flat, heading kept, as far as the ankle's swing limits let it
be flat, so the joint-limit clamp does not turn a held foot and sweep its toe),
otherwise the toe, with the foot's own tilt (tiptoe stays tiptoe). The mean is
the point closest to the dance's foot over the contact (least squares): held
there, a stance the dance lets slide is stopped half way along its slide rather
than at its start, so the legs reach less far, the pelvis drops less and fewer
locks give way. The foot
reaches its lock over :data:`EASE_S` before touch-down, so it is on the floor
from the first frame of the contact, and lets go over :data:`EASE_S` after
lift-off; between two contacts closer than that the foot goes from the one
lock to the other (no jump from lock to lock). With ``bounded_let_go`` (a finished low-impact
workout's, whose locks are at the touch-down points, but not the screen that picks its phrases,
where it let other phrases through) locks let go at a bounded speed: an ease, and a lock giving
way, move the foot no faster than the dance's foot plus :data:`MAX_LET_GO_SPEED_M_S`, the ease lasting as long
as the distance needs, and the move from one lock to the next begins before lift-off where the
gap is too short (:func:`~choreo.postprocess.lock_schedule.schedule_locks`). Held at the touch-down
point a lock may end a whole slide (0.9 m) from the dance's foot, and a 0.2 s ease or a give-way
then snapped the leg at up to 21 m/s; the mean locks of plain dances keep the 0.2 s eases, since
the longer eases and the slides before lift-off cost them skating (held-out modern 0.89 -> 1.17
to 1.5 times the mocap's, on the bench of bench/foot_locking.py). The legs reach the locks with
the two-bone IK (:func:`choreo.motion.leg_ik.place_ankles`, whose soft reach
keeps knees from snapping straight, and the knees' soft floor of
:mod:`choreo.postprocess.straight_knees` after the floor pass); where a lock lies beyond a leg's
comfortable reach the pelvis lowers, by at most :data:`MAX_PELVIS_DROP_M`,
rather than the leg stretching, and a lock still out of reach then gives way
(over :data:`GIVE_WAY_M`) rather than the knee going straight. The root's
horizontal path is never touched: the dancer stays where the plan puts it,
and the legs do the work. A foot that is not locked and moves fast swings
clear of the floor (:data:`SWING_CLEARANCE_M`); none goes below it.

With ``keep_one_foot_down`` (a low-impact workout's, which must never leave the
floor) the last held foot is never let go of: in every frame where a foot is in
contact, the one that stays down the longest keeps its lock (and the one handing
over keeps its own for :data:`HANDOVER_S` after the other lands, while it is in
contact: a foot that has only just landed is still arriving, too fast to be
standing by the contact rule), and where a kept lock is out of reach the root
moves towards it horizontally, by at most :data:`MAX_KEEP_SHIFT_M`, eased
in and out like the pelvis' drop, rather than the foot giving way (a give-way
moves a foot 2 to 6 m/s for a frame or two, off the floor by the contact rule).
Such a workout's locks are at the touch-down points (``lock_at_touch_down``, which the
pipeline passes with it): held at the mean, a foot lands half its slide ahead of where the
dance has it and arrives over the ease at up to 1.2 m/s, which the contact rule reads as off
the floor just when it is the one kept down.
Frames where the contacts have no foot down are the caller's to fill.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from choreo.contracts.contacts import ContactTrack
from choreo.motion.contacts import HORIZONTAL_AXES, UP_AXIS, sole_clearance_m
from choreo.motion.leg_ik import ANKLE_COLUMNS, leg_kinematics, place_ankles
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_mat, mat_to_aa, mat_to_quat, quat_slerp, quat_to_mat
from choreo.motion.skeleton import Skeleton
from choreo.postprocess.contacts import body_scale
from choreo.postprocess.filtering import DEFAULT_ROOT_CUTOFF_HZ, lowpass_signal
from choreo.postprocess.joint_limits import (
    SMPL_JOINT_LIMITS,
    JointLimit,
    clamp_joint_limits,
    limit_violation_mask,
)
from choreo.postprocess.lock_schedule import (
    Lock,
    contact_runs,
    require_matching_contacts,
    schedule_locks,
    smoothstep,
)
from choreo.postprocess.straight_knees import soften_straight_knees

__all__ = [
    "EASE_S",
    "GIVE_WAY_M",
    "HANDOVER_S",
    "MAX_KEEP_SHIFT_M",
    "MAX_PELVIS_DROP_M",
    "MAX_LET_GO_SPEED_M_S",
    "REACH_MARGIN_M",
    "SWING_CLEARANCE_M",
    "SWING_SPEED_M_S",
    "lock_feet",
]

EASE_S = 0.2
"""How long a foot takes, at least, to reach its lock before touch-down and to let go of it after lift-off."""

MAX_PELVIS_DROP_M = 0.14
"""The most the pelvis lowers (for the SMPL body) to bring a lock within reach."""

GIVE_WAY_M = 0.02
"""A lock this far (or further) out of reach with the pelvis as low as it may go is let go of (SMPL body)."""

HANDOVER_S = 0.1
"""With ``keep_one_foot_down``, how long a kept foot still in contact stays kept after the other lands."""

MAX_KEEP_SHIFT_M = 0.2
"""The most the root moves (for the SMPL body) to keep the last foot down, with ``keep_one_foot_down``."""

MAX_LET_GO_SPEED_M_S = 1.0
"""With ``lock_at_touch_down``, the fastest (for the SMPL body) a foot moves against where the dance has
it as its lock is reached, let go of or given way: a lock held 0.9 m from the dance's foot that gave
way over two frames moved the foot at 21 m/s (issues 21 and 23); now that let-go takes 0.9 s."""

REACH_MARGIN_M = 0.005
"""A locked leg is kept this much short of straight (a knee of about 167 degrees at most)."""

SWING_SPEED_M_S = 0.3
"""A foot without a lock moving faster than this (for the SMPL body) is swinging and clears the floor."""

SWING_CLEARANCE_M = 0.04
"""How high a swinging foot's lowest sole is lifted, at least (for the SMPL body)."""

_TOE_NAMES = ("left_foot", "right_foot")
_SIDES = ("left", "right")
_FLAT_SHARES = np.linspace(1.0, 0.0, 3)
_DROP_CUTOFF_HZ = 2.0
"""The pelvis drop is smoothed at this cut-off, slower than the root's: on the held-out bench, modern's
knee-straight runs 3.95 -> 1.35 a minute and its skating 0.070 -> 0.066 against the root's 6 Hz."""
_LEG_JOINTS = frozenset(
    f"{side}_{joint}" for side in ("left", "right") for joint in ("hip", "knee", "ankle", "foot")
)


def lock_feet(
    motion: Motion,
    contacts: ContactTrack,
    *,
    joint_limits: Mapping[str, JointLimit] | None = None,
    keep_one_foot_down: bool = False,
    lock_at_touch_down: bool = False,
    bounded_let_go: bool = False,
    min_pelvis_m: float = 0.0,
) -> Motion:
    """Hold every foot in contact at the mean of its path, bending the legs, lowering the pelvis if need be.

    Parameters
    ----------
    motion : the grounded motion (floor at y = 0); left untouched
    contacts : its contacts, at its fps and frame count
    joint_limits : joint name to limit (default: the SMPL table); the solved legs are
        clamped into them before the floor pass, so a foot the ankle cannot turn
        flat lifts its heel rather than pushing its toe through the floor
    keep_one_foot_down : never let the last held foot go (the module docstring): the root
        moves towards its lock instead, within :data:`MAX_KEEP_SHIFT_M`
    lock_at_touch_down : hold each contact at the point where it touched down rather than at
        the mean of its path (a low-impact workout's, with ``keep_one_foot_down``, and the
        screen that picks its phrases: :func:`choreo.workout.safety.performed_flight`)
    bounded_let_go : reach, let go of and give up each lock no faster than the dance's foot plus
        :data:`MAX_LET_GO_SPEED_M_S` (a finished low-impact workout's, whose touch-down locks can
        end a whole slide from the dance's foot; not its phrase screen, whose choice of phrases it
        would change)
    min_pelvis_m : the pelvis' drop never takes it under this height (a workout's floor-work
        rule: its pelvis must stay over :data:`~choreo.choreography.phrases.FLOOR_PELVIS_M`); a
        pelvis already under it is not lowered at all, and a lock it leaves out of reach gives way
        (or, with ``keep_one_foot_down``, the root moves towards it)

    Returns
    -------
    Motion
        A new motion with new leg rotations and a root whose height may be lower
        where a lock is out of reach; the root's horizontal path is unchanged
        (but with ``keep_one_foot_down``, where the last lock is out of reach).

    Raises
    ------
    ParameterError
        If the contacts do not match the motion's frames and fps.
    """
    require_matching_contacts(motion, contacts)
    if motion.n_frames < 2 or not contacts.frames[:, :4].any():
        return _settle_on_floor(motion, np.zeros((motion.n_frames, 2)), joint_limits)
    skeleton = motion.skeleton
    clearance = sole_clearance_m(skeleton).reshape(2, 2)  # [leg, (ankle, toe)]
    toe_offsets = np.stack([skeleton.offsets[skeleton.index(name)] for name in _TOE_NAMES])  # [leg, 3]
    positions, world = leg_kinematics(motion)
    ankles, toes = _ankles_and_toes(motion, (positions, world))
    own = world[:, ANKLE_COLUMNS]
    ease = max(1, int(round(EASE_S * motion.fps)))
    # Touch-down locks can end up a whole slide from the dance's foot: let go at a bounded speed.
    max_step = MAX_LET_GO_SPEED_M_S * body_scale(skeleton) / motion.fps if bounded_let_go else None

    n = motion.n_frames
    targets = ankles.copy()
    weights = np.zeros((n, 2))
    # The world rotation each ankle turns towards, by its weight: ``towards`` of the way from one to another.
    turn_from, turn_to, towards = own.copy(), own.copy(), np.zeros((n, 2))
    limits = SMPL_JOINT_LIMITS if joint_limits is None else joint_limits
    for leg in range(2):
        heel, toe = contacts.frames[:, 2 * leg], contacts.frames[:, 2 * leg + 1]
        runs = contact_runs(heel | toe)
        if not runs:
            continue
        on_heel = [bool(heel[start:stop].any()) for start, stop in runs]
        held = iter(
            _held_rotations(
                limits, skeleton, leg, [run for run, h in zip(runs, on_heel, strict=True) if h], own, world
            )
        )
        locks = [
            Lock(
                _lock_point(ankles[:, leg], run, clearance[leg, 0], lock_at_touch_down),
                toe_offsets[leg],
                next(held),
            )
            if heel_down
            else Lock(
                _lock_point(toes[:, leg], run, clearance[leg, 1], lock_at_touch_down), toe_offsets[leg], None
            )
            for run, heel_down in zip(runs, on_heel, strict=True)
        ]
        plan = schedule_locks(runs, locks, ankles[:, leg], own[:, leg], ease, max_step)
        targets[:, leg], weights[:, leg] = plan.targets, plan.weights
        turn_from[:, leg], turn_to[:, leg], towards[:, leg] = plan.turn_from, plan.turn_to, plan.towards
    orientations = turn_from
    between = towards > 0  # from the one lock to the other across a gap
    orientations[between] = _slerp(turn_from[between], turn_to[between], towards[between])

    drop, short = _pelvis_drop(motion, positions, targets, weights, min_pelvis_m)
    # A lock still out of reach with the pelvis down gives way, rather than the knee going straight.
    give_way = smoothstep(np.clip(short / (GIVE_WAY_M * body_scale(skeleton)), 0.0, 1.0))
    root = motion.root_translation.astype(np.float64, copy=True)
    root[:, UP_AXIS] -= drop
    if keep_one_foot_down:
        kept, shift = _keep_last_lock(motion, positions, targets, weights, short, drop)
        give_way[kept] = 0.0
        root += shift
    weights = weights * (1.0 - give_way)
    if bounded_let_go:
        weights = _bounded_weights(weights, targets - ankles, motion.fps, body_scale(skeleton))
    lowered = motion.replace(root_translation=root, rotations=motion.rotations.astype(np.float64))
    return _settle_on_floor(place_ankles(lowered, targets, weights, orientations), weights, joint_limits)


def _settle_on_floor(
    motion: Motion, weights: np.ndarray, joint_limits: Mapping[str, JointLimit] | None
) -> Motion:
    """The legs clamped into their limits and the swinging feet cleared; then a last clamp, the
    knees those passes straightened bent back onto their floor (a swing cleared by lifting a foot
    that points up stretches its leg), and the root alone lifts whatever sole is still under the floor."""
    table = SMPL_JOINT_LIMITS if joint_limits is None else joint_limits
    leg_limits = {name: limit for name, limit in table.items() if name in _LEG_JOINTS}  # all the locks move
    motion = _clear_swings(clamp_joint_limits(motion, limits=leg_limits), weights)
    return _raise_over_floor(soften_straight_knees(clamp_joint_limits(motion, limits=leg_limits)))


def _raise_over_floor(motion: Motion) -> Motion:
    """Raise the root where a sole is still below the floor: a crouched leg that cannot fold further,
    or an ankle the last clamp turned back into range (the rotations, and so the limits, stay)."""
    soles = _soles(motion.skeleton, *_ankles_and_toes(motion)).min(axis=(1, 2))
    if soles.min() >= 0.0:
        return motion
    root = motion.root_translation.astype(np.float64, copy=True)
    root[:, UP_AXIS] += _smooth_above(np.maximum(-soles, 0.0), motion.fps)
    return motion.replace(root_translation=root, rotations=motion.rotations.copy())


def _ankles_and_toes(
    motion: Motion, legs: tuple[np.ndarray, np.ndarray] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """World positions of each leg's ankle and toe joints, each ``[frames, 2, 3]`` (from ``legs``,
    the motion's :func:`~choreo.motion.leg_ik.leg_kinematics`, where the caller has them)."""
    positions, world = leg_kinematics(motion) if legs is None else legs
    ankles = positions[:, ANKLE_COLUMNS]
    skeleton = motion.skeleton
    toe_offsets = np.stack([skeleton.offsets[skeleton.index(name)] for name in _TOE_NAMES])
    return ankles, ankles + np.einsum("flij,lj->fli", world[:, ANKLE_COLUMNS], toe_offsets)


def _soles(skeleton: Skeleton, ankles: np.ndarray, toes: np.ndarray) -> np.ndarray:
    """Sole heights under each leg's ankle and toe, ``[frames, 2, 2]`` metres."""
    clearance = sole_clearance_m(skeleton).reshape(2, 2)
    return np.stack([ankles[..., UP_AXIS] - clearance[:, 0], toes[..., UP_AXIS] - clearance[:, 1]], axis=-1)


def _clear_swings(motion: Motion, weights: np.ndarray) -> Motion:
    """Lift each foot that is not held where it would sweep along the floor or go through it.

    A foot that moves faster than :data:`SWING_SPEED_M_S` without a lock is
    swinging: its lowest sole is raised to :data:`SWING_CLEARANCE_M` (the share
    of it by how far it is from a lock, and eased in with its speed), so it
    either stands or clears the floor; a foot whose sole is below the floor is
    raised onto it. The lift is smoothed like the root, never below what it must be.
    """
    n = motion.n_frames
    legs = leg_kinematics(motion)
    ankles, toes = _ankles_and_toes(motion, legs)
    lowest = _soles(motion.skeleton, ankles, toes).min(axis=2)
    scale = body_scale(motion.skeleton)
    speed = np.maximum(_speed(ankles, motion.fps), _speed(toes, motion.fps)) if n > 1 else np.zeros((n, 2))
    swinging = np.clip((speed / scale - 0.8 * SWING_SPEED_M_S) / (0.4 * SWING_SPEED_M_S), 0.0, 1.0)
    swinging = smoothstep(swinging) * (weights < 1.0)
    floor = np.maximum(-lowest, 0.0)
    lift = np.maximum(swinging * SWING_CLEARANCE_M * scale - lowest, floor)
    lift = np.where(weights >= 1.0, floor, np.maximum(_smooth_above(lift, motion.fps), 0.0))
    targets = ankles.copy()
    targets[..., UP_AXIS] += lift
    return place_ankles(motion, targets, (lift > 1e-6).astype(np.float64), legs=legs)


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


def _lock_point(path: np.ndarray, run: tuple[int, int], height: float, touch_down: bool) -> np.ndarray:
    """Where one contact ``run`` (first, past-the-last frame) holds a foot point whose path the dance
    gives as ``path [frames, 3]``: the mean of the path over the contact (its first frame's point where
    ``touch_down``), moved up or down to ``height`` over the floor."""
    start, stop = run
    out = path[start].copy() if touch_down else path[start:stop].mean(axis=0)
    out[UP_AXIS] = height
    return out


def _held_rotations(
    limits: Mapping[str, JointLimit],
    skeleton: Skeleton,
    leg: int,
    runs: list[tuple[int, int]],
    own: np.ndarray,
    world: np.ndarray,
) -> np.ndarray:
    """The world rotation a held heel's foot keeps for the whole of each contact ``runs``, ``[runs, 3, 3]``.

    The touch-down rotation (``own [frames, 2, 3, 3]``, the ankles' world
    rotations) turned flat with its heading kept, as far as the ankle's swing
    limits allow against the contact's knee rotations (``world``, of
    :func:`~choreo.motion.leg_ik.leg_kinematics`): of the shares of flatness in
    :data:`_FLAT_SHARES`, the one that leaves the fewest frames beyond the
    limits, the flattest at a tie. A foot turned flatter than its ankle bends
    is turned back by the joint-limit clamp while it is held, and its toe then
    sweeps along the floor: in modern's kneels and lunges that was about half of
    the skating left. The twist (a roll about the ankle-to-toe bone) moves no joint
    and is not counted.
    """
    count = _FLAT_SHARES.size
    if not runs:
        return np.zeros((0, 3, 3))
    touch_down = own[[start for start, _ in runs], leg]  # [runs, 3, 3]
    candidates = quat_to_mat(
        quat_slerp(
            np.repeat(mat_to_quat(touch_down), count, axis=0),
            np.repeat(mat_to_quat(_flat(touch_down)), count, axis=0),
            np.tile(_FLAT_SHARES, len(runs)),
        )
    ).reshape(len(runs), count, 3, 3)
    name = f"{_SIDES[leg]}_ankle"
    if name not in limits:
        return candidates[:, 0]
    frames = np.concatenate([np.arange(start, stop) for start, stop in runs])
    run_of = np.repeat(np.arange(len(runs)), [stop - start for start, stop in runs])
    knees = world[frames, 4 * leg + 2]  # [contact frames, 3, 3]
    local = np.swapaxes(knees, 1, 2)[:, None] @ candidates[run_of]  # [contact frames, candidates, 3, 3]
    ankle = skeleton.index(name)
    rotations = np.zeros((local.shape[0] * count, skeleton.n_joints, 3))
    rotations[:, ankle] = mat_to_aa(local.reshape(-1, 3, 3))
    probe = Motion(1.0, np.zeros((rotations.shape[0], 3)), rotations, skeleton)
    swing_only = {name: replace(limits[name], twist_min_rad=-np.pi, twist_max_rad=np.pi)}
    outside = limit_violation_mask(probe, limits=swing_only)[:, ankle].reshape(-1, count)
    per_run = np.zeros((len(runs), count))
    np.add.at(per_run, run_of, outside)
    return candidates[np.arange(len(runs)), np.argmin(per_run, axis=1)]


def _slerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Rotation matrices ``[n, 3, 3]`` a share ``t [n]`` of the way from ``a`` to ``b``."""
    return quat_to_mat(quat_slerp(mat_to_quat(a), mat_to_quat(b), t))


def _pelvis_drop(
    motion: Motion, positions: np.ndarray, targets: np.ndarray, weights: np.ndarray, min_pelvis_m: float
) -> tuple[np.ndarray, np.ndarray]:
    """How far the pelvis lowers in each frame, ``[frames]`` metres, so each lock is within reach
    (by :data:`MAX_PELVIS_DROP_M` at most, and never under ``min_pelvis_m``), and how far each
    leg's lock is still out of reach after it, ``[frames, 2]`` metres."""
    scale = body_scale(motion.skeleton)
    legs = np.zeros((motion.n_frames, 2))
    for leg in range(2):
        c = 4 * leg
        hip, knee, ankle = positions[:, c + 1], positions[:, c + 2], positions[:, c + 3]
        reach = (np.linalg.norm(knee - hip, axis=1) + np.linalg.norm(ankle - knee, axis=1)) - REACH_MARGIN_M
        wanted = hip + weights[:, leg, None] * (targets[:, leg] - ankle) + (ankle - hip)
        offset = wanted - hip
        across = np.linalg.norm(offset[:, HORIZONTAL_AXES], axis=1)
        below = hip[:, UP_AXIS] - wanted[:, UP_AXIS]
        room = np.sqrt(np.maximum(reach**2 - across**2, 0.0))
        legs[:, leg] = np.where(across < reach, below - room, np.inf)
    bound = np.clip(positions[:, 0, UP_AXIS] - min_pelvis_m, 0.0, MAX_PELVIS_DROP_M * scale)
    need = np.clip(legs.max(axis=1), 0.0, bound)
    drop = np.minimum(_smooth_above(need, motion.fps, _DROP_CUTOFF_HZ), bound)
    return drop, np.maximum(legs - drop[:, None], 0.0)


def _keep_last_lock(
    motion: Motion,
    positions: np.ndarray,
    targets: np.ndarray,
    weights: np.ndarray,
    short: np.ndarray,
    drop: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Which locks each frame keeps, ``[frames, 2]`` bool, and how far the root moves to reach
    them, ``[frames, 3]`` metres.

    Of the legs held in a frame (weight 1: in contact) the one that stays down the longest is
    kept, so a kept foot is kept from its touch-down until it lifts (a foot let go of and then
    kept would jump back to its lock); a foot kept in the :data:`HANDOVER_S` before stays kept
    while it is held, so the one handing over does not let go the moment the other lands.
    Where a kept foot is still short of its lock with the pelvis ``drop``-ped, the hip comes
    towards the lock horizontally (the pelvis goes no lower) by the distance it lacks (the
    larger of the two where both are kept); each axis' move is eased like the drop
    (:func:`_smooth_above`, its positive and negative parts apart, so it never falls short of
    the need) and bounded by :data:`MAX_KEEP_SHIFT_M`.
    """
    n = motion.n_frames
    held = weights >= 1.0
    # The last frame of each held run, in each of its frames.
    last = held & ~np.vstack([held[1:], np.zeros((1, 2), dtype=bool)])
    ends = np.minimum.accumulate(np.where(last, np.arange(n)[:, None], n)[::-1], axis=0)[::-1]
    longest = np.zeros((n, 2), dtype=bool)
    frames = np.flatnonzero(held.any(axis=1))
    longest[frames, np.argmax(np.where(held, ends, -1), axis=1)[frames]] = True
    handover = max(1, int(round(HANDOVER_S * motion.fps)))
    recent = np.cumsum(np.vstack([np.zeros((1, 2)), longest]), axis=0)
    kept = held & (recent[1:] - recent[np.maximum(np.arange(1, n + 1) - handover - 1, 0)] > 0)
    # A kept foot lets go of its lock over the ease after lift-off, as any foot does, without giving
    # way first: given way at once, it would jump from its lock to where the dance has it.
    ease = max(1, int(round(EASE_S * motion.fps)))
    leaving = (weights > 0.0) & (recent[1:] - recent[np.maximum(np.arange(1, n + 1) - ease - 1, 0)] > 0)
    need = np.zeros((n, 2, 3))
    for leg in range(2):
        frames = np.flatnonzero(kept[:, leg] & (short[:, leg] > 0.0))
        c = 4 * leg
        hip, knee, ankle = positions[frames, c + 1], positions[frames, c + 2], positions[frames, c + 3]
        reach = np.linalg.norm(knee - hip, axis=1) + np.linalg.norm(ankle - knee, axis=1) - REACH_MARGIN_M
        away = targets[frames, leg] - hip
        below = -away[:, UP_AXIS] - drop[frames]
        away[:, UP_AXIS] = 0.0
        across = np.linalg.norm(away, axis=1)
        room = np.sqrt(np.maximum(reach**2 - below**2, 0.0))
        need[frames, leg] = away * (np.maximum(across - room, 0.0) / np.maximum(across, 1e-9))[:, None]
    need = need[np.arange(n), np.argmax(np.linalg.norm(need, axis=2), axis=1)]
    bound = MAX_KEEP_SHIFT_M * body_scale(motion.skeleton)
    fps = motion.fps
    shift = _smooth_above(np.maximum(need, 0.0), fps) - _smooth_above(np.maximum(-need, 0.0), fps)
    return kept | leaving, np.clip(shift, -bound, bound)


def _bounded_weights(weights: np.ndarray, apart: np.ndarray, fps: float, scale: float) -> np.ndarray:
    """The lock weights ``[frames, 2]`` raised where they change faster than the foot may move.

    A weight moves the foot by its change times ``apart`` ``[frames, 2, 3]`` (the lock's target
    less the dance's foot), so where that would be faster than :data:`MAX_LET_GO_SPEED_M_S`
    (times ``scale``) a falling weight falls later and slower (a let-go or give-way that takes as
    long as its distance needs) and a rising one starts rising sooner. Weights are only raised:
    a foot is held longer, never let go of sooner.
    """
    step = MAX_LET_GO_SPEED_M_S * scale / fps / np.maximum(np.linalg.norm(apart, axis=-1), 1e-9)
    out = weights.copy()
    for frame in range(1, out.shape[0]):  # a fall: no faster than the step
        out[frame] = np.maximum(out[frame], out[frame - 1] - step[frame])
    for frame in range(out.shape[0] - 2, -1, -1):  # a rise: begun soon enough
        out[frame] = np.maximum(out[frame], out[frame + 1] - step[frame])
    return out


def _smooth_above(need: np.ndarray, fps: float, cutoff_hz: float = DEFAULT_ROOT_CUTOFF_HZ) -> np.ndarray:
    """A smooth curve (per column, along frames) that is never below ``need``.

    The need is widened by a running maximum over half a period of ``cutoff_hz``
    (the root's unless told), low-passed at it, and raised back to the need where the
    low-pass still dips under it (seldom, and by little, after the widening).
    """
    if need.shape[0] <= 12:
        return need
    width = max(1, int(round(fps / cutoff_hz / 2)))
    padded = np.pad(need, [(width, width)] + [(0, 0)] * (need.ndim - 1), mode="edge")
    widened = np.max(np.lib.stride_tricks.sliding_window_view(padded, 2 * width + 1, axis=0), axis=-1)
    return np.maximum(lowpass_signal(widened, cutoff_hz, fps), need)
