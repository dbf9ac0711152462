"""Plan a dance: a beam search over library phrases, bar by bar.

Junctions fall on bar starts; a segment covers one or two bars. A phrase of
``n`` pulse beats fits ``m`` song beats when its beat ratio ``n / m`` is 1, 2 or
1/2 and the remaining stretch is within :data:`MIN_STRETCH`..:data:`MAX_STRETCH`;
bars without a steady beat take any phrase of about their length, danced at
its own pace. Each hypothesis carries its own history (where the dancer stands
and faces, which source seconds it has used, which phrase it danced at each
bar), so the rules that are not Markov (reuse, repeated sections) hold
exactly, which plain Viterbi over phrases could not do.

Costs, all in one unit (about 1 for a clearly worse choice):

* transition: the precomputed pose-and-velocity distance (continuing the same
  clip costs nothing);
* energy: the phrase's energy quantile in its style against the bars' target
  (big moves on loud bars, small on quiet ones, shifted by ``energy``);
* tempo: log-stretch squared, and a little for half or double time;
* downbeats: for phrases whose big moves miss the bar's downbeats (the hit energy
  on the keys that fall on them, :attr:`PhraseLibrary.phrase_downbeat_share`), over
  steady bars; and a bar that starts a section of the music (its label changes)
  raises its energy target by ``PlannerWeights.section_lift``, so a section comes in
  with a big move;
* stops: for phrases with few stops that the warp can pin onto beats (real
  stops, spaced evenly enough; :attr:`PhraseLibrary.phrase_pinned_share`), and
  in double time for stops that would fall between two song beats: the
  dance's stops on the song's beats are what makes it follow this song;
* floor: leaving the floor area (default 4 m x 4 m, centred), and facing away
  from the audience (+Z) on average;
* reuse: a source second danced again within :data:`REUSE_BARS` bars, mirror
  images and overlapping cuts included, unless the music repeats: a repeated
  section may dance the first occurrence's phrases again or their mirror images;
  and, less, the share of the phrase's source seconds danced at all before
  (``stale``), so a long song goes through the library before it comes back.

A held pose (a phrase that barely moves, :attr:`PhraseLibrary.phrase_still`) is
danced only over bars whose energy is under half the song's median, or that a
break in the music (:attr:`MusicStructure.breaks`) covers for at least half:
over music that goes on it would be a stall. Every break is held: the plan
carries the song's breaks (``Plan.breaks_s``), over which the guide freezes the
dancer in the pose it reached at the break's start and brings it back in where
the music returns (:mod:`choreo.choreography.holds`). Floor work and standing never meet at a
junction (the transition table has no such entries); a phrase that gets up or
goes down carries the body between them.
Seeded noise among the near-best candidates makes seeds differ; a style that
has no phrase for a stretch falls back to the nearest style, and the plan says so.
A bar no phrase fits even then (the song's last bar, cut short by the song's
end, can be shorter than any phrase) is danced by the segment before it, which
stretches over it at its own pace; the plan says so too.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, replace

import numpy as np

from choreo.audio.structure import MusicStructure
from choreo.choreography.library import LIBRARY_FPS, PhraseLibrary
from choreo.choreography.phrases import PHRASE_BEATS
from choreo.contracts.choices import ENERGY_LEVELS
from choreo.contracts.plan import Plan, Segment
from choreo.errors import ParameterError
from choreo.models import merged_style_note

__all__ = [
    "QUIET_BAR_FRACTION",
    "ENERGY_LEVELS",
    "MAX_STRETCH",
    "MIN_STRETCH",
    "REUSE_BARS",
    "PlannerWeights",
    "plan_dance",
]

MIN_STRETCH, MAX_STRETCH = 0.8, 1.25
QUIET_BAR_FRACTION = 0.5
"""A bar under this fraction of the song's median energy is quiet: a held pose may be danced over it
(the music the stall measure, :data:`choreo.metrics.stalls.MUSIC_HOLD_FRACTION`, forgives a pause in).
"""

REUSE_BARS = 16
_BEAM = 6
_KEEP_PER_SPAN = 6
_OPENING_STARTS = 48
_FRESH = 8
_NEVER = -(10**6)
"""Bar of last use of a source second not danced yet."""
PHRASE_BEATS_BY_METER = {4: (2, 4, 8), 3: (3, 6)}
"""Phrase lengths that fit a bar of each meter at beat ratios 1, 2 and 1/2."""
_STRETCH_LIMITS = ((MIN_STRETCH, MAX_STRETCH), (0.5, 2.0), (0.0, np.inf))
"""Stretch limits per relaxation level: the rule, relaxed where nothing fits, and any stretch for
an opening bar that nothing fits even then (a song shorter than any phrase's half)."""


@dataclass(frozen=True)
class PlannerWeights:
    """Weights of the planner's costs (see the module docstring)."""

    transition: float = 12.0
    energy: float = 5.0
    tempo: float = 1.0
    ratio: float = 0.25
    area: float = 8.0
    facing: float = 0.6
    reuse: float = 12.0
    fallback: float = 3.0
    stops: float = 6.0
    downbeat: float = 4.0
    section_lift: float = 0.2
    """Added to the energy target (a quantile, at most 1) of a bar that starts a section of the music."""
    stale: float = 5.0
    noise: float = 0.25
    area_half_m: float = 2.0
    area_margin_m: float = 0.4


@dataclass(frozen=True)
class _Bars:
    starts: np.ndarray  # [K + 1] bar boundaries, s, the last one the song's end
    beats_s: np.ndarray  # the song's beats, increasing
    inner: np.ndarray  # [K, 2] per bar, the range of its beats more than 50 ms inside it
    steady: np.ndarray
    energy: np.ndarray
    repeat_of: np.ndarray  # [K] the bar of an earlier occurrence this bar repeats, or -1
    in_break: np.ndarray  # [K] bool: a break covers at least half of the bar
    section_start: np.ndarray  # [K] bool: a new section of the music begins with the bar

    @property
    def n_bars(self) -> int:
        return self.starts.size - 1

    @property
    def n_beats(self) -> np.ndarray:
        """[K] beats per bar: its start and its inner beats."""
        return 1 + np.maximum(self.inner[:, 1] - self.inner[:, 0], 0)

    def points(self, bar: int, n_bars: int) -> np.ndarray:
        """Song times of the beats of ``n_bars`` bars from ``bar``, both ends included."""
        parts = []
        for k in range(bar, bar + n_bars):
            parts += [self.starts[k : k + 1], self.beats_s[self.inner[k, 0] : self.inner[k, 1]]]
        return np.concatenate([*parts, self.starts[bar + n_bars : bar + n_bars + 1]])


def _bars(music: MusicStructure) -> _Bars:
    starts = np.asarray(music.bar_starts, dtype=np.float64)
    steady = np.asarray(music.steady, dtype=bool)
    energy = np.asarray(music.bar_energy, dtype=np.float64)
    labels = np.asarray(music.section_labels)
    if starts.size == 0 or starts.size != steady.size or starts.size != energy.size:
        raise ParameterError("the music structure's bars are empty or inconsistent")
    if starts[0] > 0.05:  # a lead-in before the first bar is danced freely
        starts = np.concatenate([[0.0], starts])
        steady = np.concatenate([[False], steady])
        energy = np.concatenate([[energy[0]], energy])
        labels = np.concatenate([[-1], labels])
    else:
        starts = starts.copy()
        starts[0] = 0.0
    bounds = np.append(starts, float(music.duration_s))
    beats_s = np.asarray(music.beat_times, dtype=np.float64)  # increasing
    inner = np.stack(
        [
            np.searchsorted(beats_s, bounds[:-1] + 0.05, side="right"),
            np.searchsorted(beats_s, bounds[1:] - 0.05, side="left"),
        ],
        axis=1,
    )
    # a bar repeats an earlier one when it sits at the same place in a section with the same label
    repeat_of = np.full(starts.size, -1)
    section_start = np.concatenate([[0], np.nonzero(labels[1:] != labels[:-1])[0] + 1])
    first_start: dict[int, int] = {}
    for i, s in enumerate(section_start):
        stop_at = section_start[i + 1] if i + 1 < section_start.size else starts.size
        label = int(labels[s])
        if label < 0:
            continue
        if label in first_start:
            origin = first_start[label]
            for k in range(s, stop_at):
                if origin + k - s < s:
                    repeat_of[k] = origin + k - s
        else:
            first_start[label] = s
    return _Bars(
        bounds,
        beats_s,
        inner,
        steady,
        energy,
        repeat_of,
        _in_break(bounds, music.breaks),
        _starts(labels, starts.size),
    )


def _starts(labels: np.ndarray, n_bars: int) -> np.ndarray:
    """[n_bars] bool: the bar's section label differs from the bar before's (not the first bar, nor the
    one after a lead-in; bars past the labels' end start none)."""
    out = np.zeros(n_bars, dtype=bool)
    n = min(labels.size, n_bars)
    out[1:n] = (labels[1:n] != labels[: n - 1]) & (labels[: n - 1] >= 0)
    return out


def _in_break(bounds: np.ndarray, breaks: np.ndarray) -> np.ndarray:
    """[K] whether breaks ``[B, 2]`` cover at least half of each bar between ``bounds`` ``[K + 1]``."""
    breaks = np.asarray(breaks, dtype=np.float64).reshape(-1, 2)
    lo, hi = bounds[:-1, None], bounds[1:, None]
    covered = np.clip(np.minimum(hi, breaks[None, :, 1]) - np.maximum(lo, breaks[None, :, 0]), 0, None)
    return covered.sum(axis=1) >= 0.5 * (bounds[1:] - bounds[:-1])


def _section_lifted(target: np.ndarray, bars: _Bars, lift: float) -> np.ndarray:
    """The spans' energy targets ``[K, 2]``, those starting at a section's first bar raised by
    ``lift`` (at most 1)."""
    raised = target + lift * bars.section_start[:, None]
    return np.minimum(raised, np.maximum(target, 1.0))


def _energy_target(bar_energy: np.ndarray, level: str) -> np.ndarray:
    """The energy rank the bars' phrases should have (elementwise over ``bar_energy``)."""
    if level == "auto":
        return 0.1 + 0.85 * bar_energy
    base = {"low": 0.15, "medium": 0.45, "high": 0.75}[level]
    return base + 0.2 * bar_energy


class _Tables:
    """The library's arrays the search reads for every candidate, laid out once per library.

    One row gather per candidate (instead of a dozen library arrays, each
    converted on the way) keeps a bar's search cheap; the continuation tables
    hold, per style and set of phrase lengths, each key's candidate phrases and
    their transition costs exactly as the search looks them up.
    """

    def __init__(self, library: PhraseLibrary):
        self.lib = library
        first, last = library.phrase_seconds
        self.n_secs = int(last.max()) + 1
        self.n_seconds = (last + 1 - first).astype(np.int64)
        """[P] how many source seconds each phrase covers."""
        ordinal = first[:, None] + np.arange(int((last - first).max()) + 1)
        self.secs = np.minimum(ordinal, last[:, None])
        """[P, span] each phrase's source seconds, the last one repeated to fill the row."""
        self.secs_padded = np.where(ordinal <= last[:, None], ordinal, self.n_secs)
        """[P, span] each phrase's source seconds, the row filled with the never-used column
        ``n_secs`` of a hypothesis's history (see :meth:`_Search.blank_history`)."""
        self.end_key = (library.phrase_key + library.phrase_beats).astype(np.int64)
        """[P] the key each phrase ends at."""
        self.attr = np.stack(
            [
                library.phrase_duration_s,
                library.phrase_move[:, 0].astype(np.float64),
                library.phrase_move[:, 1].astype(np.float64),
                library.phrase_turn.astype(np.float64),
            ],
            axis=1,
        )
        """[P, 4] duration, move x and z, turn."""
        self.start_floor = library.key_floor[library.phrase_key]
        """[P] whether each phrase starts on the floor."""
        self.length = np.searchsorted(np.array(PHRASE_BEATS), library.phrase_beats)
        """[P] index of each phrase's length in PHRASE_BEATS."""
        self.kind = self.length + _LENGTHS * library.phrase_still
        """[P] each phrase's row of :attr:`_Spans.allowed`: its length, among the held poses' if it is one."""
        self.duration = self.attr[:, 0].copy()
        """[P] each phrase's duration, s."""
        self.style_phrases = [np.nonzero(library.phrase_style == s)[0] for s in range(len(library.styles))]
        self._continuations: dict[tuple[int, tuple[int, ...]], tuple[np.ndarray, np.ndarray]] = {}
        self._pools: dict[tuple[int, tuple[int, ...] | None], tuple[np.ndarray, np.ndarray]] = {}
        self._fitting: dict[tuple, np.ndarray] = {}

    def continuations(self, style: int, columns: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Per key, the phrases of ``columns``' lengths starting at its cheapest continuation keys in
        ``style`` ``[2K, T * len(columns)]`` (-1 where none), and their transition costs (inf where none:
        no continuation key, or no phrase of that length there)."""
        found = self._continuations.get((style, columns))
        if found is None:
            lib = self.lib
            keys = lib.next_key[:, style]
            cost = np.where(keys >= 0, lib.next_cost[:, style].astype(np.float64), np.inf)
            phrases = lib.start_phrases[np.maximum(keys, 0)][:, :, list(columns)].reshape(keys.shape[0], -1)
            found = phrases, np.where(phrases >= 0, np.repeat(cost, len(columns), axis=1), np.inf)
            self._continuations[(style, columns)] = found
        return found

    def pool(self, style: int, lengths: tuple[int, ...] | None) -> tuple[np.ndarray, np.ndarray]:
        """The style's phrases (of ``lengths`` beats, or all), in library order, and their durations
        sorted."""
        found = self._pools.get((style, lengths))
        if found is None:
            pool = self.style_phrases[style]
            if lengths is not None:
                pool = pool[np.isin(self.lib.phrase_beats[pool], lengths)]
            found = pool, np.sort(self.lib.phrase_duration_s[pool])
            self._pools[(style, lengths)] = found
        return found

    def fitting(self, style: int, lengths: tuple[int, ...] | None, durations_s: np.ndarray) -> np.ndarray:
        """The phrases of :meth:`pool` whose duration is within the stretch limits of any of
        ``durations_s``, in library order.

        Which phrases fit depends only on where the limits fall among the sorted
        durations, so bars of one tempo share one answer.
        """
        _, by_duration = self.pool(style, lengths)
        lo = np.searchsorted(by_duration, durations_s / MAX_STRETCH, side="left")
        hi = np.searchsorted(by_duration, durations_s / MIN_STRETCH, side="right")
        return self._fitting_at(style, lengths, durations_s, (*lo.tolist(), *hi.tolist()))

    def fitting_per_row(
        self, style: int, lengths: tuple[int, ...] | None, durations_s: np.ndarray, available: np.ndarray
    ) -> list[np.ndarray]:
        """:meth:`fitting` for each row of ``durations_s`` ``[K, 2]`` (where ``available``), the
        limits placed among the sorted durations for all rows at once."""
        _, by_duration = self.pool(style, lengths)
        lo = np.searchsorted(by_duration, durations_s / MAX_STRETCH, side="left").tolist()
        hi = np.searchsorted(by_duration, durations_s / MIN_STRETCH, side="right").tolist()
        out = []
        for k, both in enumerate(available[:, 1].tolist()):
            where = (*lo[k], *hi[k]) if both else (lo[k][0], hi[k][0])
            out.append(self._fitting_at(style, lengths, durations_s[k, : 1 + both], where))
        return out

    def _fitting_at(
        self, style: int, lengths: tuple[int, ...] | None, durations_s: np.ndarray, where: tuple[int, ...]
    ) -> np.ndarray:
        """:meth:`fitting`, given where the limits fall among the sorted durations (the cache key)."""
        key = (style, lengths, *where)
        found = self._fitting.get(key)
        if found is None:
            pool, _ = self.pool(style, lengths)
            duration = self.lib.phrase_duration_s[pool]
            fits = np.zeros(pool.size, dtype=bool)
            for d in durations_s:
                fits |= (duration >= d / MAX_STRETCH) & (duration <= d / MIN_STRETCH)
            found = pool[fits]
            self._fitting[key] = found
        return found


_TABLES: dict[int, tuple[PhraseLibrary, _Tables]] = {}


def _tables(library: PhraseLibrary) -> _Tables:
    """The search tables of ``library``, made on its first plan and kept for the last few libraries."""
    entry = _TABLES.get(id(library))
    if entry is None or entry[0] is not library:
        if len(_TABLES) >= 4:
            del _TABLES[next(iter(_TABLES))]
        entry = (library, _Tables(library))
        _TABLES[id(library)] = entry
    return entry[1]


@dataclass(frozen=True)
class _Spans:
    """Per bar ``[K, 2]``: its spans of one and of two bars (the last axis), as the costs read them."""

    available: np.ndarray  # bool: the span ends inside the song
    duration_s: np.ndarray  # song seconds (1 where not available)
    target: np.ndarray  # energy target
    steady: np.ndarray  # float, 1 where the span's beats are steady (and the search is not relaxed)
    m: np.ndarray  # song beats a phrase's beats are counted against (1 where not steady)
    fits: np.ndarray  # [K, lengths, 2] bool: a phrase of that length fits (False where not available)
    off_ratio: np.ndarray  # [K, lengths, 2] the cost of a beat ratio other than 1
    double: np.ndarray  # [K, lengths, 2] bool: a phrase of that length dances in double time
    loud: np.ndarray  # bool: some bar of the span has at least half the song's median energy
    terms: np.ndarray  # [K, PHRASE_TERMS, 2] the span's side of the energy, tempo, stops and beat
    # ratio costs: a phrase's row of _phrase_terms times this is their sum; at least _UNFIT where the
    # phrase's length does not fit or it is a held pose over loud music
    allowed: np.ndarray  # [K, 2 * lengths, 2] bool: a phrase of that length (the first half) or a held
    # pose of that length (the second) may be danced over the span: exactly where its terms are under _UNFIT


_UNFIT = 1e300
"""The cost term of a phrase the span cannot take (its length does not fit, a held pose over loud
music): such a candidate is not one."""
_LENGTHS = len(PHRASE_BEATS)
PHRASE_TERMS = 7 + 3 * _LENGTHS


def _phrase_terms(tables: _Tables, weights: PlannerWeights) -> np.ndarray:
    """[P, PHRASE_TERMS] each phrase's side of its energy, tempo, stops and beat ratio costs.

    With the energy rank ``r``, the log duration ``l``, the span's energy target ``t`` and log
    duration ``d``, ``w_e (r - t)^2 + w_t ((d - l) / log MAX_STRETCH)^2`` is expanded into products
    of a phrase's and a span's factors; the beat ratio's and the stops' costs (in double time or
    not) go by the phrase's length, one column per length; so all terms of all candidates are one
    matrix product. Columns: the phrase's constant, r, l, 1, held pose, then per length: is it,
    stop cost, stop cost in double time; then the downbeat cost over one bar and over two.
    """
    lib = tables.lib
    rank, log_duration = lib.energy_rank, np.log(lib.phrase_duration_s)
    w_tempo = weights.tempo / np.log(MAX_STRETCH) ** 2
    rows = np.arange(rank.size)
    out = np.zeros((rank.size, PHRASE_TERMS))
    out[:, 0] = weights.energy * rank**2 + w_tempo * log_duration**2
    out[:, 1] = rank
    out[:, 2] = log_duration
    out[:, 3] = 1.0
    out[:, 4] = lib.phrase_still
    out[rows, 5 + tables.length] = 1.0
    out[rows, 5 + _LENGTHS + tables.length] = weights.stops * (1.0 - lib.phrase_pinned_share[0])
    out[rows, 5 + 2 * _LENGTHS + tables.length] = weights.stops * (1.0 - lib.phrase_pinned_share[1])
    out[:, 5 + 3 * _LENGTHS :] = weights.downbeat * (1.0 - lib.phrase_downbeat_share.T)
    return out


def _span_terms(weights: PlannerWeights, spans: _Spans) -> np.ndarray:
    """[K, PHRASE_TERMS, 2] the spans' side of :func:`_phrase_terms`."""
    w_tempo = weights.tempo / np.log(MAX_STRETCH) ** 2
    log_d = np.log(spans.duration_s)
    steady = spans.steady[:, None, :]
    out = np.empty((log_d.shape[0], PHRASE_TERMS, 2))
    out[:, 0] = 1.0
    out[:, 1] = -2 * weights.energy * spans.target
    out[:, 2] = -2 * w_tempo * log_d
    out[:, 3] = weights.energy * spans.target**2 + w_tempo * log_d**2
    out[:, 4] = np.where(spans.loud, _UNFIT, 0.0)
    out[:, 5 : 5 + _LENGTHS] = np.where(spans.fits, spans.off_ratio, _UNFIT)
    out[:, 5 + _LENGTHS : 5 + 2 * _LENGTHS] = steady * ~spans.double
    out[:, 5 + 2 * _LENGTHS : 5 + 3 * _LENGTHS] = steady * spans.double
    out[:, 5 + 3 * _LENGTHS :] = 0.0
    out[:, 5 + 3 * _LENGTHS, 0] = spans.steady[:, 0]  # a one-bar span reads the one-bar column
    out[:, 6 + 3 * _LENGTHS, 1] = spans.steady[:, 1]
    return out


def _spans(bars: _Bars, weights: PlannerWeights, energy: str, relaxed: int) -> _Spans:
    n = bars.n_bars
    k = np.arange(n)
    nxt = np.minimum(k + 1, n - 1)
    available = np.stack([np.ones(n, dtype=bool), k + 2 <= n], axis=1)
    ends = np.minimum(k[:, None] + np.array([1, 2]), n)
    duration = np.where(available, bars.starts[ends] - bars.starts[k][:, None], 1.0)
    beats = bars.n_beats
    beats = np.stack([beats, beats + beats[nxt]], axis=1)
    steady = np.stack([bars.steady, bars.steady & bars.steady[nxt]], axis=1) & available & (not relaxed)
    m = np.where(steady, beats, 1)
    lengths = np.array(PHRASE_BEATS)[None, :, None]
    m3, steady3 = m[:, None, :], steady[:, None, :]
    ratio_fits = (lengths == m3) | (lengths == 2 * m3) | (2 * lengths == m3)
    energy_2 = (bars.energy + bars.energy[nxt]) / 2
    loud = (bars.energy >= QUIET_BAR_FRACTION * np.median(bars.energy)) & ~bars.in_break
    spans = _Spans(
        available=available,
        duration_s=duration,
        target=_section_lifted(
            _energy_target(np.stack([bars.energy, energy_2], axis=1), energy), bars, weights.section_lift
        ),
        steady=steady.astype(np.float64),
        m=m,
        fits=np.where(steady3, ratio_fits, True) & available[:, None, :],
        off_ratio=weights.ratio * (steady3 & (lengths != m3)),
        double=steady3 & (lengths == 2 * m3),
        loud=np.stack([loud, loud | loud[nxt]], axis=1),
        terms=np.empty(0),
        allowed=np.empty(0),
    )
    held = spans.fits & ~spans.loud[:, None, :]
    return replace(
        spans, terms=_span_terms(weights, spans), allowed=np.concatenate([spans.fits, held], axis=1)
    )


@dataclass
class _Beam:
    """Hypotheses ending at one bar, as three arrays of rows (few arrays: a bar copies them twice)."""

    state: np.ndarray  # [H, 4] float: cost, x, z, yaw
    ids: np.ndarray  # [H, 2] int: end key, node id (the plan so far)
    history: np.ndarray  # [H, source seconds + 1 + bars] int32: bar of each second's last use, a
    # column never used (what _Tables.secs_padded pads with), then the phrase started at each bar (-1 if none)

    @property
    def cost(self) -> np.ndarray:
        return self.state[:, 0]

    @property
    def x(self) -> np.ndarray:
        return self.state[:, 1]

    @property
    def z(self) -> np.ndarray:
        return self.state[:, 2]

    @property
    def yaw(self) -> np.ndarray:
        return self.state[:, 3]

    @property
    def key(self) -> np.ndarray:
        return self.ids[:, 0]

    @property
    def node(self) -> np.ndarray:
        return self.ids[:, 1]

    def take(self, rows: np.ndarray) -> _Beam:
        return _Beam(self.state[rows], self.ids[rows], self.history[rows])


class _Search:
    """One planning run: the library's arrays, the bars, the weights, the seeded generator."""

    def __init__(
        self,
        library: PhraseLibrary,
        bars: _Bars,
        weights: PlannerWeights,
        energy: str,
        seed: int,
        beats_per_bar: int,
    ):
        self.lib = library
        self.t = _tables(library)
        self.bars = bars
        self.w = weights
        self.energy = energy
        self.rng = np.random.default_rng(seed)
        # node records, one chunk per advance: its first node id and (parents, phrases, whether each
        # repeats a section, bar, bars, relaxed, extended) of its nodes; node 0 is the empty plan
        self.chunk_start: list[int] = []
        self.chunks: list[tuple] = []
        self.n_nodes = 1
        self.meter = beats_per_bar
        fits = PHRASE_BEATS_BY_METER[beats_per_bar]
        self.meter_columns = tuple(int(c) for c in np.nonzero(np.isin(PHRASE_BEATS, fits))[0])
        self.all_columns = tuple(range(len(PHRASE_BEATS)))
        self.limit_m = weights.area_half_m - weights.area_margin_m
        # per phrase: duration, move x and z, turn, then its side of the energy, tempo, stops and beat
        # ratio costs under this run's weights
        self.attr = np.concatenate([self.t.attr, _phrase_terms(self.t, weights)], axis=1)
        self.spans = {0: _spans(bars, weights, energy, 0)}
        self.span_bars = np.array([1.0, 2.0])
        self._fresh_pools: dict[tuple[int, bool], list[np.ndarray]] = {}
        self._repeats: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = {}
        self.bar_column = self.t.n_secs + 1
        """The history column of bar 0's phrase."""
        self.width = self.bar_column + bars.n_bars
        self.row_starts = np.arange(max(_BEAM, 2 * _KEEP_PER_SPAN), dtype=np.int64)[:, None] * self.width
        """[R, 1] where each history row starts in the flattened history."""

    def blank_history(self, n: int) -> np.ndarray:
        """``[n, width]`` the history of hypotheses that have danced nothing: no source second used
        (nor the padding column after them), no phrase at any bar."""
        history = np.full((n, self.width), -1, dtype=np.int32)
        history[:, : self.bar_column] = _NEVER
        return history

    def spans_of(self, relaxed: int) -> _Spans:
        if relaxed not in self.spans:
            self.spans[relaxed] = _spans(self.bars, self.w, self.energy, relaxed)
        return self.spans[relaxed]

    def fresh_pools(self, style: int, steady: bool) -> list[np.ndarray]:
        """Per bar, the phrases of ``style`` its fresh candidates are drawn from (the lengths of the
        meter over steady bars, all over unsteady ones), looked up for all bars at once."""
        found = self._fresh_pools.get((style, steady))
        if found is None:
            spans = self.spans[0]
            found = self.t.fitting_per_row(
                style,
                PHRASE_BEATS_BY_METER[self.meter] if steady else None,
                spans.duration_s,
                spans.available,
            )
            self._fresh_pools[(style, steady)] = found
        return found

    def opening(self, style: int, steady: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The opening bar's candidate phrases ``[1, C]`` (from seeded standing start keys of the
        style), their transition costs (none; inf where a key has no phrase of a length), which are
        section repeats (none) and which are not (all)."""
        lib = self.lib
        columns = self.meter_columns if steady else self.all_columns
        pool = lib.style_start_keys[style]
        standing = pool[~lib.key_floor[pool]]
        pool = standing if standing.size else pool
        keys = self.rng.choice(pool, size=min(_OPENING_STARTS, pool.size), replace=False)[None]
        phrases = lib.start_phrases[keys][:, :, list(columns)].reshape(1, -1)
        return phrases, np.where(phrases >= 0, 0.0, np.inf), *self.repeats(1, phrases.shape[1], 0)

    def repeats(self, h: int, n: int, r: int) -> tuple[np.ndarray, np.ndarray]:
        """``[h, n]`` which of ``n`` candidates per hypothesis are section repeats (the last ``r``) and
        which are not, made once per shape."""
        found = self._repeats.get((h, n, r))
        if found is None:
            repeat = np.zeros((h, n), dtype=bool)
            repeat[:, n - r :] = True
            found = repeat, ~repeat
            self._repeats[(h, n, r)] = found
        return found

    def candidates(
        self, beam: _Beam, bar: int, style: int, steady: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Candidate phrases ``[H, C]`` after ``beam``, their transition costs, and which are section
        repeats and which are not: per hypothesis the continuations of the transition table, then the
        fresh phrases, then the repeats.

        Over steady bars only the lengths that fit the meter (2, 4, 8 beats in 4/4; 3, 6 in 3/4) are
        candidates; over unsteady bars every length is. **Fresh** phrases are a few seeded phrases of
        the style that fit this bar's tempo, whatever their transition cost: the transition table
        offers the smoothest continuations; when none of them fits the tempo, or all were danced
        recently, these keep the dance from looping one phrase. **Repeats** are the phrases the first
        occurrence of a repeated section danced at this bar, and their mirrors. The transition costs
        of both are computed afresh (the table does not hold them), in one pass.
        """
        lib, keys = self.lib, beam.key
        h = keys.size
        table, table_cost = self.t.continuations(style, self.meter_columns if steady else self.all_columns)
        pool = self.fresh_pools(style, steady)[bar]
        chosen = self.rng.choice(pool, size=min(_FRESH, pool.size), replace=False) if pool.size else pool
        origin = int(self.bars.repeat_of[bar])
        p0 = beam.history[:, self.bar_column + origin] if origin >= 0 else None
        if p0 is not None and not (p0 >= 0).any():
            p0 = None
        c, f = table.shape[1], chosen.size
        r = 0 if p0 is None else 2
        phrases = np.empty((h, c + f + r), dtype=np.int64)
        tc = np.empty(phrases.shape)
        table.take(keys, axis=0, out=phrases[:, :c])
        table_cost.take(keys, axis=0, out=tc[:, :c])
        phrases[:, c : c + f] = chosen
        if p0 is not None:
            safe = np.maximum(p0, 0)
            phrases[:, c + f] = safe
            phrases[:, c + f + 1] = lib.mirror_phrase.take(safe)
        if f + r:
            start = lib.phrase_key.take(phrases[:, c:])
            features = lib.key_features_f32
            diff = features.take(start, axis=0) - features.take(keys, axis=0)[:, None]
            fresh_cost = np.add.reduce(diff * diff, axis=-1)
            fresh_cost /= np.float32(diff.shape[-1])
            fresh_cost *= 3  # np.mean(diff**2, axis=-1) * 3 (the same numbers), as library.transition_cost
            fresh_cost[self.t.start_floor.take(phrases[:, c:]) != lib.key_floor.take(keys)[:, None]] = np.inf
            if p0 is not None:
                fresh_cost[p0 < 0, f:] = np.inf
            tc[:, c:] = fresh_cost
        return phrases, tc, *self.repeats(h, c + f + r, r)

    def reuse(self, beam: _Beam, bar: int, p: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[N] whether any source second of candidate ``p`` (after hypothesis ``rows``) was danced
        within REUSE_BARS bars, and the share of its source seconds danced at all before.

        Each candidate's seconds are gathered from its hypothesis's history in one lookup (rows padded
        with the column no phrase uses), so both are one comparison and one reduction.
        """
        index = self.t.secs_padded.take(p, axis=0)
        index += self.row_starts.take(rows, axis=0)
        used = beam.history.take(index)
        recent = np.logical_or.reduce(used > bar - REUSE_BARS, axis=-1)
        return recent, (used > _NEVER).sum(axis=-1) / self.t.n_seconds.take(p)

    def expand(self, beam: _Beam | None, bar: int, style: int, relaxed: int) -> list[tuple[int, _Beam]]:
        """The best continuations of ``beam`` at ``bar`` in ``style``, as ``(end bar, beam)`` pairs.

        Which candidates each span can take (a transition, a length that fits, no held pose over
        loud music, a stretch within the limits) is looked up first, over ``[H, C, 2]``; the costs
        are computed for those candidates alone, for one and for two bars in one pass over ``[N, 2]``
        arrays (the last axis the span). The terms that depend only on phrase and span (energy,
        tempo, stops, beat ratio) are one matrix product of per-phrase and per-span factors laid out
        for all bars before the search. The best of both spans are chosen and advanced together.
        """
        w, bars, t = self.w, self.bars, self.t
        spans = self.spans_of(relaxed)
        steady_here = bool(bars.steady[bar]) and not relaxed
        if beam is None:
            phrases, tc, repeat, original = self.opening(style, steady_here)
        else:
            phrases, tc, repeat, original = self.candidates(beam, bar, style, steady_here)
        h, n_c = phrases.shape
        p = np.maximum(phrases, 0)
        lo, hi = _STRETCH_LIMITS[relaxed]
        stretch = spans.duration_s[bar] / t.duration.take(p)[..., None]
        ok = spans.allowed[bar].take(t.kind.take(p), axis=0)  # [H, C, 2]
        ok &= stretch >= lo
        ok &= stretch <= hi
        ok &= (tc < np.inf)[..., None]  # a candidate without a transition
        n_ok = ok.sum(axis=(0, 1)).tolist()
        live = [i for i in (0, 1) if n_ok[i]]
        if not live:
            return []
        cells = np.flatnonzero(ok[..., 0] | ok[..., 1])  # the candidates, by cell of [H, C]
        rows = cells // n_c
        p = p.ravel().take(cells)
        a = self.attr.take(p, axis=0)  # [N, 4 + PHRASE_TERMS]: duration, move x, move z, turn, terms
        # per candidate, the state it would end in: cost (per span, below), x, z, yaw
        place = np.empty((cells.size, 4))
        tc = tc.ravel().take(cells)
        if beam is not None:
            # per hypothesis: cost, x, z, yaw, then (cos, -sin) and (sin, cos) of its yaw, so that x
            # and z move as x + cos mx + sin mz and z - sin mx + cos mz in two products and two sums
            state = np.empty((beam.state.shape[0], 8))
            state[:, :4] = beam.state
            yaw = beam.state[:, 3]
            np.cos(yaw, out=state[:, 4])
            np.sin(yaw, out=state[:, 6])
            np.negative(state[:, 6], out=state[:, 5])
            state[:, 7] = state[:, 4]
            state = state.take(rows, axis=0)
            np.add(state[:, 1:3] + state[:, 4:6] * a[:, 1:2], state[:, 6:8] * a[:, 2:3], out=place[:, 1:3])
            np.add(state[:, 3], a[:, 3], out=place[:, 3])
            outside = np.maximum(np.abs(place[:, 1:3]) - self.limit_m, 0) ** 2
            excess = outside[:, 0] + outside[:, 1]
            facing = (1 - np.cos(0.5 * (state[:, 3] + place[:, 3]))) * 0.5
            recent, danced = self.reuse(beam, bar, p, rows)
            reuse = w.reuse * recent + w.stale * danced
            base = state[:, 0] + w.transition * tc + reuse * original.ravel().take(cells)
            per_bar = w.area * 4 * excess + w.facing * facing
        else:  # the opening phrase starts at the centre of the floor, facing the audience
            place[:, 1:] = a[:, 1:4]
            base = w.transition * tc
            per_bar = np.zeros(cells.size)
        terms = a[:, 4:] @ spans.terms[bar]  # energy, tempo, stops, beat ratio
        cost = base[:, None] + self.span_bars * (per_bar[:, None] + terms)
        # one draw for the live spans over all cells, the same numbers as one draw per span in turn
        noise = self.rng.random((len(live), h * n_c)).take(cells, axis=1)
        if len(live) == 2:
            ok, cost = ok.reshape(-1, 2).take(cells, axis=0).T, cost.T
        else:
            ok, cost = ok.reshape(-1, 2)[cells, live[0]][None], cost[:, live[0]][None]
        flat = np.where(ok, cost + w.noise * noise, np.inf)
        keep = [min(_KEEP_PER_SPAN, n_ok[i]) for i in live]
        if keep[0] == keep[-1]:
            best = flat.argpartition(keep[0] - 1, axis=1)[:, : keep[0]]
            picked = (best + np.arange(0, flat.size, cells.size)[:, None]).ravel()
            best = best.ravel()
        else:
            best = np.concatenate([row.argpartition(k - 1)[:k] for row, k in zip(flat, keep, strict=True)])
            picked = best + np.repeat(np.arange(len(live)) * cells.size, keep)
        state = place.take(best, axis=0)
        state[:, 0] = flat.take(picked)
        new = self.advance(
            beam,
            bar,
            [(i + 1, k) for i, k in zip(live, keep, strict=True)],
            relaxed,
            rows.take(best),
            p.take(best),
            state,
            repeat.ravel().take(cells.take(best)),
        )
        return [(bar + i + 1, b) for i, b in zip(live, new, strict=True)]

    def advance(
        self,
        beam: _Beam | None,
        bar: int,
        groups: list[tuple[int, int]],
        relaxed: int,
        rows: np.ndarray,
        chosen: np.ndarray,
        state: np.ndarray,
        repeat: np.ndarray,
    ) -> list[_Beam]:
        """The hypotheses that dance ``chosen`` from ``bar`` after ``beam``'s ``rows``, with ``state``
        (cost, x, z, yaw), and the node records of their segments: one beam per group of ``(bars,
        hypotheses)``, in turn."""
        n = chosen.size
        if beam is None:
            history = self.blank_history(n)
            parent = np.zeros(n, dtype=np.int64)
        else:
            history = beam.history.take(rows, axis=0)
            parent = beam.node.take(rows)
        history[:, self.bar_column + bar] = chosen
        secs = self.t.secs.take(chosen, axis=0)
        secs += self.row_starts[:n]
        history.reshape(-1)[secs] = bar
        ids = np.empty((n, 2), dtype=np.int64)
        ids[:, 0] = self.t.end_key.take(chosen)
        ids[:, 1] = np.arange(self.n_nodes, self.n_nodes + n)
        out = []
        first = 0
        for j, count in groups:
            last = first + count
            self.chunk_start.append(self.n_nodes + first)
            self.chunks.append(
                (parent[first:last], chosen[first:last], repeat[first:last], bar, j, relaxed, False)
            )
            out.append(_Beam(state[first:last], ids[first:last], history[first:last]))
            first = last
        self.n_nodes += n
        return out

    def node(self, node: int) -> tuple:
        """Node ``node``'s record: parent, phrase, whether it repeats a section, bar, bars, relaxed,
        extended."""
        c = bisect_right(self.chunk_start, node) - 1
        i = node - self.chunk_start[c]
        parents, phrases, repeats, bar, j, relaxed, extended = self.chunks[c]
        return int(parents[i]), int(phrases[i]), bool(repeats[i]), bar, j, relaxed, extended

    def extend(self, beam: _Beam, bar: int) -> _Beam:
        """``beam``'s hypotheses (at ``bar``, where no phrase fits) with their last segment stretched
        over ``bar`` too, at its own pace, for the fallback cost: they end at the next bar."""
        ids = beam.ids.copy()
        for h, old in enumerate(beam.node.tolist()):
            parent, p, repeat, start, j, relaxed, _ = self.node(old)
            self.chunk_start.append(self.n_nodes)
            self.chunks.append(([parent], [p], [repeat], start, j + 1, relaxed, True))
            ids[h, 1] = self.n_nodes
            self.n_nodes += 1
        state = beam.state.copy()
        state[:, 0] += self.w.fallback
        return _Beam(state, ids, beam.history.copy())

    def segments(self, node: int) -> list[tuple]:
        """The plan that ends at ``node``: per segment its bar, phrase, bars, beat ratio, stretch, the
        bar it dances again (None if none) and whether it was stretched over bars no phrase fits."""
        out = []
        while node:
            parent, p, repeat, bar, j, relaxed, extended = self.node(node)
            if extended:
                ratio = 0.0
                duration_s = self.bars.starts[bar + j] - self.bars.starts[bar]
            else:
                spans = self.spans[relaxed]
                steady = spans.steady[bar, j - 1]
                ratio = float(self.lib.phrase_beats[p] / spans.m[bar, j - 1]) if steady else 0.0
                duration_s = spans.duration_s[bar, j - 1]
            stretch = float(duration_s / self.lib.phrase_duration_s[p])
            origin = int(self.bars.repeat_of[bar]) if repeat else None
            out.append((bar, p, j, ratio, stretch, origin, extended))
            node = parent
        return out[::-1]


def _prune(beams: list[_Beam]) -> _Beam:
    """The cheapest hypothesis per end key, the :data:`_BEAM` cheapest of those, cheapest first."""
    if len(beams) == 1:
        state, ids = beams[0].state, beams[0].ids
    else:
        state = np.concatenate([b.state for b in beams])
        ids = np.concatenate([b.ids for b in beams])
    keys = ids[:, 0].tolist()
    seen: set[int] = set()
    keep = []
    for i in np.argsort(state[:, 0], kind="stable").tolist():
        if keys[i] not in seen:
            seen.add(keys[i])
            keep.append(i)
            if len(keep) == _BEAM:
                break
    if len(beams) == 1:
        history = beams[0].history.take(keep, axis=0)
    else:  # the kept rows only, not all the beams' rows joined first
        rows = [b.history[r] for b in beams for r in range(b.history.shape[0])]
        history = np.stack([rows[i] for i in keep])
    return _Beam(state.take(keep, axis=0), ids.take(keep, axis=0), history)


def plan_dance(
    library: PhraseLibrary,
    music: MusicStructure,
    *,
    style: str,
    energy: str = "auto",
    seed: int = 0,
    weights: PlannerWeights | None = None,
) -> Plan:
    """The plan for a whole song.

    Parameters
    ----------
    library : the phrase library
    music : the song's bars, beats, energy and sections
    style : a style of the library (a merged style maps to the one it joined)
    energy : one of :data:`ENERGY_LEVELS`
    seed : seeds the sampling among near-best candidates

    Raises
    ------
    ParameterError
        On an unknown style or energy level.
    """
    if energy not in ENERGY_LEVELS:
        raise ParameterError(f"unknown energy {energy!r}; choose one of {', '.join(ENERGY_LEVELS)}")
    style_index = library.style_index(style)
    bars = _bars(music)
    search = _Search(library, bars, weights or PlannerWeights(), energy, seed, int(music.beats_per_bar))
    order = library.styles_by_nearness(style_index)
    pending: list[list[_Beam]] = [[] for _ in range(bars.n_bars + 1)]
    beam: _Beam | None = None
    for bar in range(bars.n_bars):
        if bar > 0:
            if not pending[bar]:
                continue
            beam = _prune(pending[bar])
            pending[bar] = []
        found = []
        for relaxed in range(len(_STRETCH_LIMITS) if beam is None else 2):
            for s in order:
                found = search.expand(beam, bar, s, relaxed)
                if found:
                    break
            if found:
                break
        for end, new in found:
            if s != style_index:
                new.state[:, 0] += search.w.fallback
            pending[end].append(new)
        if not found and beam is not None:
            pending[bar + 1].append(search.extend(beam, bar))
    best = _prune(pending[bars.n_bars])
    plan = _to_plan(library, bars, search.segments(int(best.node[0])), style, energy, seed, style_index)
    return _with_breaks(plan, music.breaks)


def _with_breaks(plan: Plan, breaks: np.ndarray) -> Plan:
    """``plan`` holding over the song's ``breaks`` ``[B, 2]``, and saying so in a note."""
    pairs = tuple((float(a), float(b)) for a, b in np.asarray(breaks, dtype=np.float64).reshape(-1, 2))
    if not pairs:
        return plan
    held_s = sum(b - a for a, b in pairs)
    note = f"{len(pairs)} breaks in the music ({held_s:.1f} s): the dancer holds still over them"
    return replace(plan, breaks_s=pairs, notes=(*plan.notes, note))


def _to_plan(
    library: PhraseLibrary,
    bars: _Bars,
    chosen: list[tuple],
    style: str,
    energy: str,
    seed: int,
    style_index: int,
) -> Plan:
    segments = []
    notes = []
    if style in library.merged_styles:
        notes.append(merged_style_note(style, library.merged_styles[style]))
    start_index = {}
    first, last = library.phrase_frames
    for i, (bar, p, n_bars, ratio, stretch, repeat, _) in enumerate(chosen):
        start_index[bar] = i
        points = bars.points(bar, n_bars)
        steady = ratio > 0
        if not steady:
            points = points[[0, -1]]
        key = int(library.phrase_key[p])
        clip = int(library.key_clip[key])
        clip_first = int(library.clip_start[clip])
        phrase_style = int(library.phrase_style[p])
        fallback = None
        if phrase_style != style_index:
            fallback = (
                f"no {library.styles[style_index]} phrase fits here; took {library.styles[phrase_style]}"
            )
        segments.append(
            Segment(
                phrase=int(p),
                start_bar=int(bar),
                n_bars=int(n_bars),
                song_beats_s=tuple(float(t) for t in points),
                clip=library.clip_names[clip],
                source=library.clip_sources[clip],
                source_span_s=(
                    round((int(first[p]) - clip_first) / LIBRARY_FPS, 4),
                    round((int(last[p]) - clip_first) / LIBRARY_FPS, 4),
                ),
                mirrored=bool(library.phrase_mirrored[p]),
                style=library.styles[phrase_style],
                phrase_beats=int(library.phrase_beats[p]),
                beat_ratio=float(ratio),
                stretch=round(float(stretch), 4),
                free=not steady,
                fallback=fallback,
                repeat_of=start_index.get(repeat) if repeat is not None else None,
            )
        )
    if any(s.fallback for s in segments):
        notes.append(f"{sum(bool(s.fallback) for s in segments)} segments fell back to the nearest style")
    if any(s.free for s in segments):
        notes.append(
            f"{sum(s.free for s in segments)} segments have no steady beat (or no phrase fits its tempo): "
            "danced at their own pace"
        )
    extended = sum(bool(c[-1]) for c in chosen)
    if extended:
        notes.append(
            f"{extended} segments also dance the bar after them, too short for any phrase (the song's "
            "last bar, cut short by its end): at their own pace"
        )
    return Plan(
        library_version=library.version,
        library_sha256=library.sha256,
        style=library.styles[style_index],
        energy=energy,
        seed=seed,
        duration_s=float(bars.starts[-1]),
        segments=tuple(segments),
        notes=tuple(notes),
    )
