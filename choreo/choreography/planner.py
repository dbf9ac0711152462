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
* stops: a little for phrases with few real stops among their beat keys (the
  warp pins the stops onto beats, so more stops follow the music more closely);
* floor: leaving the floor area (default 4 m x 4 m, centred), and facing away
  from the audience (+Z) on average;
* reuse: a source second danced again within :data:`REUSE_BARS` bars, mirror
  images and overlapping cuts included, unless the music repeats: a repeated
  section may dance the first occurrence's phrases again or their mirror images.

Floor work and standing never meet at a junction (the transition table has no
such entries); a phrase that gets up or goes down carries the body between them.
Seeded noise among the near-best candidates makes seeds differ; a style that
has no phrase for a stretch falls back to the nearest style, and the plan says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.audio.structure import MusicStructure
from choreo.choreography import ENERGY_LEVELS
from choreo.choreography.library import LIBRARY_FPS, PhraseLibrary, merged_style_note
from choreo.choreography.phrases import PHRASE_BEATS
from choreo.choreography.plan import Plan, Segment
from choreo.errors import ParameterError

__all__ = [
    "ENERGY_LEVELS",
    "MAX_STRETCH",
    "MIN_STRETCH",
    "REUSE_BARS",
    "PlannerWeights",
    "plan_dance",
]

MIN_STRETCH, MAX_STRETCH = 0.8, 1.25
REUSE_BARS = 16
_BEAM = 6
_KEEP_PER_SPAN = 6
_OPENING_STARTS = 48
_FRESH = 8
PHRASE_BEATS_BY_METER = {4: (2, 4, 8), 3: (3, 6)}
"""Phrase lengths that fit a bar of each meter at beat ratios 1, 2 and 1/2."""
_RELAXED_STRETCH = (0.5, 2.0)


@dataclass(frozen=True)
class PlannerWeights:
    """Weights of the planner's costs (see the module docstring)."""

    transition: float = 12.0
    energy: float = 3.0
    tempo: float = 1.0
    ratio: float = 0.25
    area: float = 8.0
    facing: float = 0.6
    reuse: float = 12.0
    fallback: float = 3.0
    stops: float = 2.0
    noise: float = 0.25
    area_half_m: float = 2.0
    area_margin_m: float = 0.4


@dataclass(frozen=True)
class _Bars:
    starts: np.ndarray  # [K + 1] bar boundaries, s, the last one the song's end
    points: list  # per span (bar, n_bars): song times of its beats, both ends included
    steady: np.ndarray
    energy: np.ndarray
    repeat_of: np.ndarray  # [K] the bar of an earlier occurrence this bar repeats, or -1

    @property
    def n_bars(self) -> int:
        return self.starts.size - 1


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
    # each bar's start and the beats more than 50 ms inside it
    first = np.searchsorted(beats_s, bounds[:-1] + 0.05, side="right")
    stop = np.searchsorted(beats_s, bounds[1:] - 0.05, side="left")
    inside = [np.concatenate([[bounds[k]], beats_s[first[k] : stop[k]]]) for k in range(starts.size)]
    points = [
        [
            np.concatenate([*inside[k : k + j], [bounds[k + j]]]) if k + j <= starts.size else None
            for j in (1, 2)
        ]
        for k in range(starts.size)
    ]
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
    return _Bars(bounds, points, steady, energy, repeat_of)


def _energy_target(bar_energy: float, level: str) -> float:
    if level == "auto":
        return 0.1 + 0.85 * bar_energy
    base = {"low": 0.15, "medium": 0.45, "high": 0.75}[level]
    return base + 0.2 * bar_energy


class _Tables:
    """The library's arrays the search reads for every candidate, laid out once per library.

    Gathering one row block per candidate (instead of a dozen library arrays, each
    converted on the way) is what keeps a bar's search cheap; the continuation
    tables hold, per style and set of phrase lengths, each key's candidate
    phrases and their transition costs, as the search looks them up.
    """

    def __init__(self, library: PhraseLibrary):
        self.lib = library
        first, last = library.phrase_seconds
        self.n_secs = int(last.max()) + 1
        span = int((last - first).max()) + 1
        self.secs = np.minimum(first[:, None] + np.arange(span), last[:, None])
        """[P, span] each phrase's source seconds, the last one repeated to fill the row."""
        self.attr = np.stack(
            [
                library.phrase_duration_s,
                library.energy_rank,
                library.phrase_stop_share,
                library.phrase_move[:, 0].astype(np.float64),
                library.phrase_move[:, 1].astype(np.float64),
                library.phrase_turn.astype(np.float64),
            ]
        )
        """[6, P] duration, energy rank, stop share, move x and z, turn."""
        self.length = np.searchsorted(np.array(PHRASE_BEATS), library.phrase_beats)
        """[P] index of each phrase's length in PHRASE_BEATS."""
        self.style_phrases = [np.nonzero(library.phrase_style == s)[0] for s in range(len(library.styles))]
        self._continuations: dict[tuple[int, tuple[int, ...]], tuple[np.ndarray, np.ndarray]] = {}
        self._pools: dict[tuple[int, tuple[int, ...] | None], tuple[np.ndarray, np.ndarray]] = {}

    def continuations(self, style: int, columns: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Per key, the phrases of ``columns``' lengths starting at its cheapest continuation keys in
        ``style`` ``[2K, T * len(columns)]`` (-1 where none), and their transition costs (inf where none)."""
        found = self._continuations.get((style, columns))
        if found is None:
            lib = self.lib
            keys = lib.next_key[:, style]
            cost = np.where(keys >= 0, lib.next_cost[:, style].astype(np.float64), np.inf)
            phrases = lib.start_phrases[np.maximum(keys, 0)][:, :, list(columns)].reshape(keys.shape[0], -1)
            found = phrases, np.repeat(cost, len(columns), axis=1)
            self._continuations[(style, columns)] = found
        return found

    def pool(self, style: int, lengths: tuple[int, ...] | None) -> tuple[np.ndarray, np.ndarray]:
        """The style's phrases (of ``lengths`` beats, or all) and their durations, in library order."""
        found = self._pools.get((style, lengths))
        if found is None:
            pool = self.style_phrases[style]
            if lengths is not None:
                pool = pool[np.isin(self.lib.phrase_beats[pool], lengths)]
            found = pool, self.lib.phrase_duration_s[pool]
            self._pools[(style, lengths)] = found
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


@dataclass
class _Beam:
    """Hypotheses ending at one bar, as parallel arrays."""

    cost: np.ndarray
    key: np.ndarray
    x: np.ndarray
    z: np.ndarray
    yaw: np.ndarray
    last_use: np.ndarray  # [H, source seconds] bar of last use
    at_bar: np.ndarray  # [H, bars] phrase started at each bar, -1 if none
    node: np.ndarray  # index into the node records (the plan so far)

    @classmethod
    def concat(cls, beams: list[_Beam]) -> _Beam:
        return cls(*(np.concatenate([getattr(b, f) for b in beams]) for f in cls.__dataclass_fields__))

    def take(self, rows: np.ndarray) -> _Beam:
        return _Beam(*(getattr(self, f)[rows] for f in self.__dataclass_fields__))


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
        # the node records: per advance, parent node, bar, phrase, bars, beat ratio, stretch, repeated bar
        self.records: list[tuple] = []
        self.n_nodes = 1  # node 0 is the empty plan
        self.meter = beats_per_bar
        fits = PHRASE_BEATS_BY_METER[beats_per_bar]
        self.meter_columns = tuple(int(c) for c in np.nonzero(np.isin(PHRASE_BEATS, fits))[0])
        self.all_columns = tuple(range(len(PHRASE_BEATS)))
        self.limit_m = weights.area_half_m - weights.area_margin_m
        # the candidates' attributes, with the stop cost weighted for this run
        self.attr = self.t.attr.copy()
        self.attr[2] = weights.stops * (1.0 - self.attr[2])
        # per bar and span of 1 or 2 bars: duration, song beats, steady
        n = bars.n_bars
        self.spans = [
            [
                (j, bars.points[k][j - 1], bool(bars.steady[k : k + j].all()))
                for j in (1, 2)
                if bars.points[k][j - 1] is not None and k + j <= n
            ]
            for k in range(n)
        ]

    def candidates(
        self, beam: _Beam | None, style: int, steady: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Candidate phrases ``[H, C]``, their transition costs, and which are section repeats.

        Over steady bars only the lengths that fit the meter (2, 4, 8 beats in 4/4; 3, 6 in 3/4) are
        candidates; over unsteady bars every length is.
        """
        lib = self.lib
        columns = self.meter_columns if steady else self.all_columns
        if beam is None:
            pool = lib.style_start_keys[style]
            standing = pool[~lib.key_floor[pool]]
            pool = standing if standing.size else pool
            keys = self.rng.choice(pool, size=min(_OPENING_STARTS, pool.size), replace=False)[None]
            phrases = lib.start_phrases[keys][:, :, list(columns)].reshape(1, -1)
            tc = np.zeros(phrases.shape)
        else:
            table, cost = self.t.continuations(style, columns)
            phrases, tc = table[beam.key], cost[beam.key]
        return phrases, tc, np.zeros(phrases.shape, dtype=bool)

    def fresh(
        self, beam: _Beam | None, bar: int, style: int, steady: bool
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """A few seeded phrases of the style that fit this bar's tempo, whatever their transition cost.

        The transition table offers the smoothest continuations; when none of them fits the tempo,
        or all were danced recently, these keep the dance from looping one phrase.
        """
        if beam is None:
            return None
        pool, duration = self.t.pool(style, PHRASE_BEATS_BY_METER[self.meter] if steady else None)
        fits = None
        for _, points, _ in self.spans[bar]:
            d = points[-1] - points[0]
            span_fits = (duration >= d / MAX_STRETCH) & (duration <= d / MIN_STRETCH)
            fits = span_fits if fits is None else fits | span_fits
        if fits is None:
            return None
        pool = pool[fits]
        if pool.size == 0:
            return None
        chosen = self.rng.choice(pool, size=min(_FRESH, pool.size), replace=False)
        phrases = np.broadcast_to(chosen, (beam.key.size, chosen.size))
        return phrases, self.lib.transition_cost(beam.key, self.lib.phrase_key[chosen]).astype(np.float64)

    def repeats(self, beam: _Beam, bar: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The phrases the first occurrence of a repeated section danced at this bar, and their mirrors."""
        origin = int(self.bars.repeat_of[bar])
        if origin < 0:
            return None
        p0 = beam.at_bar[:, origin]
        if not (p0 >= 0).any():
            return None
        safe = np.maximum(p0, 0)
        phrases = np.stack([safe, self.lib.mirror_phrase[safe]], axis=1)
        start = self.lib.phrase_key[phrases]
        features = self.lib.key_features
        diff = features[start].astype(np.float32) - features[beam.key][:, None].astype(np.float32)
        tc = (np.mean(diff**2, axis=-1) * 3).astype(np.float64)
        tc[self.lib.key_floor[start] != self.lib.key_floor[beam.key][:, None]] = np.inf
        tc[p0 < 0] = np.inf
        return phrases, tc, np.ones(phrases.shape, dtype=bool)

    def expand(self, beam: _Beam | None, bar: int, style: int, relaxed: bool) -> list[tuple[int, _Beam]]:
        """The best continuations of ``beam`` at ``bar`` in ``style``, as ``(end bar, beam)`` pairs.

        Every candidate's cost for one and for two bars is computed in one pass over ``[spans, H, C]``
        arrays; each term is the same elementwise arithmetic as for a single span.
        """
        w, bars = self.w, self.bars
        steady_here = bool(bars.steady[bar]) and not relaxed
        phrases, tc, repeat = self.candidates(beam, style, steady_here)
        fresh = self.fresh(beam, bar, style, steady_here)
        if fresh is not None:
            phrases = np.concatenate([phrases, fresh[0]], axis=1)
            tc = np.concatenate([tc, fresh[1]], axis=1)
            repeat = np.concatenate([repeat, np.zeros(fresh[0].shape, dtype=bool)], axis=1)
        if beam is not None:
            extra = self.repeats(beam, bar)
            if extra is not None:
                phrases = np.concatenate([phrases, extra[0]], axis=1)
                tc = np.concatenate([tc, extra[1]], axis=1)
                repeat = np.concatenate([repeat, extra[2]], axis=1)
        valid = (phrases >= 0) & np.isfinite(tc)
        p = np.maximum(phrases, 0)
        duration, energy_rank, stops, move_x, move_z, turn = self.attr[:, p]
        if beam is not None:
            c, s = np.cos(beam.yaw)[:, None], np.sin(beam.yaw)[:, None]
            x = beam.x[:, None] + c * move_x + s * move_z
            z = beam.z[:, None] - s * move_x + c * move_z
            yaw = beam.yaw[:, None] + turn
            excess = (
                np.maximum(np.abs(x) - self.limit_m, 0) ** 2 + np.maximum(np.abs(z) - self.limit_m, 0) ** 2
            )
            facing = (1 - np.cos(0.5 * (beam.yaw[:, None] + yaw))) * 0.5
            h = np.arange(phrases.shape[0])[:, None, None]
            recent = bar - beam.last_use[h, self.t.secs[p]].max(axis=-1) < REUSE_BARS
            base = beam.cost[:, None] + w.transition * tc + w.reuse * (recent & ~repeat)
            per_bar = w.area * 4 * excess + w.facing * facing
        else:  # the opening phrase starts at the centre of the floor, facing the audience
            x, z, yaw = move_x, move_z, turn
            base = w.transition * tc
            per_bar = np.zeros(phrases.shape)
        lo, hi = _RELAXED_STRETCH if relaxed else (MIN_STRETCH, MAX_STRETCH)
        spans = [(j, points, steady and not relaxed) for j, points, steady in self.spans[bar]]
        if not spans:
            return []
        lengths = np.array(PHRASE_BEATS)
        # per span: its bars, duration, song beats m, steady; the lengths that fit and those not 1:1
        n_bars = np.array([j for j, _, _ in spans])[:, None, None]
        span_s = np.array([points[-1] - points[0] for _, points, _ in spans])[:, None, None]
        m = [points.size - 1 if steady else 1 for _, points, steady in spans]
        steady_j = np.array([steady for _, _, steady in spans])
        fits = np.array(
            [
                (lengths == mj) | (lengths == 2 * mj) | (2 * lengths == mj)
                if st
                else np.ones(lengths.size, bool)
                for mj, (_, _, st) in zip(m, spans, strict=True)
            ]
        )
        off_ratio = w.ratio * (steady_j[:, None] & (lengths != np.array(m)[:, None]))
        target = np.array(
            [_energy_target(float(bars.energy[bar : bar + j].mean()), self.energy) for j, _, _ in spans]
        )[:, None, None]
        stretch = span_s / duration
        ok = valid & (stretch >= lo) & (stretch <= hi) & fits[:, self.t.length[p]]
        any_ok = ok.reshape(len(spans), -1).any(axis=1)
        if not any_ok.any():
            return []
        cost = base + n_bars * (
            per_bar
            + w.energy * (energy_rank - target) ** 2
            + w.tempo * (np.log(stretch) / np.log(MAX_STRETCH)) ** 2
            + off_ratio[:, self.t.length[p]]
            + stops * steady_j[:, None, None]
        )
        out = []
        for i, (j, _, steady) in enumerate(spans):
            if not any_ok[i]:
                continue
            noisy = cost[i] + w.noise * self.rng.random(cost[i].shape)
            noisy = np.where(ok[i], noisy, np.inf)
            flat = noisy.ravel()
            k = min(_KEEP_PER_SPAN, int(ok[i].sum()))
            best = np.argpartition(flat, k - 1)[:k]
            rows, cols = np.unravel_index(best, noisy.shape)
            chosen = p[rows, cols]
            ratio = self.lib.phrase_beats[chosen] / m[i] if steady else np.zeros(chosen.size)
            origin = np.where(repeat[rows, cols], bars.repeat_of[bar], -1)
            place = (x[rows, cols], z[rows, cols], yaw[rows, cols])
            new = self.advance(
                beam, bar, j, rows, chosen, flat[best], place, ratio, stretch[i, rows, cols], origin
            )
            out.append((bar + j, new))
        return out

    def advance(
        self,
        beam: _Beam | None,
        bar: int,
        j: int,
        rows: np.ndarray,
        chosen: np.ndarray,
        cost: np.ndarray,
        place: tuple[np.ndarray, np.ndarray, np.ndarray],
        ratio: np.ndarray,
        stretch: np.ndarray,
        origin: np.ndarray,
    ) -> _Beam:
        """The hypotheses that dance ``chosen`` from ``bar`` over ``j`` bars after ``beam``'s ``rows``,
        ending at ``place`` (x, z, yaw), with the node records of their segments."""
        n = chosen.size
        if beam is None:
            last_use = np.full((n, self.t.n_secs), -(10**6), dtype=np.int32)
            at_bar = np.full((n, self.bars.n_bars), -1, dtype=np.int32)
            parent = np.zeros(n, dtype=np.int64)
        else:
            last_use = beam.last_use[rows]
            at_bar = beam.at_bar[rows]
            parent = beam.node[rows]
        at_bar[:, bar] = chosen
        last_use[np.arange(n)[:, None], self.t.secs[chosen]] = bar
        nodes = np.arange(self.n_nodes, self.n_nodes + n)
        self.n_nodes += n
        self.records.append((parent, np.full(n, bar), chosen, np.full(n, j), ratio, stretch, origin))
        return _Beam(
            cost,
            (self.lib.phrase_key[chosen] + self.lib.phrase_beats[chosen]).astype(np.int64),
            *place,
            last_use,
            at_bar,
            nodes,
        )

    def segments(self, node: int) -> list[tuple]:
        """The plan that ends at ``node``: per segment its bar, phrase, bars, beat ratio, stretch and
        the bar it dances again (None if none)."""
        parent, bar, phrase, n_bars, ratio, stretch, origin = (
            np.concatenate([[0], *column]) for column in zip(*self.records, strict=True)
        )
        out = []
        while node:
            repeat = int(origin[node])
            out.append(
                (
                    int(bar[node]),
                    int(phrase[node]),
                    int(n_bars[node]),
                    float(ratio[node]),
                    float(stretch[node]),
                    repeat if repeat >= 0 else None,
                )
            )
            node = int(parent[node])
        return out[::-1]


def _prune(beams: list[_Beam]) -> _Beam:
    """The cheapest hypothesis per end key, the :data:`_BEAM` cheapest of those, cheapest first."""
    merged = beams[0] if len(beams) == 1 else _Beam.concat(beams)
    order = np.argsort(merged.cost, kind="stable")
    keys = merged.key.tolist()
    seen: set[int] = set()
    keep = []
    for i in order.tolist():
        if keys[i] not in seen:
            seen.add(keys[i])
            keep.append(i)
            if len(keep) == _BEAM:
                break
    return merged.take(np.array(keep))


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
        for relaxed in (False, True):
            for s in order:
                found = search.expand(beam, bar, s, relaxed)
                if found:
                    break
            if found:
                break
        for end, new in found:
            if s != style_index:
                new.cost += search.w.fallback
            pending[end].append(new)
    best = _prune(pending[bars.n_bars])
    return _to_plan(library, bars, search.segments(int(best.node[0])), style, energy, seed, style_index)


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
    for i, (bar, p, n_bars, ratio, stretch, repeat) in enumerate(chosen):
        start_index[bar] = i
        points = bars.points[bar][n_bars - 1]
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
