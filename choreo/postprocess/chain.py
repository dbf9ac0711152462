"""The post-processing chain the pipeline runs on every generated motion."""

from __future__ import annotations

from collections.abc import Mapping

from choreo.contracts.contacts import ContactTrack
from choreo.motion.motion import Motion
from choreo.postprocess.contacts import detect_contacts
from choreo.postprocess.filtering import DEFAULT_BODY_CUTOFF_HZ, DEFAULT_ROOT_CUTOFF_HZ, lowpass_filter
from choreo.postprocess.foot_locking import lock_feet
from choreo.postprocess.ground import ground_feet
from choreo.postprocess.hand_locking import lock_hands
from choreo.postprocess.joint_limits import JointLimit, clamp_joint_limits
from choreo.postprocess.leg_ik import solve_leg_ik
from choreo.postprocess.straight_knees import soften_straight_knees

__all__ = ["postprocess"]


def postprocess(
    motion: Motion,
    *,
    smooth: bool = True,
    body_cutoff_hz: float = DEFAULT_BODY_CUTOFF_HZ,
    joint_cutoff_hz: Mapping[str, float] | None = None,
    root_cutoff_hz: float | None = DEFAULT_ROOT_CUTOFF_HZ,
    joint_limits: Mapping[str, JointLimit] | None = None,
    leg_ik: bool = True,
    clamp_limits: bool = True,
    soft_knees: bool = True,
    ground: bool = True,
    lock: bool = True,
    contacts: ContactTrack | None = None,
    keep_one_foot_down: bool = False,
    lock_at_touch_down: bool = False,
    bounded_let_go: bool = False,
    min_pelvis_m: float = 0.0,
) -> Motion:
    """Smooth, bend the legs onto the floor, clamp to joint limits, ground, lock the feet and the hands.

    The order matters: clamping comes after smoothing and leg IK so neither can
    push a joint back out of range, and the locks come last, on the grounded
    dance, so a planted foot stays where it is held in the final pose; the hands after the
    feet, whose locks may lower the pelvis (and so the shoulders).

    Parameters
    ----------
    motion : the raw motion; left untouched
    smooth : run :func:`~choreo.postprocess.filtering.lowpass_filter`
    body_cutoff_hz, joint_cutoff_hz, root_cutoff_hz : the filter's cut-offs in Hz
    leg_ik : run :func:`~choreo.postprocess.leg_ik.solve_leg_ik`
    joint_limits : joint name to limit; defaults to the SMPL table
    clamp_limits : run :func:`~choreo.postprocess.joint_limits.clamp_joint_limits`
    soft_knees : run :func:`~choreo.postprocess.straight_knees.soften_straight_knees` (no knee
        straighter than its floor; before the floor pass and the locks, which place the feet)
    ground : run :func:`~choreo.postprocess.ground.ground_feet`
    lock : run :func:`~choreo.postprocess.foot_locking.lock_feet`, then
        :func:`~choreo.postprocess.hand_locking.lock_hands`
    contacts : the contacts to lock the feet and hands by (the performed dance's, at this
        motion's fps); ``None`` detects them on the grounded motion
        (:func:`~choreo.postprocess.contacts.detect_contacts`, short flights bridged)
    keep_one_foot_down : the locks never let the last held foot go (a low-impact workout's;
        :func:`~choreo.postprocess.foot_locking.lock_feet`)
    lock_at_touch_down : the feet's locks hold each contact where it touched down, not at the
        mean of its path (a low-impact workout's; :func:`~choreo.postprocess.foot_locking.lock_feet`)
    bounded_let_go : the feet's locks are reached and let go of at a bounded foot speed (a finished
        low-impact workout's; :func:`~choreo.postprocess.foot_locking.lock_feet`)
    min_pelvis_m : the feet's locks never lower the pelvis under this height (a workout's
        floor-work rule; :func:`~choreo.postprocess.foot_locking.lock_feet`)

    Returns
    -------
    Motion
        A new motion with the same fps, frame count and skeleton.
    """
    out = motion
    if smooth:
        out = lowpass_filter(
            out, body_cutoff_hz=body_cutoff_hz, joint_cutoff_hz=joint_cutoff_hz, root_cutoff_hz=root_cutoff_hz
        )
    if leg_ik:
        out = solve_leg_ik(out)
    if clamp_limits:
        out = clamp_joint_limits(out, limits=joint_limits)
    if soft_knees:
        out = soften_straight_knees(out)
    if ground:
        out = ground_feet(out)
    if lock:
        track = detect_contacts(out, bridge_flights=True) if contacts is None else contacts
        feet = lock_feet(
            out,
            track,
            joint_limits=joint_limits,
            keep_one_foot_down=keep_one_foot_down,
            lock_at_touch_down=lock_at_touch_down,
            bounded_let_go=bounded_let_go,
            min_pelvis_m=min_pelvis_m,
        )
        out = lock_hands(feet, track, joint_limits=joint_limits)
    if out is motion:
        out = motion.replace(root_translation=motion.root_translation.copy(), rotations=out.rotations.copy())
    return out
