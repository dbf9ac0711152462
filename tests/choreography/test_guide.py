"""The guide and the blend synthesizer: beats on beats, smooth junctions, the runner seam."""

from __future__ import annotations

import numpy as np
import pytest

import choreo.choreography.guide as guide_module
from choreo.choreography.blend import BlendRunner
from choreo.choreography.guide import build_guide, segment_warp
from choreo.choreography.inertialize import (
    decay,
    hold_planted_feet,
    inertialize,
    planted_weights,
    window_frames,
)
from choreo.choreography.library import LIBRARY_FPS, PhraseLibrary, shipped_library
from choreo.choreography.planner import plan_dance
from choreo.choreography.warp import AIRBORNE_STRETCH
from choreo.errors import EngineError
from choreo.metrics.foot_skate import skating_frames
from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_quat, quat_to_aa
from choreo.motion.skeleton import SMPL
from tests.choreography.test_planner import steady_song

FPS = 30


@pytest.fixture(scope="module")
def library() -> PhraseLibrary:
    return shipped_library()


def test_decay_starts_at_the_offset_with_its_velocity_and_dies_out() -> None:
    x0, v0 = np.array([0.3, -0.2]), np.array([1.0, 0.5])
    t = np.array([0.0, 1e-6, 2.0])
    out = decay(x0, v0, t)
    np.testing.assert_allclose(out[0], x0)
    np.testing.assert_allclose((out[1] - out[0]) / 1e-6, v0, rtol=1e-3)
    assert np.abs(out[2]).max() < 1e-3


def test_inertialize_leaves_a_seamless_continuation_alone(rng: np.random.Generator) -> None:
    rot = np.cumsum(rng.normal(0, 0.01, (20, 24, 3)), axis=0)
    root = np.cumsum(rng.normal(0, 0.01, (20, 3)), axis=0)
    # the previous phrase's last two frames are exactly where the new one starts, moving the same way
    prev_rot, prev_root = 2 * rot[:1] - rot[1:2], 2 * root[:1] - root[1:2]
    quats = aa_to_quat(rot)
    prev = aa_to_quat(np.concatenate([prev_rot, rot[:1]]))
    out_q, out_root = inertialize(quats, root, prev, np.concatenate([prev_root, root[:1]]), FPS)
    np.testing.assert_allclose(out_root, root, atol=1e-3)
    np.testing.assert_allclose(quat_to_aa(out_q), rot, atol=5e-3)


def test_inertialize_starts_where_the_old_phrase_was_going_and_fades_out(rng: np.random.Generator) -> None:
    quats = aa_to_quat(np.cumsum(rng.normal(0, 0.01, (60, 24, 3)), axis=0))
    root = np.zeros((60, 3))
    prev = aa_to_quat(rng.normal(0, 0.3, (2, 24, 3)))
    prev_root = np.array([[0.1, 0.9, 0.0], [0.12, 0.9, 0.0]])
    out_q, out_root = inertialize(quats, root, prev, prev_root, FPS)
    same = np.abs(np.sum(out_q[0] * prev[1], axis=-1))
    np.testing.assert_allclose(same, 1.0, atol=1e-9)
    np.testing.assert_allclose(out_root[0], prev_root[1], atol=1e-12)
    np.testing.assert_allclose(np.abs(np.sum(out_q[-1] * quats[-1], axis=-1)), 1.0, atol=1e-6)


def test_the_first_phrase_hits_its_song_beats_with_its_own_key_poses(library: PhraseLibrary) -> None:
    song = steady_song(20.0, 120.0)  # a beat every 15 frames
    plan = plan_dance(library, song, style="salsa", seed=0)
    guide = build_guide(library, plan, 20 * FPS, FPS)
    first = plan.segments[0]
    key = int(library.phrase_key[first.phrase])
    n = int(library.phrase_beats[first.phrase])
    ratio = first.beat_ratio
    source = library.frames_motion(
        int(library.key_frame[key]), int(library.key_frame[key + n]), mirrored=first.mirrored
    )
    pinned = segment_warp(library, first).song_s[:-1]  # its start and the beats the warp pins
    checked = 0
    for i, t in enumerate(first.song_beats_s[:-1]):
        if (i * ratio) % 1 or np.min(np.abs(pinned - t)) > 1e-9:
            continue
        checked += 1
        song_frame = int(round(t * FPS))
        source_frame = int(library.key_frame[key + int(i * ratio)] - library.key_frame[key])
        np.testing.assert_allclose(
            guide.poses[song_frame, 3:72].reshape(23, 3), source.rotations[source_frame, 1:], atol=1e-4
        )
    assert checked >= 2  # the start and at least one beat inside


def test_the_guide_carries_the_source_phrases_feet_frame_by_frame(library: PhraseLibrary) -> None:
    song = steady_song(20.0, 120.0)
    plan = plan_dance(library, song, style="salsa", seed=0)
    guide = build_guide(library, plan, 20 * FPS, FPS)
    assert guide.feet.shape == (20 * FPS, 2) and guide.feet.dtype == bool
    first = plan.segments[0]
    key = int(library.phrase_key[first.phrase])
    start = int(library.key_frame[key])
    frames = np.arange(int(np.ceil(first.end_s * FPS - 1e-9)))
    source = start + np.rint(segment_warp(library, first).phrase_time(frames / FPS) * LIBRARY_FPS).astype(int)
    bits = library.contacts[source]
    left, right = (bits & 1) != 0, (bits & 2) != 0
    expected = np.stack([right, left] if first.mirrored else [left, right], axis=1)
    np.testing.assert_array_equal(guide.feet[frames], expected)
    assert guide.feet.any() and not guide.feet.all()  # the bits follow the steps, not a constant


def test_junctions_are_as_smooth_as_the_phrases(library: PhraseLibrary) -> None:
    song = steady_song(90.0, 116.0)
    plan = plan_dance(library, song, style="modern", seed=1)
    guide = build_guide(library, plan, 90 * FPS, FPS)
    pos = joint_positions(Motion.from_array(guide.poses.astype(np.float64), FPS))
    speed = np.linalg.norm(np.diff(pos, axis=0), axis=-1).max(axis=1) * FPS
    junction_frames = np.ceil(plan.junctions_s * FPS).astype(int)
    near = np.zeros(speed.size, dtype=bool)
    for f in junction_frames:
        near[max(0, f - 2) : f + 2] = True
    # no joint jumps at a junction: the fastest joint there moves no faster than the phrases' fast moments
    assert np.percentile(speed[near], 95) < 1.5 * np.percentile(speed[~near], 95)
    np.testing.assert_allclose(guide.junction[junction_frames[0], 0], 0.0, atol=1.0 / FPS)
    assert np.all(guide.junction >= -1e-6)


def test_the_blend_runner_returns_the_guide_and_names_a_missing_input(library: PhraseLibrary) -> None:
    runner = BlendRunner(library)
    assert runner.spec.input_widths == {"music": 35, "guide": 75, "junction": 2}
    assert library.sha256[:12] in runner.spec.version
    guide = np.random.default_rng(0).normal(size=(40, 75)).astype(np.float32)
    inputs = {
        "music": np.zeros((40, 35), np.float32),
        "guide": guide,
        "junction": np.zeros((40, 2), np.float32),
    }
    np.testing.assert_array_equal(runner.run_song(inputs), guide)
    with pytest.raises(EngineError, match="junction"):
        runner.run_song({"music": inputs["music"], "guide": guide})


def test_planned_flights_are_danced_at_their_own_speed(library: PhraseLibrary) -> None:
    song = steady_song(90.0, 84.0)  # slow: modern phrases slowed down, its leaps among them
    plan = plan_dance(library, song, style="modern", seed=3)
    lo, hi = AIRBORNE_STRETCH
    flights = 0
    for seg in plan.segments:
        key = int(library.phrase_key[seg.phrase])
        first, last = (
            int(library.key_frame[key]),
            int(library.key_frame[key + int(library.phrase_beats[seg.phrase])]),
        )
        air = library.airborne[first : last + 1]
        warp = segment_warp(library, seg)
        t = np.linspace(seg.song_beats_s[0], seg.song_beats_s[-1], 4001)
        frames = warp.phrase_time(t) * FPS
        stretch = np.diff(t) / np.diff(frames / FPS)
        in_air = (
            air[np.clip(np.floor(frames[1:]).astype(int), 0, air.size - 1)]
            & air[np.clip(np.floor(frames[:-1]).astype(int) + 1, 0, air.size - 1)]
        )
        np.testing.assert_allclose(warp.phrase_time(warp.song_s[[0, -1]]), warp.phrase_s[[0, -1]], atol=1e-9)
        if in_air.any() and abs(seg.stretch - 1.0) > 0.1:
            flights += 1
            assert lo - 0.02 <= np.median(stretch[in_air]) <= hi + 0.02
    assert flights >= 1


def _stance(n_frames: int, spread_rad: float, jump_from: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Standing on bent knees with the legs spread by ``spread_rad`` (quaternions, root); from
    ``jump_from`` on, a 0.5 s jump."""
    rot = np.zeros((n_frames, 24, 3))
    for side, sign in (("left", 1.0), ("right", -1.0)):
        rot[:, SMPL.index(f"{side}_hip")] = [-0.35, 0.0, sign * spread_rad]
        rot[:, SMPL.index(f"{side}_knee"), 0] = 0.7
        rot[:, SMPL.index(f"{side}_ankle")] = [-0.35, 0.0, -sign * spread_rad]
    root = np.zeros((n_frames, 3))
    root[:, 1] = 0.86
    if jump_from is not None:
        t = np.arange(n_frames - jump_from) / FPS
        root[jump_from:, 1] += np.maximum(0.0, 2.45 * t - 4.9 * t**2)
    return aa_to_quat(rot), root


def test_feet_planted_through_a_junction_stay_put_in_its_window() -> None:
    # the old phrase stands narrow; the new one stands wide, so its planted feet are elsewhere, then jumps
    old_q, old_root = _stance(2, 0.0)
    new_q, new_root = _stance(90, 0.25, jump_from=20)
    contacts = np.zeros((90, 2), dtype=bool)
    contacts[:20] = True
    q, root = inertialize(new_q, new_root, old_q, old_root, FPS)
    joined = Motion(fps=FPS, root_translation=root, rotations=quat_to_aa(q))
    weights = planted_weights(np.array([True, True]), contacts, FPS)
    held = hold_planted_feet(joined, [(0, weights)])

    def skating(motion: Motion) -> np.ndarray:
        return skating_frames(joint_positions(motion), fps=FPS)

    window = window_frames(FPS)
    assert skating(joined)[:window].sum() >= 3  # without IK the inertialized feet slide apart
    assert skating(held)[:window].sum() == 0
    ankles = joint_positions(held)[:20, [SMPL.index("left_ankle"), SMPL.index("right_ankle")]]
    np.testing.assert_allclose(
        ankles[:, :, [0, 2]], np.broadcast_to(ankles[:1, :, [0, 2]], ankles[:, :, [0, 2]].shape), atol=2e-3
    )
    np.testing.assert_array_equal(held.rotations[window:], joined.rotations[window:])
    np.testing.assert_array_equal(held.root_translation, joined.root_translation)
    assert np.all(weights[window:] == 0) and np.all(weights[:21] == 1)


def test_the_guide_holds_planted_feet_only_inside_junction_windows(
    library: PhraseLibrary, monkeypatch: pytest.MonkeyPatch
) -> None:
    skating = {"held": [], "free": []}
    for seed in range(3):  # how much a plan's junctions skate depends on its phrases: three plans
        plan = plan_dance(library, steady_song(60.0, 110.0), style="salsa", seed=seed)
        monkeypatch.undo()
        held = build_guide(library, plan, 60 * FPS, FPS)
        monkeypatch.setattr(guide_module, "hold_planted_feet", lambda motion, holds: motion)
        free = build_guide(library, plan, 60 * FPS, FPS)
        inside = np.zeros(60 * FPS, dtype=bool)
        for f in np.ceil(plan.junctions_s * FPS).astype(int):
            inside[f : f + window_frames(FPS)] = True
        changed = np.abs(held.poses - free.poses).max(axis=1) > 0
        assert changed.any() and not changed[~inside].any()
        for name, guide in (("held", held), ("free", free)):
            motion = Motion.from_array(guide.poses.astype(np.float64), FPS)
            skating[name].extend(skating_frames(joint_positions(motion), fps=FPS)[changed[:-1]])
    assert np.mean(skating["held"]) < np.mean(skating["free"]) - 0.05
