"""The workout planner on the shipped library: 8-counts, teaching blocks, safe moves, the cue sheet."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from choreo.audio.structure import MusicStructure
from choreo.choreography.library import PhraseLibrary, shipped_library
from choreo.contracts.options import RenderOptions
from choreo.contracts.plan import Plan
from choreo.contracts.routine import parse_profile
from choreo.errors import ParameterError
from choreo.motion.motion import Motion
from choreo.workout.curves import REST, WORK, target_intensity
from choreo.workout.planner import _block_sizes, plan_workout
from choreo.workout.safety import keep_a_foot_down, measure_safety, rule_frames, screen_phrases


def _music(bpm: float = 124.0, seconds: float = 180.0, beats_per_bar: int = 4) -> MusicStructure:
    beats = np.arange(0.0, seconds - 0.3, 60.0 / bpm)
    bars = beats[::beats_per_bar]
    n = bars.size
    labels = (np.arange(n) // 16) % 2
    return MusicStructure(
        beat_times=beats,
        downbeat_times=bars,
        beats_per_bar=beats_per_bar,
        bar_starts=bars,
        bar_energy=np.linspace(0.2, 0.9, n),
        section_labels=labels,
        steady=np.ones(n, dtype=bool),
        onset_times=beats,
        tempo_bpm=bpm,
        duration_s=seconds,
    )


@pytest.fixture(scope="module")
def library() -> PhraseLibrary:
    return shipped_library()


@pytest.fixture(scope="module")
def plan(library: PhraseLibrary) -> Plan:
    return plan_workout(library, _music(), style="salsa", profile="pyramid", impact="low", seed=3)


def test_profiles_parse_and_bad_ones_are_refused() -> None:
    assert parse_profile("Steady") == ("steady", ())
    assert parse_profile("2,4,9") == ("custom", (2.0, 4.0, 9.0))
    for bad in ("zumba", "0,5", "3,11", ""):
        with pytest.raises(ParameterError):
            parse_profile(bad)
    assert RenderOptions.parse(routine="3, 5").routine == "3,5"
    with pytest.raises(ParameterError, match="impact"):
        RenderOptions.parse(routine="steady", impact="medium")


def test_curves_warm_up_peak_and_cool_down() -> None:
    t = np.linspace(0, 600, 601)
    for profile in ("steady", "pyramid", "intervals"):
        y = target_intensity(profile, t, 600.0)
        assert y[0] < y[200] and y[-1] < y[200], profile
        assert ((y >= 0) & (y <= 1)).all()
    pyramid = target_intensity("pyramid", t, 600.0)
    assert abs(int(np.argmax(pyramid)) - 300) < 40
    intervals = target_intensity("intervals", t, 600.0, switches_s=np.array([150.0, 250.0]))
    assert intervals[120] == WORK and intervals[200] == REST and intervals[300] == WORK
    custom = target_intensity("custom", np.array([30.0, 90.0]), 120.0, curve=(1.0, 10.0))
    assert custom.tolist() == [0.0, 1.0]


def test_warm_up_and_cool_down_are_a_class_s_not_an_8_count() -> None:
    # A fifth of the song to warm up in and 15 % to cool down in, rising and falling all the way;
    # a short song still gets a block of four 8-counts (16 s) to warm up in, a long one at most 5 min.
    for duration, warm, cool in ((60.0, 16.0, 12.0), (600.0, 120.0, 90.0), (3000.0, 300.0, 180.0)):
        t = np.linspace(0.0, duration, 2001)
        y = target_intensity("steady", t, duration)
        up, down = t < warm, t > duration - cool
        assert (np.diff(y[up]) > 0).all() and (np.diff(y[down]) < 0).all(), duration
        assert np.ptp(y[~up & ~down]) == 0.0, duration


def test_a_workout_is_taught_in_repeated_and_mirrored_8_counts(plan: Plan, library: PhraseLibrary) -> None:
    routine = plan.routine
    assert routine is not None and routine.profile == "pyramid"
    counted = [c for c in routine.cues if c.index > 0]
    assert len(counted) == 180 * 124 / 60 // 8
    assert [c.index for c in counted] == list(range(1, len(counted) + 1))
    for cue in counted:
        seg = plan.segments[cue.segment]
        assert seg.n_bars == 2 and seg.phrase_beats == 8 and len(seg.song_beats_s) == 9
    changes = [c.index for prev, c in zip(counted, counted[1:], strict=False) if c.move != prev.move]
    starts = np.cumsum([1, *_block_sizes(len(counted))])
    teaching = [i for i in changes if counted[i - 1].block == "teach" and counted[i - 2].block == "teach"]
    assert teaching and set(teaching) <= set(starts.tolist())
    assert len({c.move for c in counted}) >= 6
    for cue in counted:
        if cue.block == "teach" and cue.side == "left":
            right = next(c for c in counted if c.move == cue.move and c.side == "right")
            a, b = plan.segments[right.segment].phrase, plan.segments[cue.segment].phrase
            assert library.mirror_phrase[a] == b
        assert 1 <= cue.repeat <= 4
    names: dict[int, str] = {}
    for cue in counted:
        assert names.setdefault(cue.move, cue.name) == cue.name
    assert len(set(names.values())) == len(names), "different moves got the same name"
    assert Plan.from_dict(plan.to_dict()) == plan


def test_every_phrase_of_a_workout_passes_the_rules(plan: Plan, library: PhraseLibrary) -> None:
    phrases = np.array([s.phrase for s in plan.segments])
    assert all(not r for r in screen_phrases(library, phrases, impact="low"))
    assert plan.routine is not None and plan.routine.excluded["flight"] > 0
    assert all(entry["reasons"] for entry in plan.routine.excluded_phrases)


def test_the_guide_s_energy_follows_the_target_and_the_arm_amplitude_helps(
    plan: Plan, library: PhraseLibrary
) -> None:
    from dataclasses import replace

    from choreo.choreography.guide import build_guide
    from choreo.motion.kinematics import joint_positions
    from choreo.workout.planner import ARM_MIN
    from choreo.workout.sheet import cue_energy

    routine = plan.routine
    assert routine is not None
    low, high = routine.target_energy_m2_s2
    assert 0 < low < high
    amplitudes = [s.arm_amplitude for s in plan.segments]
    assert all(ARM_MIN <= a <= 1.0 for a in amplitudes) and min(amplitudes) < 0.9
    counted = [c for c in routine.cues if c.index > 0]
    targets = [c.target for c in counted]

    def correlation(performed: Plan) -> float:
        guide = build_guide(library, performed, int(np.ceil(performed.duration_s * 30)), 30)
        positions = joint_positions(Motion.from_array(guide.poses.astype(np.float64), fps=30))
        energy = cue_energy(positions, 30.0, [(c.start_s, c.end_s) for c in counted])
        return float(np.corrcoef(energy, targets)[0, 1])

    full_arms = replace(plan, segments=tuple(replace(s, arm_amplitude=1.0) for s in plan.segments))
    with_amplitude, without = correlation(plan), correlation(full_arms)
    # measured on the guide (the blend's dance): 0.83 against 0.80 with every arm at full amplitude
    assert with_amplitude > 0.75 and with_amplitude > without


def test_scale_arms_moves_the_arms_less_and_nothing_else(library: PhraseLibrary) -> None:
    from choreo.choreography.guide import ARM_JOINTS, scale_arms
    from choreo.metrics.freeze import motion_energy
    from choreo.motion.kinematics import joint_positions
    from choreo.motion.rotations import quat_to_aa

    first, last = library.phrase_frames
    quats, root = library.frames_quats(int(first[0]), int(last[0]))
    quats = quats.astype(np.float64)
    assert scale_arms(quats, 1.0) is quats
    half = scale_arms(quats, 0.5)
    others = [j for j in range(24) if j not in ARM_JOINTS]
    assert np.allclose(half[:, others], quats[:, others])
    assert not np.allclose(half[:, list(ARM_JOINTS)], quats[:, list(ARM_JOINTS)])

    def energy(q: np.ndarray) -> float:
        motion = Motion(fps=library.fps, root_translation=root, rotations=quat_to_aa(q))
        return motion_energy(joint_positions(motion), fps=library.fps)

    assert energy(scale_arms(quats, 0.0)) < energy(half) < energy(quats)


def test_a_move_of_a_taken_name_is_told_apart_by_its_largest_difference() -> None:
    from choreo.workout.moves import distinguish

    base = {
        "steps": 4.0,
        "side_range_m": 0.4,
        "forward_range_m": 0.1,
        "swing_m": 0.4,
        "wide_m": 0.3,
        "pelvis_m": 0.9,
        "knee_over_pelvis_m": -0.4,
    }
    assert distinguish(base, []) == ""
    assert distinguish(base | {"side_range_m": 0.8}, [base]) == "wide"
    assert distinguish(base | {"swing_m": 0.1}, [base]) == "small arms"
    assert distinguish(base | {"steps": 8.0}, [base, base | {"steps": 7.0}]) == "quick steps"


def test_music_in_three_is_refused(library: PhraseLibrary) -> None:
    with pytest.raises(ParameterError, match="4/4"):
        plan_workout(library, _music(beats_per_bar=3), style="salsa", profile="steady")


def test_rules_catch_a_jump_a_headstand_and_keep_a_foot_down_removes_a_small_hop() -> None:
    rest = Motion(
        fps=30, root_translation=np.tile([0.0, 0.94, 0.0], (30, 1)), rotations=np.zeros((30, 24, 3))
    )
    assert measure_safety(rest).flight_frames == 0
    hop = rest.root_translation.copy()
    hop[10:15, 1] += 0.04
    hopping = Motion(fps=30, root_translation=hop, rotations=rest.rotations)
    assert measure_safety(hopping).flight_frames == 5
    assert measure_safety(keep_a_foot_down(hopping)).flight_frames == 0
    jump = rest.root_translation.copy()
    jump[10:16, 1] += 0.3
    report = measure_safety(Motion(fps=30, root_translation=jump, rotations=rest.rotations))
    assert report.contact_flight_frames >= 4 and measure_safety(rest).contact_flight_frames == 0
    upside = rest.rotations.copy()
    upside[:, 0] = [np.pi, 0.0, 0.0]
    headstand = Motion(fps=30, root_translation=np.tile([0.0, 0.9, 0.0], (30, 1)), rotations=upside)
    from choreo.motion.kinematics import joint_positions

    broken = rule_frames(joint_positions(headstand), 30)
    assert broken["head below hips"].all() and broken["inversion"].all()


def test_the_sheet_measures_the_performed_motion(plan: Plan, library: PhraseLibrary) -> None:
    from choreo.choreography.guide import build_guide
    from choreo.models.energy import energy_calibration, kcal_per_min
    from choreo.postprocess import postprocess
    from choreo.workout.sheet import routine_sheet

    guide = build_guide(library, plan, int(np.ceil(plan.duration_s * 30)), 30)
    motion = keep_a_foot_down(postprocess(Motion.from_array(guide.poses.astype(np.float64), fps=30)))
    sheet = routine_sheet(motion, plan, body_mass_kg=80.0)
    assert plan.routine is not None and len(sheet.cues) == len(plan.routine.cues)
    assert all(c.energy_m2_s2 > 0 and c.level in ("light", "moderate", "vigorous") for c in sheet.cues)
    assert sheet.met > energy_calibration().rest_met
    assert sheet.kcal_per_min == pytest.approx(kcal_per_min(sheet.met, 80.0), abs=0.02)
    assert sheet.safety["flight_frames"] == 0 and sheet.safety["head_below_hips_frames"] == 0
    assert sheet.correlation_to_target > 0.5
    assert sheet.met_rms_error_to_target is not None and 0 < sheet.met_rms_error_to_target < 2.0
    with pytest.raises(ParameterError, match="body mass"):
        kcal_per_min(5.0, 5.0)


def test_hold_a_foot_down_bridges_a_stance_gap_with_the_foot_down_before_it() -> None:
    from choreo.contracts.contacts import ContactTrack
    from choreo.workout.safety import contact_flight, hold_a_foot_down

    frames = np.zeros((10, 6), dtype=bool)
    frames[:4, 0:2] = True  # left foot down, then a gap of three frames
    frames[7:, 2:4] = True  # right foot down
    held = hold_a_foot_down(ContactTrack(30.0, frames))
    assert contact_flight(ContactTrack(30.0, frames)).sum() == 3
    assert not contact_flight(held).any()
    assert held.frames[4:7, 0:2].all() and not held.frames[4:7, 2:4].any()
    assert (held.frames[:4] == frames[:4]).all() and (held.frames[7:] == frames[7:]).all()
    empty = ContactTrack(30.0, np.zeros((5, 6), dtype=bool))
    assert hold_a_foot_down(empty) is empty


def _lurch() -> Motion:
    """Standing on bent knees, gliding forwards at 0.1 m/s, then 20 cm forwards over two frames (19
    to 21): both feet move faster than a stance for those frames, so the contact track has neither
    foot down there though no foot leaves the floor."""
    from choreo.motion.contacts import sole_clearance_m
    from choreo.motion.kinematics import joint_positions
    from choreo.motion.skeleton import SMPL

    n = 40
    rotations = np.zeros((n, 24, 3))
    for side in ("left", "right"):
        rotations[:, SMPL.index(f"{side}_hip")] = [-0.4, 0.0, 0.0]
        rotations[:, SMPL.index(f"{side}_knee")] = [0.8, 0.0, 0.0]
        rotations[:, SMPL.index(f"{side}_ankle")] = [-0.4, 0.0, 0.0]
    root = np.zeros((n, 3))
    root[:, 2] = 0.1 * np.arange(n) / 30 + np.concatenate([np.zeros(20), [0.1], np.full(n - 21, 0.2)])
    ankle = joint_positions(Motion(30.0, root, rotations))[0, SMPL.index("left_ankle"), 1]
    root[:, 1] = sole_clearance_m(SMPL)[0] - ankle
    return Motion(30.0, root, rotations)


def test_plant_a_foot_leaves_no_frame_without_a_foot_down_in_the_motion_s_own_track() -> None:
    from choreo.motion.kinematics import joint_positions
    from choreo.motion.skeleton import SMPL
    from choreo.postprocess.contacts import detect_contacts
    from choreo.postprocess.joint_limits import count_limit_violations
    from choreo.workout.safety import contact_flight, plant_a_foot

    motion = _lurch()
    assert contact_flight(detect_contacts(motion)).sum() == 2
    planted = plant_a_foot(motion)
    assert not contact_flight(detect_contacts(planted)).any()
    # One foot holds still through the lurch, on the floor; only the legs move, and only near it.
    ankles = joint_positions(planted)[:, [SMPL.index("left_ankle"), SMPL.index("right_ankle")]]
    held = np.ptp(ankles[19:23, :, 2], axis=0).min()
    assert held < 1e-3 and np.abs(ankles[19:23, :, 1] - ankles[0, :, 1]).max() < 1e-3
    np.testing.assert_array_equal(planted.root_translation, motion.root_translation)
    changed = np.flatnonzero(np.abs(planted.rotations - motion.rotations).max(axis=(1, 2)) > 1e-9)
    assert changed.min() >= 15 and changed.max() <= 27
    assert count_limit_violations(planted) == 0
    # A motion whose track already has a foot down everywhere is returned as it is.
    steady = Motion(30.0, motion.root_translation[:19], motion.rotations[:19])
    assert plant_a_foot(steady) is steady


def test_low_impact_dances_no_move_faster_than_the_tempo_range(library: PhraseLibrary) -> None:
    # A move's contacts are screened at its own pace; danced much faster, its steps become leaps.
    # At 170 BPM a high-impact routine takes moves at up to twice their pace; a low-impact one does not.
    from choreo.choreography.planner import MIN_STRETCH

    def quick(impact: str) -> int:
        plan = plan_workout(
            library, _music(bpm=170.0, seconds=240.0), style="salsa", profile="intervals", impact=impact
        )
        return sum(s.stretch < MIN_STRETCH for s in plan.segments if not s.free)

    assert quick("high") > 0 and quick("low") == 0


def test_finish_low_impact_plants_what_the_clamp_and_the_lowering_leave_in_flight() -> None:
    """40 frames of a finished low-impact routine before its last passes (a foot let go of at a
    bounded speed slides along the floor while the other comes down: neither counts as down). One
    round of planting, clamping and lowering left 4 such frames in the routine; the rounds leave none."""
    from choreo.postprocess.contacts import detect_contacts
    from choreo.postprocess.joint_limits import clamp_joint_limits
    from choreo.workout.safety import contact_flight, finish_low_impact, plant_a_foot

    data = np.load(Path(__file__).parent / "data" / "let_go_lurch.npz")
    motion = Motion(float(data["fps"]), data["root"], data["rotations"])
    assert contact_flight(detect_contacts(motion)).sum() == 3
    once = keep_a_foot_down(clamp_joint_limits(plant_a_foot(motion)))
    assert contact_flight(detect_contacts(once)).any()
    report = measure_safety(finish_low_impact(motion))
    assert report.contact_flight_frames == 0 and report.flight_frames == 0 and report.limit_violations == 0
