"""Contacts of heels, toes and hands on constructed motions whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.contracts.contacts import CONTACT_POINTS, ContactTrack
from choreo.errors import ParameterError
from choreo.motion import REST_PELVIS_HEIGHT_M, SMPL, Motion, joint_positions
from choreo.motion.skeleton import Skeleton
from choreo.postprocess.contacts import FOOT_RULE, MIN_FLIGHT_S, body_scale, detect_contacts

FEET = slice(0, 4)
HANDS = slice(4, 6)


def _rest(root: np.ndarray, fps: float = 30.0) -> Motion:
    return Motion(fps, root, np.zeros((root.shape[0], 24, 3)))


def _standing_root(n: int) -> np.ndarray:
    root = np.zeros((n, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M
    return root


def test_standing_feet_are_down_and_hands_are_not() -> None:
    track = detect_contacts(_rest(_standing_root(40)))
    assert track.frames[:, FEET].all() and not track.frames[:, HANDS].any()
    assert track.feet.all()


@pytest.mark.parametrize("fps", [24.0, 25.0, 30.0, 50.0, 60.0])
def test_a_jump_lifts_every_foot_at_every_frame_rate(fps: float) -> None:
    # Stand 1 s, jump 0.5 s (35 cm apex), stand 1 s: the feet are up from take-off to landing.
    t = np.arange(int(round(2.5 * fps))) / fps
    root = _standing_root(t.size)
    flying = (t >= 1.0) & (t < 1.5)
    root[:, 1] += np.where(flying, 1.4 * 4 * (t - 1.0) * (1.5 - t), 0.0)
    track = detect_contacts(_rest(root, fps))
    for name, spans in track.intervals_s().items():
        if name.endswith("hand"):
            assert spans == []
            continue
        assert len(spans) == 2, name
        (a0, a1), (b0, b1) = spans
        assert a0 == 0.0 and b1 == pytest.approx(t.size / fps)
        # Down while the sole is under the release height: within 0.1 s of take-off and landing.
        assert 1.0 <= a1 <= 1.0 + 0.1 and 1.5 - 0.1 <= b0 <= 1.5 + 1.0 / fps, (name, spans)


def test_hysteresis_keeps_a_trembling_foot_down() -> None:
    root = _standing_root(60)
    # After standing, trembling between the touch-down and the release height: stays down.
    middle = 0.5 * (FOOT_RULE.touch_m + FOOT_RULE.release_m)
    root[40:, 1] += middle + 0.01 * np.sin(np.arange(20))
    assert detect_contacts(_rest(root)).frames[:, [1, 3]].all()  # the toes


def test_a_sliding_foot_is_not_in_contact_and_a_slow_one_is() -> None:
    fast = _standing_root(60)
    fast[:, 2] = 2.5 * np.arange(60) / 30.0
    slow = _standing_root(60)
    slow[:, 2] = 0.1 * np.arange(60) / 30.0
    assert not detect_contacts(_rest(fast)).frames.any()
    assert detect_contacts(_rest(slow)).frames[:, FEET].all()


def test_a_handstand_puts_the_hands_down_and_the_feet_up() -> None:
    n = 30
    rotations = np.zeros((n, 24, 3))
    rotations[:, 0] = [0.0, 0.0, np.pi]  # upside down
    rotations[:, SMPL.index("left_shoulder")] = [0.0, 0.0, np.pi / 2]  # arms along the body, over the head
    rotations[:, SMPL.index("right_shoulder")] = [0.0, 0.0, -np.pi / 2]
    motion = Motion(30.0, np.zeros((n, 3)), rotations)
    hands = [SMPL.index("left_hand"), SMPL.index("right_hand")]
    lowest = joint_positions(motion)[:, hands, 1].min()
    root = np.zeros((n, 3))
    root[:, 1] = 0.02 - lowest
    track = detect_contacts(motion.replace(root_translation=root))
    assert track.frames[:, HANDS].all() and not track.frames[:, FEET].any()


def test_thresholds_scale_with_the_body() -> None:
    half = Skeleton(SMPL.names, SMPL.parents, SMPL.offsets * 0.5)
    assert body_scale(half) == pytest.approx(0.5) and body_scale(SMPL) == pytest.approx(1.0)


def test_the_track_resamples_by_time_and_lists_intervals_in_seconds() -> None:
    frames = np.zeros((30, len(CONTACT_POINTS)), dtype=bool)
    frames[6:15, 0] = True
    track = ContactTrack(30.0, frames)
    assert track.intervals_s()["left_heel"] == [(0.2, 0.5)]
    at60 = track.resampled(60.0, 60)
    assert at60.n_frames == 60 and at60.intervals_s()["left_heel"] == [(0.2, 0.5)]
    assert track.share()["left_heel"] == pytest.approx(0.3)
    with pytest.raises(ParameterError, match=r"\[frames, 6\]"):
        ContactTrack(30.0, np.zeros((3, 4), dtype=bool))


def test_the_library_bits_hold_a_stance_too_fast_for_detection_but_never_a_lifted_foot() -> None:
    # Standing and gliding at 1.5 m/s: over the touch-down speed, so detection alone finds no contact.
    n = 60
    root = _standing_root(n)
    root[:, 2] = 1.5 * np.arange(n) / 30.0
    root[40:, 1] += 0.2  # and from frame 40 the whole body 20 cm up: no foot on the floor
    motion = _rest(root)
    assert not detect_contacts(motion).frames.any()
    # The source phrase had the left foot planted in frames 10 to 50, the right never.
    planted = np.zeros((n, 2), dtype=bool)
    planted[10:50, 0] = True
    track = detect_contacts(motion, planted=planted)
    left = track.frames[:, 0:2]
    assert left[10:40].all() and not left[:10].any() and not left[40:].any()
    assert not track.frames[:, 2:].any()


def test_planted_bits_of_another_length_are_refused() -> None:
    with pytest.raises(ParameterError, match="planted feet"):
        detect_contacts(_rest(_standing_root(20)), planted=np.zeros((19, 2), dtype=bool))


@pytest.mark.parametrize("fps", [24.0, 30.0, 60.0])
def test_nothing_down_for_a_tenth_of_a_second_is_a_weight_shift_and_longer_is_a_flight(fps: float) -> None:
    def frames_with_no_foot_down(seconds_up: float) -> int:
        """Standing 1 s with the body lifted 20 cm (every sole over the release height) midway."""
        n = int(round(fps))
        root = _standing_root(n)
        root[n // 2 : n // 2 + int(round(seconds_up * fps)), 1] += 0.2
        strict, bridged = (detect_contacts(_rest(root, fps), bridge_flights=b) for b in (False, True))
        assert np.sum(~strict.feet.any(axis=1)) == int(round(seconds_up * fps))
        return int(np.sum(~bridged.feet.any(axis=1)))

    assert frames_with_no_foot_down(MIN_FLIGHT_S) == 0
    assert frames_with_no_foot_down(2 * MIN_FLIGHT_S) == int(round(2 * MIN_FLIGHT_S * fps))
