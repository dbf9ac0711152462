"""Feet locked at the mean of their path over each contact: constructed motions whose contacts and lock points
are known."""

from __future__ import annotations

import numpy as np
import pytest
from limb_checks import bend_angles_deg

from choreo.contracts.contacts import CONTACT_POINTS, ContactTrack
from choreo.errors import ParameterError
from choreo.metrics.foot_skate import foot_skate_ratio
from choreo.motion import REST_PELVIS_HEIGHT_M, SMPL, Motion, joint_positions
from choreo.motion.contacts import sole_clearance_m
from choreo.postprocess.contacts import detect_contacts
from choreo.postprocess.foot_locking import (
    MAX_KEEP_SHIFT_M,
    MAX_LET_GO_SPEED_M_S,
    MAX_PELVIS_DROP_M,
    SWING_CLEARANCE_M,
    lock_feet,
)
from choreo.postprocess.ground import sole_heights_m
from choreo.postprocess.joint_limits import SMPL_JOINT_LIMITS, JointLimit, count_limit_violations
from choreo.postprocess.straight_knees import soften_straight_knees

ANKLES = [SMPL.index("left_ankle"), SMPL.index("right_ankle")]


def _gliding(speed_m_s: float, seconds: float, fps: float) -> Motion:
    """The rest pose standing on the floor and gliding forwards (+Z) at ``speed_m_s``."""
    n = int(round(seconds * fps))
    root = np.zeros((n, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M
    root[:, 2] = speed_m_s * np.arange(n) / fps
    return Motion(fps, root, np.zeros((n, 24, 3)))


@pytest.mark.parametrize("fps", [24.0, 30.0, 50.0, 60.0])
def test_a_sliding_foot_stops_at_every_frame_rate(fps: float) -> None:
    motion = _gliding(0.15, 1.0, fps)
    contacts = detect_contacts(motion)
    assert contacts.feet.all()  # slow enough to be a stance that slides
    locked = lock_feet(motion, contacts)
    ankles = joint_positions(locked)[:, ANKLES]
    # Held still at the mean of the slide: half way along it, 7.5 cm on from the touch-down point.
    middle = joint_positions(motion)[:, ANKLES].mean(axis=0)
    start = joint_positions(motion)[0, ANKLES]
    assert middle[0, 2] - start[0, 2] == pytest.approx(0.15 * (motion.n_frames - 1) / fps / 2)
    np.testing.assert_allclose(
        ankles[:, :, [0, 2]], np.broadcast_to(middle[:, [0, 2]], (motion.n_frames, 2, 2)), atol=1e-3
    )
    # The body still travels where the plan puts it: the root's horizontal path is untouched.
    np.testing.assert_array_equal(locked.root_translation[:, [0, 2]], motion.root_translation[:, [0, 2]])
    assert (sole_heights_m(locked) >= -1e-6).all()


def test_a_faster_slide_that_the_ruler_calls_skating_stops_skating() -> None:
    motion = _gliding(0.5, 0.6, 30.0)
    frames = np.zeros((motion.n_frames, len(CONTACT_POINTS)), dtype=bool)
    frames[:, :4] = True  # the performed dance's contacts say both feet are planted
    contacts = ContactTrack(30.0, frames)
    assert foot_skate_ratio(joint_positions(motion), fps=30.0) == 1.0
    assert foot_skate_ratio(joint_positions(lock_feet(motion, contacts)), fps=30.0) == 0.0


def _left_down(motion: Motion, first: int, stop: int, toe: bool = False) -> ContactTrack:
    """Contacts with only the left heel (the toe, with ``toe``) down, frames ``first`` to ``stop - 1``."""
    frames = np.zeros((motion.n_frames, len(CONTACT_POINTS)), dtype=bool)
    frames[first:stop, 1 if toe else 0] = True
    return ContactTrack(motion.fps, frames)


def test_the_lock_point_is_the_mean_of_the_contact_on_the_floor() -> None:
    motion = _gliding(0.15, 1.5, 30.0)
    root = motion.root_translation.copy()
    root[:, 1] += 0.02  # floating 2 cm: the lock puts the heel on the floor plane
    motion = motion.replace(root_translation=root)
    locked = lock_feet(motion, _left_down(motion, 10, 30))
    ankle = joint_positions(locked)[:, ANKLES[0]]
    path = joint_positions(motion)[10:30, ANKLES[0]]
    mean = path.mean(axis=0)
    assert mean[2] - path[0, 2] == pytest.approx(0.15 * 19 / 30 / 2)  # 4.75 cm on from the touch-down
    np.testing.assert_allclose(ankle[10:30, [0, 2]], np.broadcast_to(mean[[0, 2]], (20, 2)), atol=1e-3)
    # On the floor from the first frame of the contact: the foot reached its lock before touch-down.
    np.testing.assert_allclose(ankle[10:30, 1], sole_clearance_m(SMPL)[0], atol=1e-3)
    # The right foot has no lock: it is only kept out of the floor.
    assert (sole_heights_m(locked)[:, 2:] >= -1e-6).all()


def test_lock_at_touch_down_holds_the_touch_down_point() -> None:
    motion = _gliding(0.15, 1.5, 30.0)
    held = lock_feet(motion, _left_down(motion, 10, 30), lock_at_touch_down=True)
    ankle = joint_positions(held)[10:30, ANKLES[0]]
    touch_down = joint_positions(motion)[10, ANKLES[0]]
    np.testing.assert_allclose(ankle[:, [0, 2]], np.broadcast_to(touch_down[[0, 2]], (20, 2)), atol=1e-3)


def test_a_toe_only_contact_holds_the_toe_at_the_mean_of_its_path() -> None:
    """On tiptoe (the heel 6 cm up, the foot pitched down about the ankle), gliding: the toe is held at
    the mean of the toe's path on the floor plane, the foot keeping its own tilt."""
    n = 30
    rotations = np.zeros((n, 24, 3))
    rotations[:, SMPL.index("left_ankle"), 0] = np.deg2rad(35.0)
    motion = _gliding(0.2, n / 30.0, 30.0).replace(rotations=rotations)
    root = motion.root_translation.copy()
    root[:, 1] -= sole_heights_m(motion)[:, 1].min()  # the left toe's sole on the floor
    motion = motion.replace(root_translation=root)
    toe = SMPL.index("left_foot")
    path = joint_positions(motion)[:, toe]
    assert (sole_heights_m(motion)[:, 0] > 0.03).all()  # the heel is up: a toe-only contact
    locked = lock_feet(motion, _left_down(motion, 0, n, toe=True))
    held = joint_positions(locked)[:, toe]
    mean = path.mean(axis=0)
    np.testing.assert_allclose(held[:, [0, 2]], np.broadcast_to(mean[[0, 2]], (n, 2)), atol=1e-3)
    np.testing.assert_allclose(held[:, 1], sole_clearance_m(SMPL)[1], atol=1e-3)
    # The foot's own tilt: the heel stays up, tiptoe stays tiptoe.
    assert (sole_heights_m(locked)[:, 0] > 0.03).all()


def _held_frames(locked: Motion, motion: Motion) -> np.ndarray:
    """The frames in which ``locked``'s left ankle is (within 1 mm, along the glide) at the mean of
    ``motion``'s, where a contact over every frame holds it."""
    mean = joint_positions(motion)[:, ANKLES[0], 2].mean()
    return np.flatnonzero(np.abs(joint_positions(locked)[:, ANKLES[0], 2] - mean) < 1e-3)


def test_a_lock_out_of_reach_lowers_the_pelvis_and_never_straightens_the_knee() -> None:
    motion = _gliding(0.3, 3.0, 30.0)  # 45 cm from the mean at either end: beyond a straight leg
    frames = np.zeros((motion.n_frames, len(CONTACT_POINTS)), dtype=bool)
    frames[:, :4] = True
    locked = lock_feet(motion, ContactTrack(30.0, frames))
    drop = motion.root_translation[:, 1] - locked.root_translation[:, 1]
    # The pelvis lowers where the lock is far, little in the middle where it is under the hip;
    # the drop is smoothed at 2 Hz and grows by at most 6 mm a frame.
    assert drop.max() == pytest.approx(MAX_PELVIS_DROP_M, abs=1e-3) and drop[45] < 0.015
    assert np.abs(np.diff(drop)).max() < 0.0065  # 6.8 mm smoothed at the root's 6 Hz
    assert (drop >= -1e-9).all() and (drop <= MAX_PELVIS_DROP_M + 1e-9).all()
    assert bend_angles_deg(locked, "hip", "knee", "ankle").max() < 175.0
    np.testing.assert_array_equal(locked.root_translation[:, [0, 2]], motion.root_translation[:, [0, 2]])
    # Held while the lowered pelvis lets the leg reach; beyond that the lock gives way and the foot follows.
    held = _held_frames(locked, motion)
    assert held[0] < 15 and 60 < held[-1] < motion.n_frames - 3
    ankle_z = joint_positions(locked)[:, ANKLES[0], 2]
    assert ankle_z[-1] - ankle_z[45] > 0.1


def test_min_pelvis_m_bounds_the_pelvis_drop_and_the_lock_gives_way_sooner() -> None:
    motion = _gliding(0.3, 3.0, 30.0)  # the locks fall out of reach: the pelvis would drop the most
    frames = np.zeros((motion.n_frames, len(CONTACT_POINTS)), dtype=bool)
    frames[:, :4] = True
    contacts = ContactTrack(30.0, frames)
    floor = REST_PELVIS_HEIGHT_M - 0.05
    bounded = lock_feet(motion, contacts, min_pelvis_m=floor)
    pelvis = joint_positions(bounded)[:, 0, 1]
    assert pelvis.min() >= floor - 1e-9 and pelvis.min() == pytest.approx(floor, abs=1e-3)
    assert joint_positions(lock_feet(motion, contacts))[:, 0, 1].min() < floor - 0.05
    assert bend_angles_deg(bounded, "hip", "knee", "ankle").max() < 175.0
    # Less drop, less reach: the foot is held over fewer frames than with the full drop.
    held, full = _held_frames(bounded, motion), _held_frames(lock_feet(motion, contacts), motion)
    assert 30 < held.size < full.size - 20


def _hop(contacts_left_until: int) -> tuple[Motion, ContactTrack]:
    """Standing for 8 frames, then gliding forwards at 1.2 m/s, the body 6 cm up in frames 15 to 18; the
    left foot in contact up to ``contacts_left_until``, the right from frame 19."""
    motion = _gliding(1.2, 1.5, 30.0)
    root = motion.root_translation.copy()
    root[:, 2] = np.maximum(root[:, 2] - root[8, 2], 0.0)
    root[15:19, 1] += 0.06
    frames = np.zeros((motion.n_frames, len(CONTACT_POINTS)), dtype=bool)
    frames[:contacts_left_until, :2] = True
    frames[19:, 2:4] = True
    return motion.replace(root_translation=root), ContactTrack(30.0, frames)


def _flight(motion: Motion) -> np.ndarray:
    """Frames where the contact track detected on ``motion`` has neither foot down."""
    track = detect_contacts(motion).frames
    return np.asarray(~(track[:, :2].any(axis=1) | track[:, 2:4].any(axis=1)))


def test_keep_one_foot_down_never_lets_the_last_held_foot_go() -> None:
    # The left foot is held through the hop (the caller bridged the gap) but its touch-down lock
    # falls out of reach as the body glides on: without keep_one_foot_down it gives way (sliding
    # towards where the dance has it, no faster than MAX_LET_GO_SPEED_M_S) before the right lands.
    motion, contacts = _hop(19)
    plain = joint_positions(lock_feet(motion, contacts, lock_at_touch_down=True))[:19, ANKLES[0], 2]
    assert abs(plain[-1] - joint_positions(motion)[0, ANKLES[0], 2]) > 0.05
    kept = lock_feet(motion, contacts, keep_one_foot_down=True, lock_at_touch_down=True)  # a workout's
    assert not _flight(kept).any()
    # The left foot stays on its lock, at its touch-down point, until the right lands, then lets go
    # of it over the ease: no step of the way back to where the dance has the foot is a jump.
    ankle = joint_positions(kept)[:, ANKLES[0]]
    start = np.broadcast_to(joint_positions(motion)[0, ANKLES[0], [0, 2]], (19, 2))
    np.testing.assert_allclose(ankle[:19, [0, 2]], start, atol=2e-3)
    np.testing.assert_allclose(ankle[:19, 1], sole_clearance_m(SMPL)[0], atol=5e-3)
    steps = np.linalg.norm(np.diff(ankle[18:26], axis=0), axis=1)
    assert steps.max() < 0.3 * steps.sum()
    # The root moves towards the lock it keeps, by a bounded amount, and only where it must:
    # not at all where the locks are within reach.
    moved = np.abs(kept.root_translation[:, [0, 2]] - motion.root_translation[:, [0, 2]])
    assert 0.0 < moved.max() <= MAX_KEEP_SHIFT_M + 1e-9
    slow = _gliding(0.15, 1.0, 30.0)
    within = lock_feet(slow, detect_contacts(slow), keep_one_foot_down=True)
    np.testing.assert_array_equal(within.root_translation[:, [0, 2]], slow.root_translation[:, [0, 2]])


def test_a_foot_sweeping_along_the_floor_swings_clear_of_it() -> None:
    motion = _gliding(2.5, 1.0, 30.0)  # too fast to be a stance
    contacts = detect_contacts(motion)
    assert not contacts.frames.any()
    cleared = lock_feet(motion, contacts)
    assert sole_heights_m(cleared)[3:-3].min() >= SWING_CLEARANCE_M - 1e-3
    assert foot_skate_ratio(joint_positions(cleared), fps=30.0) == 0.0


def test_a_handstand_leaves_the_legs_alone_but_for_the_knees_floor() -> None:
    n = 30
    rotations = np.zeros((n, 24, 3))
    rotations[:, 0] = [0.0, 0.0, np.pi]
    rotations[:, SMPL.index("left_shoulder")] = [0.0, 0.0, np.pi / 2]
    rotations[:, SMPL.index("right_shoulder")] = [0.0, 0.0, -np.pi / 2]
    motion = Motion(30.0, np.zeros((n, 3)), rotations)
    lowest = joint_positions(motion)[:, [SMPL.index("left_hand"), SMPL.index("right_hand")], 1].min()
    root = np.zeros((n, 3))
    root[:, 1] = 0.02 - lowest
    motion = motion.replace(root_translation=root)
    contacts = detect_contacts(motion)
    assert contacts.frames[:, 4:].all() and not contacts.feet.any()
    locked = lock_feet(motion, contacts)
    # No lock: the legs are the motion's, their knees only kept off straight (the rest pose's bend,
    # 5.7 degrees, is under the soft floor's 8).
    softened = soften_straight_knees(motion)
    assert np.abs(softened.rotations - motion.rotations).max() > 1e-3
    np.testing.assert_allclose(locked.rotations, softened.rotations, atol=1e-12)
    np.testing.assert_array_equal(locked.root_translation, motion.root_translation)


def test_contacts_of_another_motion_are_refused() -> None:
    motion = _gliding(0.1, 1.0, 30.0)
    with pytest.raises(ParameterError, match="do not match"):
        lock_feet(motion, ContactTrack(60.0, np.zeros((60, len(CONTACT_POINTS)), dtype=bool)))


def test_a_crouch_too_deep_to_fold_further_is_raised_over_the_floor() -> None:
    n = 30
    rotations = np.zeros((n, 24, 3))
    for side in ("left", "right"):
        rotations[:, SMPL.index(f"{side}_hip"), 0] = np.deg2rad(-75.0)
        rotations[:, SMPL.index(f"{side}_knee"), 0] = np.deg2rad(150.0)  # the IK's deepest bend
        rotations[:, SMPL.index(f"{side}_ankle"), 0] = np.deg2rad(-75.0)
    motion = Motion(30.0, np.zeros((n, 3)), rotations)
    root = np.zeros((n, 3))
    root[:, 1] = -sole_heights_m(motion).min() - 0.02  # both feet 2 cm into the floor
    motion = motion.replace(root_translation=root)
    out = lock_feet(motion, ContactTrack(30.0, np.zeros((n, len(CONTACT_POINTS)), dtype=bool)))
    assert sole_heights_m(out).min() >= -1e-6
    assert count_limit_violations(out) == 0
    np.testing.assert_array_equal(out.root_translation[:, [0, 2]], motion.root_translation[:, [0, 2]])


def test_a_foot_goes_from_one_lock_to_the_next_without_a_jump() -> None:
    motion = _gliding(0.6, 1.0, 30.0)
    frames = np.zeros((motion.n_frames, len(CONTACT_POINTS)), dtype=bool)
    frames[0:10, 0] = frames[14:26, 0] = True  # two left heel contacts, four frames apart
    ankle = joint_positions(lock_feet(motion, ContactTrack(30.0, frames)))[:, ANKLES[0], 2]
    start = joint_positions(motion)[:, ANKLES[0], 2]
    first, second = start[0:10].mean(), start[14:26].mean()  # each lock at its contact's mean
    np.testing.assert_allclose(ankle[0:10], first, atol=1e-3)
    np.testing.assert_allclose(ankle[14:26], second, atol=1e-3)
    steps = np.diff(ankle[9:15])
    # 30 cm between the locks, covered over the gap's five steps, forwards only, none of them a jump.
    assert (steps > -1e-6).all() and steps.max() < 0.45 * (second - first)


def test_a_held_heel_stays_as_bent_as_its_ankle_must_and_its_toe_does_not_sweep() -> None:
    """A bent knee swinging the shin by 5 degrees each way over a heel held for a second: turned flat, the
    foot would need a 30 degree plantar flexion the (narrowed) ankle range does not have, and the clamp
    would turn it with the shin; held as it touched down it stays within the range and keeps still."""
    n, fps = 40, 30.0
    rotations = np.zeros((n, 24, 3))
    knee = SMPL.index("left_knee")
    rotations[:, knee, 0] = np.deg2rad(30.0 + 5.0 * np.sin(np.linspace(0.0, 2.0 * np.pi, n)))
    motion = Motion(fps, np.zeros((n, 3)), rotations)
    root = np.zeros((n, 3))
    root[:, 1] = -sole_heights_m(motion).min()
    motion = motion.replace(root_translation=root)
    ankle_limit = SMPL_JOINT_LIMITS["left_ankle"]
    narrowed = JointLimit(
        ankle_limit.twist_min_rad,
        ankle_limit.twist_max_rad,
        np.deg2rad(-10.0),
        ankle_limit.swing1_max_rad,
        ankle_limit.swing2_min_rad,
        ankle_limit.swing2_max_rad,
        ankle_limit.swing_axis,
    )
    limits = {**SMPL_JOINT_LIMITS, "left_ankle": narrowed}
    frames = np.zeros((n, len(CONTACT_POINTS)), dtype=bool)
    frames[:, 0] = True
    locked = lock_feet(motion, ContactTrack(fps, frames), joint_limits=limits)
    toe = joint_positions(locked)[:, SMPL.index("left_foot")]
    assert np.abs(toe[:, [0, 2]] - toe[0, [0, 2]]).max() < 2e-3
    assert count_limit_violations(locked, limits=limits) == 0


def test_a_lock_the_lowered_pelvis_brings_within_reach_keeps_the_sole_on_the_floor() -> None:
    motion = _gliding(0.3, 2.4, 30.0)  # 36 cm from the locks at either end: the pelvis must drop about 11 cm
    frames = np.zeros((motion.n_frames, len(CONTACT_POINTS)), dtype=bool)
    frames[:, :4] = True
    locked = lock_feet(motion, ContactTrack(30.0, frames))
    lowest = sole_heights_m(locked).reshape(-1, 2, 2).min(axis=2)
    assert np.abs(lowest).max() < 0.01
    ankles = joint_positions(locked)[:, ANKLES][..., [0, 2]]
    np.testing.assert_allclose(ankles, np.broadcast_to(ankles[:1], ankles.shape), atol=5e-3)
    assert bend_angles_deg(locked, "hip", "knee", "ankle").max() < 175.0


@pytest.mark.parametrize(("speed_m_s", "contact_frames"), [(0.6, 90), (0.4, 30), (0.8, 20)])
def test_a_touch_down_lock_let_go_far_from_the_dance_foot_moves_the_foot_at_a_bounded_speed(
    speed_m_s: float, contact_frames: int
) -> None:
    """Gliding on with the left heel held where it touched down: over 90 frames the lock falls out of
    reach and gives way 0.4 m behind the dance's foot; over 20 or 30 it is let go of at lift-off 0.4 m
    behind. Either way the foot goes back to the dance's at no more than the dance's own speed plus
    about :data:`MAX_LET_GO_SPEED_M_S` (the soft reach of a stretched leg adds some); before, a
    give-way or a 0.2 s ease moved it at 3.7 to 12 m/s."""
    motion = _gliding(speed_m_s, 3.0, 30.0)
    locked = lock_feet(
        motion, _left_down(motion, 0, contact_frames), lock_at_touch_down=True, bounded_let_go=True
    )
    ankle, dance = joint_positions(locked)[:, ANKLES[0]], joint_positions(motion)[:, ANKLES[0]]
    assert np.linalg.norm((ankle - dance)[:, [0, 2]], axis=1).max() > 0.35  # let go far from the dance's foot
    np.testing.assert_allclose(ankle[-1, [0, 2]], dance[-1, [0, 2]], atol=1e-3)  # and back on it
    speed = np.linalg.norm(np.diff(ankle, axis=0), axis=1) * motion.fps
    assert speed.max() < speed_m_s + 1.6 * MAX_LET_GO_SPEED_M_S


def test_two_touch_down_locks_too_close_for_the_move_begin_it_before_lift_off() -> None:
    """A touch-down lock left 0.4 m behind the dance's foot and the next contact four frames on: the
    foot goes from the one lock to the other no faster than the dance plus the let-go's speed, the
    move begun inside the first contact; before, over the four frames of the gap at 5.5 m/s."""
    motion = _gliding(0.8, 1.5, 30.0)
    frames = np.zeros((motion.n_frames, len(CONTACT_POINTS)), dtype=bool)
    frames[0:15, 0] = frames[19:40, 0] = True
    ankle = joint_positions(
        lock_feet(motion, ContactTrack(30.0, frames), lock_at_touch_down=True, bounded_let_go=True)
    )
    z = ankle[:, ANKLES[0], 2]
    start = joint_positions(motion)[:, ANKLES[0], 2]
    assert z[0] == pytest.approx(start[0], abs=1e-3) and z[14] - start[0] > 0.2  # on its way before lift-off
    np.testing.assert_allclose(z[19:30], start[19], atol=1e-3)  # held (later it gives way, gliding on)
    assert (np.diff(z[0:20]) * motion.fps).max() < 0.8 + 1.6 * MAX_LET_GO_SPEED_M_S


def test_a_foot_kicked_up_at_lift_off_rises_with_the_dance() -> None:
    # The left foot stands, kicks up in front (the thigh 80 degrees up in 0.2 s) and comes back down to
    # stand again; the right foot stands throughout. Released over its ease, the kicking foot rises as
    # the dance throws it, not held back towards the floor between its two locks.
    fps, n = 30.0, 60
    lift = np.clip((np.arange(n) - 15) / 6.0, 0.0, 1.0) * np.clip((42 - np.arange(n)) / 6.0, 0.0, 1.0)
    rotations = np.zeros((n, 24, 3))
    rotations[:, SMPL.index("left_hip"), 0] = -1.4 * lift
    root = np.zeros((n, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M
    motion = Motion(fps, root, rotations)
    frames = np.zeros((n, len(CONTACT_POINTS)), dtype=bool)
    frames[:16, 0:2] = frames[42:, 0:2] = True
    frames[:, 2:4] = True
    locked = lock_feet(motion, ContactTrack(fps, frames))
    own, held = (joint_positions(m)[:, ANKLES[0], 1] for m in (motion, locked))
    rising = slice(17, 22)  # the release's frames, the dance's ankle going up 4 to 40 cm
    assert (own[rising] - own[0] > 0.04).all()
    # No more than 2 cm behind (it lagged 9 cm held to the lock-to-lock way); it may be higher, the
    # swing clearance lifting a fast foot.
    assert (held[rising] >= own[rising] - 0.02).all() and (held[rising] <= own[rising] + 0.05).all()
    np.testing.assert_allclose(held[:16], held[0], atol=1e-3)  # held still before
