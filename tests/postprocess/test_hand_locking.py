"""Hands locked where they touched down: a handstand that slides must stop, a plant out of reach lets go."""

from __future__ import annotations

import numpy as np
import pytest
from limb_checks import bend_angles_deg

from choreo.contracts.contacts import CONTACT_POINTS, ContactTrack
from choreo.errors import ParameterError
from choreo.motion import SMPL, Motion, joint_positions
from choreo.postprocess.contacts import detect_contacts
from choreo.postprocess.hand_locking import lock_hands
from choreo.postprocess.joint_limits import SMPL_JOINT_LIMITS, count_limit_violations

HANDS = [SMPL.index("left_hand"), SMPL.index("right_hand")]
ELBOWS = {name: SMPL_JOINT_LIMITS[name] for name in ("left_elbow", "right_elbow")}
ARM_NAMES = [f"{s}_{j}" for s in ("left", "right") for j in ("shoulder", "elbow", "wrist")]
ARMS = {name: SMPL_JOINT_LIMITS[name] for name in ARM_NAMES}


def _handstand(speed_m_s: float, seconds: float, fps: float) -> Motion:
    """Upside down on slightly bent arms, hands 1 cm over the floor, the body gliding along +Z."""
    n = int(round(seconds * fps))
    rotations = np.zeros((n, 24, 3))
    rotations[:, 0] = [0.0, 0.0, np.pi]
    rotations[:, SMPL.index("left_shoulder")] = [0.0, 0.0, np.pi / 2]
    rotations[:, SMPL.index("right_shoulder")] = [0.0, 0.0, -np.pi / 2]
    rotations[:, SMPL.index("left_elbow")] = [0.0, -0.8, 0.0]  # bent the way the elbow bends
    rotations[:, SMPL.index("right_elbow")] = [0.0, 0.8, 0.0]
    motion = Motion(fps, np.zeros((n, 3)), rotations)
    root = np.zeros((n, 3))
    root[:, 1] = 0.01 - joint_positions(motion)[:, HANDS, 1].min()
    root[:, 2] = speed_m_s * np.arange(n) / fps
    return motion.replace(root_translation=root)


@pytest.mark.parametrize("fps", [24.0, 30.0, 60.0])
def test_a_sliding_handstand_stops_at_every_frame_rate(fps: float) -> None:
    motion = _handstand(0.1, 0.6, fps)
    contacts = detect_contacts(motion)
    assert contacts.frames[:, 4:].all() and not contacts.feet.any()
    before = joint_positions(motion)[:, HANDS]
    assert np.ptp(before[:, :, 2], axis=0).min() > 0.05  # unlocked, the hands slide with the body
    locked = lock_hands(motion, contacts)
    hands = joint_positions(locked)[:, HANDS]
    np.testing.assert_allclose(hands, np.broadcast_to(before[0], hands.shape), atol=1e-3)
    # the body still goes where it went, on its legs as they were; the elbows bend as elbows do
    np.testing.assert_array_equal(locked.root_translation, motion.root_translation)
    legs = [SMPL.index(f"{s}_{j}") for s in ("left", "right") for j in ("hip", "knee", "ankle")]
    np.testing.assert_array_equal(locked.rotations[:, legs], motion.rotations[:, legs])
    assert count_limit_violations(locked, limits=ELBOWS) == 0


def test_a_held_hand_whose_wrist_is_bent_near_its_limit_keeps_the_arm_within_its_limits() -> None:
    # The wrist keeps its world rotation while the forearm swings under it as the body
    # glides on: bent 74 degrees back at the start, unclamped IK takes it past its 80.
    motion = _handstand(0.3, 0.6, 30.0)
    rotations = motion.rotations.copy()
    rotations[:, SMPL.index("left_wrist")] = [0.0, -1.3, 0.0]
    rotations[:, SMPL.index("right_wrist")] = [0.0, 1.3, 0.0]
    motion = motion.replace(rotations=rotations)
    root = motion.root_translation.copy()
    root[:, 1] += 0.01 - joint_positions(motion)[:, HANDS, 1].min()
    motion = motion.replace(root_translation=root)
    assert count_limit_violations(motion, limits=ARMS) == 0
    contacts = detect_contacts(motion)
    assert contacts.frames[:, 4:].all()
    locked = lock_hands(motion, contacts)
    assert count_limit_violations(locked, limits=ARMS) == 0
    before = joint_positions(motion)[:, HANDS]
    assert np.ptp(before[:, :, 2], axis=0).min() > 0.15  # unlocked, the hands slide 17 cm
    hands = joint_positions(locked)[:, HANDS]
    assert np.abs(hands - before[0]).max() < 0.015  # the clamped wrist costs the hold about a centimetre


def test_a_hand_plant_out_of_reach_lets_go_before_the_elbow_goes_straight() -> None:
    motion = _handstand(1.0, 1.0, 30.0)  # 1 m in a second: no arm holds a hand there
    frames = np.zeros((motion.n_frames, len(CONTACT_POINTS)), dtype=bool)
    frames[:, 4:] = True
    locked = lock_hands(motion, ContactTrack(30.0, frames))
    hands, free = joint_positions(locked)[:, HANDS], joint_positions(motion)[:, HANDS]
    assert np.abs(hands[:3] - hands[0]).max() < 5e-3  # held while it can be
    np.testing.assert_allclose(hands[-5:], free[-5:], atol=1e-3)  # then let go
    assert bend_angles_deg(locked, "shoulder", "elbow", "wrist").max() < 176.0
    assert count_limit_violations(locked, limits=ELBOWS) == 0


def test_a_dance_without_hands_down_keeps_its_arms() -> None:
    motion = _handstand(0.1, 0.5, 30.0)
    none = ContactTrack(30.0, np.zeros((motion.n_frames, len(CONTACT_POINTS)), dtype=bool))
    locked = lock_hands(motion, none)
    np.testing.assert_array_equal(locked.rotations, motion.rotations)
    with pytest.raises(ParameterError, match="do not match"):
        lock_hands(motion, ContactTrack(25.0, none.frames))
