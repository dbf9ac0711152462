"""The planner on bars whose answers are known: reuse, floor, area, tempo, seeds, long songs, repeats."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pytest

from choreo.choreography.guide import build_guide
from choreo.choreography.library import LIBRARY_FPS, PhraseLibrary, shipped_library
from choreo.choreography.planner import MAX_STRETCH, MIN_STRETCH, REUSE_BARS, PlannerWeights, plan_dance
from choreo.contracts.plan import Plan
from choreo.errors import ParameterError


@dataclass(frozen=True)
class Bars:
    """A constructed song's bars: the fields of ``MusicStructure`` the planner reads."""

    beat_times: np.ndarray
    beats_per_bar: int
    bar_starts: np.ndarray
    bar_energy: np.ndarray
    section_labels: np.ndarray
    steady: np.ndarray
    duration_s: float
    breaks: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))


def steady_song(duration_s: float, bpm: float, *, meter: int = 4, labels: np.ndarray | None = None) -> Bars:
    beat_s = 60.0 / bpm
    beats = np.arange(0.0, duration_s - 0.5 * beat_s, beat_s)
    starts = beats[::meter]
    n = starts.size
    energy = 0.5 + 0.5 * np.sin(np.arange(n) / 6.0)
    return Bars(
        beats,
        meter,
        starts,
        energy,
        np.zeros(n, dtype=int) if labels is None else labels[:n],
        np.ones(n, dtype=bool),
        duration_s,
    )


def _source_seconds(lib: PhraseLibrary, phrase: int) -> set[int]:
    first, last = lib.phrase_seconds
    return set(range(int(first[phrase]), int(last[phrase]) + 1))


def _check_contiguous(plan: Plan, duration_s: float) -> None:
    assert plan.segments[0].start_s == 0.0
    assert plan.segments[-1].end_s == pytest.approx(duration_s)
    for a, b in zip(plan.segments[:-1], plan.segments[1:], strict=True):
        assert a.end_s == b.start_s


@pytest.fixture(scope="module")
def library() -> PhraseLibrary:
    return shipped_library()


def test_beats_land_on_song_beats_within_the_stretch_limits(library: PhraseLibrary) -> None:
    song = steady_song(120.0, 110.0)
    plan = plan_dance(library, song, style="salsa", seed=0)
    _check_contiguous(plan, 120.0)
    for seg in plan.segments:
        assert MIN_STRETCH <= seg.stretch <= MAX_STRETCH
        assert seg.beat_ratio in (0.5, 1.0, 2.0)
        assert seg.phrase_beats == seg.beat_ratio * (len(seg.song_beats_s) - 1)
        # junctions are bar starts, every pinned time is a song beat
        assert np.min(np.abs(song.bar_starts - seg.start_s)) < 1e-9
        assert np.all(
            np.min(np.abs(np.append(song.beat_times, 120.0)[:, None] - seg.song_beats_s), axis=0) < 1e-9
        )
        assert library.styles[library.phrase_style[seg.phrase]] == "salsa"


def test_no_source_second_is_reused_within_the_reuse_window(library: PhraseLibrary) -> None:
    song = steady_song(300.0, 120.0, labels=np.arange(1000))  # no section repeats: reuse is never excused
    plan = plan_dance(library, song, style="modern", seed=3)
    used: dict[int, int] = {}
    for seg in plan.segments:
        for sec in _source_seconds(library, seg.phrase):
            if sec in used:
                assert seg.start_bar - used[sec] >= REUSE_BARS, (sec, used[sec], seg.start_bar)
            used[sec] = seg.start_bar


def test_floor_work_never_meets_standing_at_a_junction(library: PhraseLibrary) -> None:
    plan = plan_dance(library, steady_song(240.0, 125.0), style="breakdance", seed=1)
    floor_moves = 0
    for a, b in zip(plan.segments[:-1], plan.segments[1:], strict=True):
        end_key = library.phrase_key[a.phrase] + library.phrase_beats[a.phrase]
        start_key = library.phrase_key[b.phrase]
        assert library.key_floor[end_key] == library.key_floor[start_key]
        floor_moves += bool(library.key_floor[start_key])
    assert not library.key_floor[library.phrase_key[plan.segments[0].phrase]], "the dance starts standing"
    assert floor_moves > 0, "a breakdance of four minutes goes to the floor"


def test_seeds_differ_and_a_seed_repeats_itself(library: PhraseLibrary) -> None:
    song = steady_song(60.0, 100.0)
    a = plan_dance(library, song, style="salsa", seed=0)
    b = plan_dance(library, song, style="salsa", seed=1)
    assert [s.phrase for s in a.segments] != [s.phrase for s in b.segments]
    assert plan_dance(library, song, style="salsa", seed=0) == a


def test_a_fourteen_minute_song_in_three_four_is_planned_to_its_end(library: PhraseLibrary) -> None:
    song = steady_song(14 * 60.0, 132.0, meter=3)
    plan = plan_dance(library, song, style="salsa", seed=2)
    _check_contiguous(plan, 14 * 60.0)
    assert {s.phrase_beats for s in plan.segments} <= {3, 6}
    for minute in range(14):  # distinct source seconds in every minute of the dance
        inside = [s for s in plan.segments if minute * 60 <= s.start_s < (minute + 1) * 60]
        assert len(set().union(*(_source_seconds(library, s.phrase) for s in inside))) >= 20


def test_a_repeated_section_dances_its_phrases_again_or_mirrored(library: PhraseLibrary) -> None:
    labels = np.repeat([0, 1, 0, 1, 2, 0], 8)
    song = steady_song(48 * 4 * 0.5 + 1.0, 120.0, labels=labels)
    plan = plan_dance(library, song, style="salsa", seed=0)
    repeats = [s for s in plan.segments if s.repeat_of is not None]
    assert repeats
    for seg in repeats:
        first = plan.segments[seg.repeat_of]
        assert seg.phrase in (first.phrase, int(library.mirror_phrase[first.phrase]))
        assert labels[seg.start_bar] == labels[first.start_bar] and seg.start_bar > first.start_bar


def test_unsteady_bars_are_danced_at_their_own_pace(library: PhraseLibrary) -> None:
    song = steady_song(60.0, 120.0)
    steady = song.steady.copy()
    steady[:6] = False
    plan = plan_dance(library, Bars(**{**song.__dict__, "steady": steady}), style="modern", seed=0)
    free = [s for s in plan.segments if s.free]
    assert free and all(s.start_bar < 6 for s in free)
    assert any("own pace" in note for note in plan.notes)


def test_the_dancer_stays_on_the_floor_area(library: PhraseLibrary) -> None:
    plan = plan_dance(library, steady_song(180.0, 118.0), style="salsa", seed=4)
    x = z = yaw = 0.0
    for seg in plan.segments:
        c, s = np.cos(yaw), np.sin(yaw)
        mx, mz = library.phrase_move[seg.phrase]
        x, z = x + c * mx + s * mz, z - s * mx + c * mz
        yaw += float(library.phrase_turn[seg.phrase])
        assert abs(x) < 2.0 and abs(z) < 2.0


def test_whirl_is_merged_and_said_so_and_bad_options_are_refused(library: PhraseLibrary) -> None:
    plan = plan_dance(library, steady_song(30.0, 120.0), style="whirl")
    assert plan.style == library.merged_styles["whirl"]
    assert any("deprecated" in note for note in plan.notes)
    with pytest.raises(ParameterError, match="unknown energy"):
        plan_dance(library, steady_song(30.0, 120.0), style="salsa", energy="loud")
    with pytest.raises(ParameterError, match="unknown style 'tango'"):
        plan_dance(library, steady_song(30.0, 120.0), style="tango")


def test_energy_levels_pick_bigger_moves(library: PhraseLibrary) -> None:
    song = steady_song(120.0, 120.0)
    mean = {}
    for level in ("low", "high"):
        plan = plan_dance(library, song, style="salsa", energy=level)
        mean[level] = np.mean([library.phrase_energy[s.phrase] for s in plan.segments])
    assert mean["high"] > 1.3 * mean["low"]


def test_plan_json_round_trip(library: PhraseLibrary) -> None:
    plan = plan_dance(library, steady_song(30.0, 120.0), style="salsa")
    assert Plan.from_dict(plan.to_dict()) == plan
    assert plan.library_sha256 == library.sha256
    spans = [s.source_span_s for s in plan.segments]
    assert all(0 <= a < b for a, b in spans)
    assert LIBRARY_FPS == 30


@pytest.mark.parametrize("style", ["salsa", "modern", "breakdance"])
def test_a_last_bar_too_short_for_any_phrase_is_danced_by_the_segment_before(
    library: PhraseLibrary, style: str
) -> None:
    for duration_s, bpm in ((300.0, 200.0), (60.0, 190.0), (299.0, 200.0), (60.0, 220.0)):
        song = steady_song(duration_s, bpm, meter=3)
        # the last bar is one beat (0.30, 0.32, 0.20 and 0.27 s), about half the shortest phrase (0.6 s) or
        # less: it is danced by a span that starts a bar or more before it, or (0.3 s) by a 0.6 s phrase
        # at the relaxed stretch limit, 0.5
        assert duration_s - song.bar_starts[-1] < 0.55 * library.phrase_duration_s.min()
        plan = plan_dance(library, song, style=style, seed=0)
        _check_contiguous(plan, duration_s)
        last = plan.segments[-1]
        assert last.free and last.start_bar + last.n_bars == song.bar_starts.size
        own_s = library.phrase_duration_s[last.phrase]
        assert last.stretch == pytest.approx((duration_s - last.start_s) / own_s, abs=1e-4)
        assert last.start_bar < song.bar_starts.size - 1 or last.stretch >= 0.5 - 1e-9
        if last.n_bars > 2:  # more than a span of two bars: stretched over it, and the plan says so
            assert any("too short for any phrase" in note for note in plan.notes)


def test_a_song_shorter_than_half_of_any_phrase_is_danced(library: PhraseLibrary) -> None:
    plan = plan_dance(library, steady_song(0.3, 120.0), style="salsa")
    _check_contiguous(plan, 0.3)
    assert len(plan.segments) == 1 and plan.segments[0].free


@pytest.mark.parametrize("meter", [3, 4])
@pytest.mark.parametrize("style", ["salsa", "modern", "breakdance"])
def test_every_tempo_meter_and_length_is_danced_to_its_end(
    library: PhraseLibrary, meter: int, style: str
) -> None:
    fps = 30
    for bpm in range(45, 221, 5):
        for duration_s in (1.0, 1.7, 2.5, 3.0, 9.4, 31.3):
            plan = plan_dance(library, steady_song(duration_s, bpm, meter=meter), style=style, seed=bpm % 3)
            _check_contiguous(plan, duration_s)
            n_frames = int(round(duration_s * fps))
            guide = build_guide(library, plan, n_frames, fps)
            assert guide.poses.shape == (n_frames, 75) and np.isfinite(guide.poses).all()


def test_held_poses_are_danced_only_where_the_music_falls(library: PhraseLibrary) -> None:
    song = steady_song(120.0, 84.0)  # modern, which holds poses in a fifth of its phrases
    energy = np.where((np.arange(song.bar_starts.size) // 4) % 2 == 0, 1.0, 0.05)  # loud, quiet, ...
    song = Bars(**{**song.__dict__, "bar_energy": energy})
    still_in_quiet = 0
    for seed in range(3):
        plan = plan_dance(library, song, style="modern", seed=seed)
        for s in plan.segments:
            loud = energy[s.start_bar : s.start_bar + s.n_bars].max() >= 0.5 * np.median(energy)
            assert not (library.phrase_still[s.phrase] and loud)
            still_in_quiet += bool(library.phrase_still[s.phrase])
    assert library.phrase_still[library.phrase_style == library.style_index("modern")].mean() > 0.1
    assert still_in_quiet > 0  # quiet bars may still hold a pose (the energy cost asks for small moves)


def test_a_long_song_spreads_over_the_library_before_dancing_a_second_again(library: PhraseLibrary) -> None:
    song = steady_song(600.0, 160.0)  # most salsa clips fit 160 BPM (few fit 112)
    distinct = {}
    for stale in (0.0, PlannerWeights().stale):
        plan = plan_dance(library, song, style="salsa", seed=0, weights=PlannerWeights(stale=stale))
        distinct[stale] = len(set().union(*(_source_seconds(library, s.phrase) for s in plan.segments)))
    assert distinct[PlannerWeights().stale] > 1.3 * distinct[0.0]


def test_held_poses_may_be_danced_over_a_break_in_loud_music(library: PhraseLibrary) -> None:
    song = steady_song(120.0, 84.0)  # modern; every bar loud
    song = Bars(**{**song.__dict__, "bar_energy": np.ones(song.bar_starts.size)})
    starts = song.bar_starts
    song = replace(song, breaks=np.array([[starts[8], starts[14]], [starts[30], starts[36]]]))
    in_break = np.zeros(starts.size, dtype=bool)
    in_break[8:14] = in_break[30:36] = True
    still_in_breaks = 0
    for seed in range(4):
        plan = plan_dance(library, song, style="modern", seed=seed, weights=PlannerWeights(energy=0.0))
        assert plan.breaks_s == ((starts[8], starts[14]), (starts[30], starts[36]))
        for s in plan.segments:
            if library.phrase_still[s.phrase]:
                assert in_break[s.start_bar : s.start_bar + s.n_bars].all()
                still_in_breaks += 1
    assert still_in_breaks > 0
