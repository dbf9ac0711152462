"""Big moves on downbeats and section starts: the phrases' downbeat share and the planner's preference."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.choreography.downbeats import key_hits, phrase_downbeat_share
from choreo.choreography.library import LIBRARY_FPS, PhraseLibrary, shipped_library
from choreo.choreography.planner import PlannerWeights, plan_dance
from choreo.motion import Motion, joint_positions
from choreo.motion.stops import hit_strengths, smoothed_speed
from tests.choreography.test_planner import steady_song


@pytest.fixture(scope="module")
def library() -> PhraseLibrary:
    return shipped_library()


def test_a_phrase_that_stops_hard_on_its_last_key_has_a_high_one_bar_share() -> None:
    # one 4-beat phrase from key 0; key 0's downbeat is the phrase before's to hit
    share = phrase_downbeat_share(np.array([9.0, 1.0, 1.0, 1.0, 4.0]), np.array([0]), np.array([4]))
    assert share[0, 0] == pytest.approx(0.8)  # 4 on the downbeat, 1 on the others
    soft_end = phrase_downbeat_share(np.array([0.0, 4.0, 4.0, 4.0, 1.0]), np.array([0]), np.array([4]))
    assert soft_end[0, 0] == pytest.approx(0.2)
    even = phrase_downbeat_share(np.ones(5), np.array([0]), np.array([4]))
    np.testing.assert_allclose(even[:, 0], 0.5)


def test_over_two_bars_the_middle_key_is_a_downbeat_too() -> None:
    hits = np.array([1.0, 1.0, 1.0, 1.0, 5.0, 1.0, 1.0, 1.0, 1.0])  # an 8-beat phrase hitting key 4
    share = phrase_downbeat_share(hits, np.array([0]), np.array([8]))
    assert share[1, 0] == pytest.approx(0.75)  # keys 4 and 8: 3 against 1
    assert share[0, 0] < 0.5  # over one bar only key 8, a soft one, is a downbeat


def test_key_hits_are_the_hits_on_the_key_frames_over_each_keys_beat() -> None:
    frames = 90
    t = np.arange(frames) / LIBRARY_FPS
    rotations = np.zeros((frames, 24, 3))
    rotations[:, 16, 2] = 0.8 * np.sin(np.pi * t / 0.5) ** 2  # strokes stopping every 0.5 s
    root = np.zeros((frames, 3))
    root[:, 1] = 0.9
    keys, clips = np.array([0, 15, 30, 45, 60, 75]), np.array([0, 0, 0, 1, 1, 1])
    got = key_hits(rotations, root, keys, clips, fps=LIBRARY_FPS)
    speed = smoothed_speed(joint_positions(Motion(LIBRARY_FPS, root, rotations)), LIBRARY_FPS)
    np.testing.assert_allclose(got, hit_strengths(speed, keys, np.full(6, 15.0)))
    assert got[1] > 0.5 * got.max()  # a stroke stops on every key


def _planned_share(library: PhraseLibrary, weights: PlannerWeights, seed: int) -> float:
    plan = plan_dance(library, steady_song(90.0, 120.0), style="salsa", seed=seed, weights=weights)
    steady = [s for s in plan.segments if not s.free]
    return float(np.mean([library.phrase_downbeat_share[s.n_bars - 1, s.phrase] for s in steady]))


def test_the_planner_prefers_phrases_whose_big_moves_fall_on_the_downbeats(library: PhraseLibrary) -> None:
    for seed in (0, 1):
        blind = _planned_share(library, PlannerWeights(downbeat=0.0), seed)
        assert _planned_share(library, PlannerWeights(), seed) > blind + 0.01
        assert _planned_share(library, PlannerWeights(downbeat=40.0), seed) > blind + 0.04


def test_a_section_comes_in_with_a_bigger_move(library: PhraseLibrary) -> None:
    song = steady_song(200.0, 120.0, labels=np.repeat(np.arange(13), 8))
    song = type(song)(
        song.beat_times,
        4,
        song.bar_starts,
        np.full(song.bar_starts.size, 0.5),
        song.section_labels,
        song.steady,
        song.duration_s,
    )
    starts = {8 * k for k in range(1, 13)}

    def rank_at_starts(lift: float) -> float:
        ranks = []
        for seed in (0, 1, 2):
            plan = plan_dance(
                library, song, style="salsa", seed=seed, weights=PlannerWeights(section_lift=lift)
            )
            ranks += [library.energy_rank[s.phrase] for s in plan.segments if s.start_bar in starts]
        return float(np.mean(ranks))

    assert rank_at_starts(0.4) > rank_at_starts(0.0) + 0.05
