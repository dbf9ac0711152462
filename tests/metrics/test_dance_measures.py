"""Issue 11's dance measures on motions whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.metrics.beat_contrast import beat_contrast, half_beat_shifted, pick_mismatched_song, tiled_beats
from choreo.metrics.descriptor import windowed_descriptors
from choreo.metrics.junctions import junction_jerk_ratio
from choreo.metrics.repetition import SourceSpan, distinct_source_seconds_per_minute
from choreo.metrics.spread import heading_frame_offsets, pose_spread, reach
from choreo.metrics.stalls import stalls
from choreo.metrics.structure_consistency import structure_consistency
from choreo.metrics.style import style_centroids, style_separability
from choreo.motion import REST_PELVIS_HEIGHT_M, SMPL, Motion, joint_positions

FPS = 30.0
LEFT_SHOULDER, RIGHT_SHOULDER, LEFT_ELBOW = (
    SMPL.index(n) for n in ("left_shoulder", "right_shoulder", "left_elbow")
)
LEFT_KNEE, RIGHT_KNEE, LEFT_HIP, RIGHT_HIP = (
    SMPL.index(n) for n in ("left_knee", "right_knee", "left_hip", "right_hip")
)


def _positions(rotations: np.ndarray, root: np.ndarray | None = None) -> np.ndarray:
    frames = rotations.shape[0]
    if root is None:
        root = np.zeros((frames, 3))
        root[:, 1] = REST_PELVIS_HEIGHT_M
    return joint_positions(Motion(FPS, root, rotations))


def _still(frames: int) -> np.ndarray:
    return _positions(np.zeros((frames, 24, 3)))


def _yaw(positions: np.ndarray, angle_rad: np.ndarray) -> np.ndarray:
    """Turn every frame about the vertical through the pelvis by its angle."""
    c, s = np.cos(angle_rad)[:, None], np.sin(angle_rad)[:, None]
    pelvis = positions[:, :1, :]
    rel = positions - pelvis
    out = rel.copy()
    out[..., 0] = c * rel[..., 0] + s * rel[..., 2]
    out[..., 2] = -s * rel[..., 0] + c * rel[..., 2]
    return out + pelvis


def _waving(frames: int, *, hz: float, amplitude_rad: float, phase: float = 0.0) -> np.ndarray:
    """Both arms swing up and down together at ``hz``."""
    t = np.arange(frames) / FPS
    rotations = np.zeros((frames, 24, 3))
    swing = amplitude_rad * np.sin(2 * np.pi * hz * t + phase)
    rotations[:, LEFT_SHOULDER, 2] = swing
    rotations[:, RIGHT_SHOULDER, 2] = -swing
    return _positions(rotations)


def _squatting(frames: int, *, hz: float, phase: float = 0.0) -> np.ndarray:
    """Knees bend and straighten at ``hz`` while the pelvis sinks with them."""
    t = np.arange(frames) / FPS
    bend = 0.6 * (1 - np.cos(2 * np.pi * hz * t + phase))
    rotations = np.zeros((frames, 24, 3))
    rotations[:, [LEFT_HIP, RIGHT_HIP], 0] = -bend[:, None]
    rotations[:, [LEFT_KNEE, RIGHT_KNEE], 0] = 2 * bend[:, None]
    root = np.zeros((frames, 3))
    root[:, 1] = REST_PELVIS_HEIGHT_M - 0.15 * bend
    return _positions(rotations, root)


# Pose spread and reach


def test_still_or_travelling_figure_has_no_spread() -> None:
    still = _still(60)
    assert pose_spread(still) == pytest.approx(0.0, abs=1e-12)
    travelling = still + np.linspace(0, 2, 60)[:, None, None] * np.array([1.0, 0.0, 0.5])
    assert pose_spread(travelling) == pytest.approx(0.0, abs=1e-12)
    assert pose_spread(travelling, heading_frame=True) == pytest.approx(0.0, abs=1e-9)


def test_spread_of_one_joint_moving_sinusoidally() -> None:
    positions = _still(300)
    amplitude = 0.3
    positions[:, SMPL.index("left_hand"), 0] += amplitude * np.sin(2 * np.pi * np.arange(300) / 30)
    # One of 24 joints x 3 axes has standard deviation amplitude / sqrt(2).
    assert pose_spread(positions) == pytest.approx(amplitude / np.sqrt(2) / 72, rel=1e-3)


def test_turning_on_the_spot_spreads_only_in_the_world_frame() -> None:
    turning = _yaw(_still(120), np.linspace(0, 2 * np.pi, 120))
    assert pose_spread(turning) > 0.03
    assert pose_spread(turning, heading_frame=True) == pytest.approx(0.0, abs=1e-9)


def test_reach_of_a_constructed_pose_in_any_heading() -> None:
    positions = np.zeros((10, 24, 3))
    positions[:, SMPL.index("left_hip"), 0] = 0.1
    positions[:, SMPL.index("right_hip"), 0] = -0.1
    positions[:, SMPL.index("spine2"), 1] = 0.3
    positions[:, SMPL.index("left_wrist")] = [0.6, 0.3, 0.0]  # 0.6 m out to the left
    positions[:, SMPL.index("right_wrist")] = [0.0, 0.3, 0.4]  # 0.4 m in front
    found = reach(positions)
    assert found.distance_m == pytest.approx(0.5)
    assert (found.lateral_m, found.up_m, found.forward_m) == pytest.approx((0.3, 0.0, 0.2))
    turned = reach(_yaw(positions, np.full(10, 1.1)))
    assert (turned.distance_m, turned.lateral_m, turned.forward_m) == pytest.approx((0.5, 0.3, 0.2))


def test_forward_is_where_the_rest_pose_faces() -> None:
    offsets = heading_frame_offsets(_still(2))
    toes = offsets[0, SMPL.index("left_foot")]
    assert toes[2] > 0.05  # SMPL faces +Z at rest: the toes are ahead of the pelvis
    with pytest.raises(ParameterError, match="hips coincide"):
        heading_frame_offsets(np.zeros((3, 24, 3)))


# Beat alignment: own, mismatched, half a beat off


def _stops_on(beat_times_s: np.ndarray, frames: int) -> np.ndarray:
    """An arm that swings up and down between the beats and turns back exactly on each."""
    t = np.arange(frames) / FPS
    phase = np.interp(t, beat_times_s, np.arange(beat_times_s.size))
    rotations = np.zeros((frames, 24, 3))
    rotations[:, LEFT_SHOULDER, 2] = 0.8 * (1 - np.cos(np.pi * phase))
    return _positions(rotations)


def test_a_dance_that_stops_on_its_beats_scores_on_them_only() -> None:
    own = np.arange(0.51, 20.0, 0.5)  # 120 BPM, off the frame grid so speed minima are not ties
    other = np.arange(0.3, 20.0, 0.6)  # 100 BPM
    positions = _stops_on(own, 600)
    contrast = beat_contrast(positions, own, other, fps=FPS)
    assert contrast.own > 0.9
    assert contrast.shifted < 0.2
    assert contrast.own_minus_mismatched > 0.4
    assert contrast.mismatched is not None
    assert contrast.to_dict()["beat_align_own_minus_mismatched"] == pytest.approx(
        contrast.own - contrast.mismatched, abs=1e-4
    )
    assert contrast.own_minus_half_beat > 0.7
    assert contrast.to_dict()["beat_align_own_minus_half_beat"] == pytest.approx(
        contrast.own - contrast.shifted, abs=1e-4
    )


def test_a_dance_that_stops_twice_a_beat_has_no_half_beat_contrast() -> None:
    own = np.arange(0.51, 20.0, 1.0)  # 60 BPM: stops every half second stay apart after smoothing
    twice = np.sort(np.concatenate([own, own[:-1] + 0.5]))  # stops on the beats and between them
    contrast = beat_contrast(_stops_on(twice, 600), own, None, fps=FPS)
    assert contrast.own > 0.8 and contrast.shifted > 0.8  # it scores on any grid of its stops
    assert abs(contrast.own_minus_half_beat) < 0.1
    assert contrast.mismatched is None and contrast.to_dict()["beat_align_own_minus_mismatched"] is None


def test_half_beat_shift_and_tiling() -> None:
    np.testing.assert_allclose(half_beat_shifted(np.array([1.0, 2.0, 4.0])), [1.5, 3.0])
    np.testing.assert_allclose(
        tiled_beats(np.array([0.5, 1.5]), song_duration_s=2.0, cover_s=5.0), [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]
    )
    with pytest.raises(ParameterError, match="no beats"):
        tiled_beats(np.array([]), song_duration_s=2.0, cover_s=5.0)


def test_mismatched_song_differs_by_ten_percent_and_is_no_octave() -> None:
    tempi = {"a": 120.0, "b": 125.0, "c": 60.0, "d": 100.0, "e": 246.0}
    assert pick_mismatched_song("a", tempi) == "d"
    assert pick_mismatched_song("a", {"a": 120.0, "b": 125.0, "c": 240.0}) is None


# Junction smoothness


def _circling(frames: int) -> np.ndarray:
    """Every joint on a horizontal circle of its own: constant jerk magnitude."""
    t = np.arange(frames) / FPS
    positions = _still(frames)
    positions[..., 0] += 0.2 * np.cos(2 * np.pi * t)[:, None]
    positions[..., 2] += 0.2 * np.sin(2 * np.pi * t)[:, None]
    return positions


def test_smooth_motion_has_junctions_like_its_phrases() -> None:
    ratio = junction_jerk_ratio(_circling(300), np.array([2.0, 4.1, 7.3]), fps=FPS)
    assert ratio == pytest.approx(1.0, rel=1e-3)


def test_a_kink_at_each_junction_shows() -> None:
    positions = _circling(300)
    junctions = np.array([2.0, 5.0, 8.0])
    for junction in junctions:
        k = int(junction * FPS)
        positions[k:, :, 1] += 0.05 * (np.arange(300 - k) / FPS)[:, None] * 10  # velocity jumps here
    ratio = junction_jerk_ratio(positions, junctions, fps=FPS)
    assert ratio > 1.5
    assert junction_jerk_ratio(positions, np.array([]), fps=FPS) is None
    assert junction_jerk_ratio(positions, np.array([20.0]), fps=FPS) is None  # after the dance


# Stalls


def test_a_still_stretch_over_steady_music_is_a_stall() -> None:
    positions = _circling(900)
    positions[300:450] = positions[300]  # five seconds still
    loud = np.ones(900)
    found = stalls(positions, loud, fps=FPS)
    assert found.longest_s == pytest.approx(5.0, abs=0.6)
    assert found.total_s == pytest.approx(found.longest_s, abs=1e-9)
    quiet = loud.copy()
    quiet[280:470] = 0.1  # the music drops out under the pause: a choreographed hold
    assert stalls(positions, quiet, fps=FPS).total_s == 0.0
    with pytest.raises(ParameterError, match="values for"):
        stalls(positions, loud[:10], fps=FPS)


# Repetition


def test_distinct_source_seconds_count_overlaps_and_mirrors_once() -> None:
    spans = [SourceSpan("a", 0.0, 4.0), SourceSpan("a", 2.0, 6.0), ("b", 0.0, 4.0), ("a", 0.0, 4.0)]
    assert distinct_source_seconds_per_minute(spans, dance_duration_s=60.0) == pytest.approx(10.0)
    looped = [("a", 10.0, 14.0)] * 30  # one 4-second phrase for two minutes
    assert distinct_source_seconds_per_minute(looped, dance_duration_s=120.0) == pytest.approx(2.0)
    with pytest.raises(ParameterError, match="before it starts"):
        distinct_source_seconds_per_minute([("a", 3.0, 1.0)], dance_duration_s=60.0)


# Style separability


def test_styles_that_move_differently_are_told_apart() -> None:
    reference = {
        "wave": windowed_descriptors(_waving(1200, hz=2.0, amplitude_rad=1.0), fps=FPS, window_s=4.0),
        "squat": windowed_descriptors(_squatting(1200, hz=0.5), fps=FPS, window_s=4.0),
    }
    centroids = style_centroids(reference)
    dance = windowed_descriptors(_waving(600, hz=1.8, amplitude_rad=0.9, phase=1.0), fps=FPS, window_s=4.0)
    assert dance.shape[0] == 5
    assert style_separability(dance, "wave", centroids) == 1.0
    assert style_separability(dance, "squat", centroids) == 0.0
    assert style_separability(dance[:0], "wave", centroids) is None
    with pytest.raises(ParameterError, match="no centroid"):
        style_separability(dance, "salsa", centroids)
    with pytest.raises(ParameterError, match="two styles"):
        style_centroids({"wave": reference["wave"]})


# Structure consistency


def test_a_chorus_danced_alike_each_time_is_consistent() -> None:
    bar_s, bars_per_section = 2.0, 4
    labels = np.repeat([0, 1, 0, 1], bars_per_section)
    starts = np.arange(labels.size) * bar_s
    frames_per_bar = int(bar_s * FPS)
    rng = np.random.default_rng(3)
    chunks, same_chunks = [], []
    for label in labels:
        phase = rng.uniform(0, 2 * np.pi)
        moving = _waving if label == 0 else _squatting
        kwargs = {"hz": 1.0, "amplitude_rad": 1.0} if label == 0 else {"hz": 1.0}
        chunks.append(moving(frames_per_bar, phase=phase, **kwargs))
        same_chunks.append(_waving(frames_per_bar, hz=1.0, amplitude_rad=1.0, phase=phase))
    consistent = structure_consistency(np.concatenate(chunks), starts, labels, fps=FPS)
    assert consistent > 2.0
    ignoring = structure_consistency(np.concatenate(same_chunks), starts, labels, fps=FPS)
    assert 0.8 < ignoring < 1.25
    assert structure_consistency(np.concatenate(chunks), starts, np.zeros(labels.size), fps=FPS) is None
    assert structure_consistency(np.concatenate(chunks), starts, np.arange(labels.size), fps=FPS) is None


def test_the_planner_avoids_what_the_stall_measure_counts() -> None:
    """The library's held poses and the planner's quiet bars are the stall measure's own thresholds."""
    from choreo.choreography.library import HELD_POSE_FRACTION
    from choreo.choreography.planner import QUIET_BAR_FRACTION
    from choreo.metrics.stalls import MUSIC_HOLD_FRACTION, STALL_FRACTION

    assert (HELD_POSE_FRACTION, QUIET_BAR_FRACTION) == (STALL_FRACTION, MUSIC_HOLD_FRACTION)


# Holds on breaks


def test_a_dancer_that_holds_on_the_breaks_is_slow_in_them_and_not_in_another_songs() -> None:
    from choreo.metrics.break_holds import break_speed_ratio, tiled_breaks
    from choreo.metrics.context import DanceContext, score_in_context

    positions = _circling(900)
    positions[300:360] = positions[300]  # held over the break at 10-12 s
    own = np.array([[10.0, 12.0]])
    other = np.array([[4.0, 6.0], [20.0, 21.5]])
    assert break_speed_ratio(positions, own, fps=FPS) < 0.05
    # about 1: the other song's breaks miss the hold (outside them, the hold lowers the mean a little)
    assert break_speed_ratio(positions, other, fps=FPS) == pytest.approx(1.0, abs=0.1)
    blind = _circling(900)  # a dancer that does not hear the break
    assert break_speed_ratio(blind, own, fps=FPS) == pytest.approx(1.0, abs=0.05)
    assert break_speed_ratio(positions, np.zeros((0, 2)), fps=FPS) is None
    np.testing.assert_allclose(
        tiled_breaks(other, song_duration_s=25.0, cover_s=40.0), [[4, 6], [20, 21.5], [29, 31], [45, 46.5]]
    )
    # the music stopped there: the hold is no stall, as it is without the break
    bars = np.arange(0.0, 30.0, 2.0)
    context = DanceContext(
        own_beats_s=np.arange(0.0, 30.0, 0.5),
        mismatched_beats_s=None,
        bar_starts_s=bars,
        bar_energy=np.ones(bars.size),
        section_labels=np.zeros(bars.size, dtype=int),
        breaks_s=own,
        mismatched_breaks_s=other,
    )
    scores = score_in_context(positions, context, fps=FPS)
    assert scores["stall_s"] == 0.0 and scores["break_speed_own"] < 0.05
    assert scores["break_speed_mismatched"] == pytest.approx(1.0, abs=0.1)
    unheard = score_in_context(positions, DanceContext(**{**context.__dict__, "breaks_s": None}), fps=FPS)
    assert unheard["stall_s"] > 1.0 and unheard["break_speed_own"] is None
