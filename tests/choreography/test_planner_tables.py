"""The planner's precomputed tables against straightforward definitions of what they hold.

The search reads per-library and per-bar arrays laid out for speed; each test
here rebuilds one of them the plain way (one bar, one key, one candidate at a
time) and asserts exact equality, so the fast layout cannot change a plan (the
phrase and span cost terms, a matrix product of expanded squares, agree to rounding).
"""

from __future__ import annotations

import numpy as np
import pytest

from choreo.choreography.library import PhraseLibrary, shipped_library
from choreo.choreography.phrases import PHRASE_BEATS
from choreo.choreography.planner import (
    _NEVER,
    MAX_STRETCH,
    MIN_STRETCH,
    PHRASE_BEATS_BY_METER,
    REUSE_BARS,
    PlannerWeights,
    _bars,
    _Beam,
    _energy_target,
    _phrase_terms,
    _Search,
    _spans,
    _tables,
)
from choreo.metrics.stalls import MUSIC_HOLD_FRACTION
from tests.choreography.test_planner import steady_song


@pytest.fixture(scope="module")
def library() -> PhraseLibrary:
    return shipped_library()


def _song(meter: int):
    """A steady song with a lead-in, two unsteady bars, a bar whose beats drift, and sections."""
    song = steady_song(90.0, 117.0, meter=meter)
    labels = np.zeros(song.bar_starts.size, dtype=int)
    labels[8:14], labels[20:] = 1, 2
    steady = song.steady.copy()
    steady[[5, 6]] = False
    beats = song.beat_times.copy()
    beats[30] += 0.2
    return type(song)(beats, meter, song.bar_starts + 0.4, song.bar_energy, labels, steady, song.duration_s)


def test_continuation_tables_hold_each_keys_candidates(library: PhraseLibrary) -> None:
    tables = _tables(library)
    assert _tables(library) is tables
    rng = np.random.default_rng(0)
    for style in range(len(library.styles)):
        for fits in (*PHRASE_BEATS_BY_METER.values(), PHRASE_BEATS):
            columns = tuple(PHRASE_BEATS.index(n) for n in fits)
            phrases, cost = tables.continuations(style, columns)
            for key in rng.integers(0, library.key_frame.size, 40):
                keys = library.next_key[key, style]
                expected = [
                    (int(library.start_phrases[max(k, 0), c]), float(library.next_cost[key, style, t]))
                    for t, k in enumerate(keys)
                    for c in columns
                ]
                assert phrases[key].tolist() == [p for p, _ in expected]
                for (p, c), got, k in zip(expected, cost[key], np.repeat(keys, len(columns)), strict=True):
                    assert got == (c if k >= 0 and p >= 0 else np.inf)


def test_fitting_phrases_are_those_within_the_stretch_limits(library: PhraseLibrary) -> None:
    tables = _tables(library)
    rng = np.random.default_rng(1)
    for style in range(len(library.styles)):
        for lengths in (None, (2, 4, 8), (3, 6)):
            pool = [
                int(p)
                for p in np.nonzero(library.phrase_style == style)[0]
                if lengths is None or int(library.phrase_beats[p]) in lengths
            ]
            for _ in range(30):  # nearby durations share a cache entry, but only when their answers agree
                durations = rng.uniform(1.0, 1.05, size=rng.integers(1, 3)) * rng.choice([1.5, 2.0, 4.0])
                expected = [
                    p
                    for p in pool
                    if any(
                        d / MAX_STRETCH <= library.phrase_duration_s[p] <= d / MIN_STRETCH for d in durations
                    )
                ]
                assert tables.fitting(style, lengths, durations).tolist() == expected


@pytest.mark.parametrize("meter", [4, 3])
@pytest.mark.parametrize("relaxed", [False, True])
def test_span_tables_match_each_bar_and_span(meter: int, relaxed: bool) -> None:
    song = _song(meter)
    bars = _bars(song)
    weights = PlannerWeights()
    spans = _spans(bars, weights, "auto", relaxed)
    inside = [
        [song_t for song_t in song.beat_times if bars.starts[k] + 0.05 < song_t < bars.starts[k + 1] - 0.05]
        for k in range(bars.n_bars)
    ]
    for k in range(bars.n_bars):
        for j in (1, 2):
            i = j - 1
            if k + j > bars.n_bars:
                assert not spans.available[k, i] and not spans.fits[k, :, i].any()
                continue
            points = bars.points(k, j)
            expected_points = [t for b in range(k, k + j) for t in [bars.starts[b], *inside[b]]]
            assert points.tolist() == [*expected_points, bars.starts[k + j]]
            steady = bool(bars.steady[k : k + j].all()) and not relaxed
            m = points.size - 1 if steady else 1
            assert spans.available[k, i]
            assert spans.duration_s[k, i] == points[-1] - points[0]
            target = _energy_target(bars.energy[k : k + j].mean(), "auto")
            starts_section = k in (9, 15, 21)  # the lead-in bar shifts the song's bars 8, 14, 20 by one
            if starts_section:
                target = min(target + weights.section_lift, max(target, 1.0))
            assert spans.target[k, i] == pytest.approx(target, rel=1e-12)
            assert spans.steady[k, i] == float(steady) and spans.m[k, i] == m
            for c, n in enumerate(PHRASE_BEATS):
                assert spans.fits[k, c, i] == (not steady or n / m in (0.5, 1.0, 2.0))
                assert spans.off_ratio[k, c, i] == weights.ratio * (steady and n / m != 1.0)
                assert spans.double[k, c, i] == (steady and n / m == 2.0)
            loud = bars.energy[k : k + j] >= MUSIC_HOLD_FRACTION * np.median(bars.energy)
            assert spans.loud[k, i] == loud.any()


def test_recent_is_any_source_second_danced_within_the_reuse_window(library: PhraseLibrary) -> None:
    bars = _bars(_song(4))
    search = _Search(library, bars, PlannerWeights(), "auto", 0, 4)
    rng = np.random.default_rng(2)
    n_secs = search.t.n_secs
    bar = 40
    history = search.blank_history(6)
    history[:, :n_secs] = rng.integers(bar - 3 * REUSE_BARS, bar, size=(6, n_secs))
    beam = _Beam(np.zeros((6, 4)), np.zeros((6, 2), dtype=np.int64), history)
    p = rng.integers(0, library.phrase_key.size, size=(6, 50))
    rows = np.repeat(np.arange(6), 50)
    first, last = library.phrase_seconds
    expected = [
        [any(bar - history[h, s] < REUSE_BARS for s in range(first[q], last[q] + 1)) for q in row]
        for h, row in enumerate(p)
    ]
    got = search.reuse(beam, bar, p.ravel(), rows)[0].reshape(p.shape)
    assert got.tolist() == expected
    assert 0 < got.mean() < 1


def test_danced_is_the_share_of_source_seconds_danced_before(library: PhraseLibrary) -> None:
    bars = _bars(_song(4))
    search = _Search(library, bars, PlannerWeights(), "auto", 0, 4)
    rng = np.random.default_rng(3)
    n_secs = search.t.n_secs
    history = search.blank_history(6)
    history[:, :n_secs] = np.where(rng.random((6, n_secs)) < 0.3, rng.integers(0, 40, (6, n_secs)), _NEVER)
    beam = _Beam(np.zeros((6, 4)), np.zeros((6, 2), dtype=np.int64), history)
    p = rng.integers(0, library.phrase_key.size, size=(6, 50))
    rows = np.repeat(np.arange(6), 50)
    first, last = library.phrase_seconds
    expected = [
        [np.mean([history[h, s] > _NEVER for s in range(first[q], last[q] + 1)]) for q in row]
        for h, row in enumerate(p)
    ]
    got = search.reuse(beam, 40, p.ravel(), rows)[1].reshape(p.shape)
    np.testing.assert_allclose(got, expected)
    assert 0 < got.mean() < 1


def test_cost_terms_are_each_candidates_energy_tempo_stops_ratio_and_held_pose(
    library: PhraseLibrary,
) -> None:
    weights = PlannerWeights()
    terms = _phrase_terms(_tables(library), weights)
    rng = np.random.default_rng(3)
    for meter in (3, 4):
        bars = _bars(_song(meter))
        bars.energy[::5] = 0.0  # quiet bars, where a held pose may be danced
        spans = _spans(bars, weights, "auto", 0)
        for k in rng.integers(0, bars.n_bars - 1, 20):
            for p in [
                *rng.integers(0, library.phrase_key.size, 30),
                *np.nonzero(library.phrase_still)[0][:5],
            ]:
                length = PHRASE_BEATS.index(int(library.phrase_beats[p]))
                got = terms[p] @ spans.terms[k]
                kind = length + len(PHRASE_BEATS) * int(library.phrase_still[p])
                for i in (0, 1):
                    # the search's lookup of which candidates a span can take is exactly this
                    assert spans.allowed[k, kind, i] == (got[i] < 1e300)
                    if not spans.fits[k, length, i] or (library.phrase_still[p] and spans.loud[k, i]):
                        assert got[i] >= 1e300
                        continue
                    stretch = spans.duration_s[k, i] / library.phrase_duration_s[p]
                    pinned = library.phrase_pinned_share[int(spans.double[k, length, i]), p]
                    downbeat = library.phrase_downbeat_share[i, p]  # over one bar (i = 0) or two
                    expected = (
                        weights.energy * (library.energy_rank[p] - spans.target[k, i]) ** 2
                        + weights.tempo * (np.log(stretch) / np.log(MAX_STRETCH)) ** 2
                        + spans.off_ratio[k, length, i]
                        + weights.stops * (1.0 - pinned) * spans.steady[k, i]
                        + weights.downbeat * (1.0 - downbeat) * spans.steady[k, i]
                    )
                    assert got[i] == pytest.approx(expected, rel=1e-9, abs=1e-12)
