"""Music structure for the choreography planner: bars, their energy, their sections, and where the beat holds.

Everything is derived from :class:`~choreo.audio.music_features.MusicFeatures`
(the beats, downbeats, onset envelope, MFCC and chroma already computed), so
the structure of a song costs a few milliseconds on top of its features and
needs no audio.

* **Bars** are groups of ``beats_per_bar`` beats starting on the downbeats
  (three or four beats: the meter the downbeat estimate chose). A bar is
  *steady* when its beats are evenly spaced (each interval within
  :data:`STEADY_INTERVAL_RATIO` of the local beat period) and stand out (the
  onset at most of its beats is :data:`BEAT_SALIENCE_MIN` times the mean
  onset around them: the beat tracker also lays a grid over noise, a sustained
  chord or silence, where the "beats" are only the larger random rises, about
  1.2 times the mean). Stretches without steady bars (a beatless intro or
  outro, a rubato passage, a whole beatless piece) are covered by bars of a
  nominal length, ``beats_per_bar`` beats at the song's tempo (120 BPM where no
  bar is steady), marked ``steady=False``; dance them at their own pace, on the
  onsets. Only the beats of steady bars are reported as beats.
* **Energy** per bar, 0 to 1, is the mean of two parts: loudness (mean log-mel
  level, 0 at :data:`ENERGY_RANGE_DB` below the loudest bar, 1 at it) and
  onset activity (mean onset strength over the 90th percentile of bars').
* **Breaks** are where the music stops after it has been going: a stop-time hit,
  a beat or more of silence, a drop to a sustained chord. A break is a stretch of
  at least :data:`BREAK_MIN_S` (and, from its hit to the return, :data:`BREAK_MIN_BEATS`
  beats) whose onset strength stays under
  :data:`BREAK_QUIET_FRACTION` of the loudest of the :data:`BREAK_CONTEXT_S`
  before it, after a context at least half as busy as the song usually is,
  and at least :data:`BREAK_CONTRAST` times longer than any such gap in that
  context (a ballad that always leaves two beats between its chords has no
  breaks). It runs from the last accent before the quiet (the hit the dancer
  freezes on) to the onset where the music comes back; it is found on frames,
  not bars, so a one-beat stop inside a bar counts. Quiet bars (a soft
  breakdown) are told by their energy instead.
* **Sections** come from a bar-level self-similarity matrix of timbre (MFCC)
  and harmony (chroma): boundaries where a checkerboard kernel finds novelty,
  then sections clustered by their mean features, so a chorus that comes back
  gets its earlier label. A bar-level matrix is ``bars^2``: 600 bars (a
  20-minute song) is 360 000 cells.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.ndimage import maximum_filter1d, uniform_filter1d

from choreo.audio.music_features import (
    CHROMA_COLUMNS,
    MFCC_COLUMNS,
    ONSET_ENVELOPE_COLUMN,
    ONSET_PEAK_COLUMN,
    MusicFeatures,
)
from choreo.errors import ParameterError
from choreo.numeric.peaks import find_peaks

__all__ = [
    "BEAT_SALIENCE_MIN",
    "BREAK_CONTEXT_S",
    "BREAK_CONTRAST",
    "BREAK_DROP",
    "BREAK_MIN_BEATS",
    "BREAK_MIN_S",
    "BREAK_QUIET_FRACTION",
    "ENERGY_RANGE_DB",
    "NOMINAL_TEMPO_BPM",
    "SECTION_DISTANCE",
    "SECTION_KERNEL_BARS",
    "STEADY_INTERVAL_RATIO",
    "MusicStructure",
    "analyze_structure",
    "find_breaks",
]

STEADY_INTERVAL_RATIO = 1.2
"""A steady bar's beat intervals lie within this ratio (either way) of the local beat period."""

BEAT_SALIENCE_MIN = 1.5
"""Least median, over a steady bar's beats, of the onset at a beat over the mean onset in the bar around it.

Measured at 30 fps: beats laid over noise and a sustained chord score 1.1 to 1.3;
the median beat of 45 real songs scores 1.6 (rubato strings) to 8.
"""

BREAK_MIN_S = 0.5
"""Least length of a break's quiet: a one-beat stop (a hit, a silent beat, the music back on the next)
leaves about two beats without an onset, 0.67 s at 180 BPM."""

BREAK_MIN_BEATS = 1.5
"""Least length of a break from its hit to the music's return, in beats of the song's tempo: a gap of one
beat between two notes is rhythm, not a stop (*theme*, 80 BPM, has three of 0.73 s). Where the tracker
halves or thirds a fast song's tempo (a 168 BPM waltz tracked at 56) this misses its short breaks: on
``bench/breaks.py`` recall 0.72 with it, 0.81 without, precision 0.90 and 0.88."""

BREAK_QUIET_FRACTION = 0.15
"""A break's onset strength stays under this fraction of the strongest onset of its context.

Chosen with :data:`BREAK_CONTRAST` and the smoothing on ``bench/breaks.py``'s twelve songs (the same
songs it is scored on): 0.1 found 67 % of the cut breaks, 0.15 89 %, 0.2 86 % with more false ones."""

BREAK_CONTEXT_S = 4.0
"""Seconds before a break that it is told against (two bars of 4/4 at 120 BPM)."""

_BREAK_SMOOTHING_FRAMES = 3
"""The onset strength is averaged over this many frames first: a reverb tail or a chord's swell pokes
single frames over the quiet level."""

BREAK_CONTRAST = 2.0
"""A break lasts at least this many times the longest quiet gap of its context (1.5 found as many cut
breaks and 40 % more elsewhere in 45 real songs)."""

BREAK_DROP = 0.2
"""A break's mean onset strength is at most this fraction of the mean over its context's frames that are
not quiet: one loud hit in the context does not make the ordinary music after it a break. On
``bench/breaks.py`` 0.3, 0.2 and 0.15 kept precision 0.90, 0.96 and 1.0 at recall 0.72, 0.67 and 0.53;
on the 45 real songs 0.2 keeps 8 of the 27 breaks found without it (every doubtful one by its envelope
gone, ``docs/audio.md``); a click track's one-beat stop (over a noise floor 60 dB down) is kept down to
0.15."""

_ACCENT_LOOKBACK_S = 0.3
"""A break starts on the last onset peak this far before its quiet frames, if there is one."""

NOMINAL_TEMPO_BPM = 120.0
"""Tempo of the nominal bars of a song in which no beat was found."""

ENERGY_RANGE_DB = 24.0
"""Bars this far below the loudest bar's mean level get no loudness energy."""

SECTION_KERNEL_BARS = 4
"""Half-width of the checkerboard kernel: sections shorter than this are not told apart."""

SECTION_DISTANCE = 1.0
"""Distance between the mean scaled features of two sections (average linkage) below which they share a label.

Features are in units of their spread over the song's bars, each half (timbre,
harmony) of unit weight, so two bars a typical spread apart are about 1.4 apart.
"""

_SPREAD_FLOOR = (2.0, 0.04)
"""Least spread of an MFCC (dB) and a chroma (0..1) column over the bars: real songs vary by 2-10 dB and
0.05-0.2; a sustained chord by 0.4 dB and 0.001."""

_MFCC_FOR_TIMBRE = slice(1, 13)
"""MFCC 1-12 of the 20 (0 is the level, which belongs to energy rather than to a section's identity)."""


@dataclass(frozen=True, eq=False)
class MusicStructure:
    """Beats, bars, energy and sections of one song, as the planner reads them.

    Parameters
    ----------
    beat_times : np.ndarray [shape=(beats,)], seconds, increasing: the beats of the steady bars
    downbeat_times : np.ndarray [shape=(downbeats,)], seconds, the first beat of each steady bar
    beats_per_bar : 3 or 4
    bar_starts : np.ndarray [shape=(bars,)], seconds, increasing, ``bar_starts[0] == 0``;
        bar ``k`` spans ``bar_starts[k]`` to ``bar_starts[k + 1]``, the last one to ``duration_s``
    bar_energy : np.ndarray [shape=(bars,)], 0 (quiet, sparse) to 1 (loud, busy)
    section_labels : np.ndarray [shape=(bars,), dtype=int], 0, 1, ... in order of first
        appearance; bars of a repeated section share its label
    steady : np.ndarray [shape=(bars,), dtype=bool], the bar holds ``beats_per_bar`` steady beats
        and starts on a downbeat; False for nominal bars over beatless stretches
    onset_times : np.ndarray [shape=(onsets,)], seconds, increasing: what to dance to where
        the beat is not steady
    tempo_bpm : float, the song's tempo (0 where no bar is steady)
    duration_s : float, the song's duration
    breaks : np.ndarray [shape=(breaks, 2)], seconds: start (the last accent before the music
        stops) and end (where it comes back) of each break, increasing; none by default
    """

    beat_times: np.ndarray
    downbeat_times: np.ndarray
    beats_per_bar: int
    bar_starts: np.ndarray
    bar_energy: np.ndarray
    section_labels: np.ndarray
    steady: np.ndarray
    onset_times: np.ndarray
    tempo_bpm: float
    duration_s: float
    breaks: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))

    def __post_init__(self) -> None:
        if self.beats_per_bar not in (3, 4):
            raise ParameterError(f"beats_per_bar must be 3 or 4, got {self.beats_per_bar!r}")
        bars = np.asarray(self.bar_starts, dtype=np.float64).reshape(-1)
        if bars.size == 0 or bars[0] != 0.0 or np.any(np.diff(bars) <= 0) or bars[-1] >= self.duration_s:
            raise ParameterError("bar_starts must start at 0, increase, and end before duration_s")
        for name in ("bar_energy", "section_labels", "steady"):
            if np.shape(getattr(self, name)) != bars.shape:
                raise ParameterError(
                    f"{name} must have one value per bar ({bars.size}), got {np.shape(getattr(self, name))}"
                )
        object.__setattr__(self, "beat_times", np.asarray(self.beat_times, dtype=np.float64).reshape(-1))
        object.__setattr__(
            self, "downbeat_times", np.asarray(self.downbeat_times, dtype=np.float64).reshape(-1)
        )
        object.__setattr__(self, "bar_starts", bars)
        object.__setattr__(self, "bar_energy", np.asarray(self.bar_energy, dtype=np.float64))
        object.__setattr__(self, "section_labels", np.asarray(self.section_labels, dtype=np.int64))
        object.__setattr__(self, "steady", np.asarray(self.steady, dtype=bool))
        object.__setattr__(self, "onset_times", np.asarray(self.onset_times, dtype=np.float64).reshape(-1))
        object.__setattr__(self, "beats_per_bar", int(self.beats_per_bar))
        object.__setattr__(self, "tempo_bpm", float(self.tempo_bpm))
        object.__setattr__(self, "duration_s", float(self.duration_s))
        breaks = np.asarray(self.breaks, dtype=np.float64).reshape(-1, 2)
        if np.any(breaks[:, 1] <= breaks[:, 0]) or np.any(breaks[1:, 0] < breaks[:-1, 1]):
            raise ParameterError("breaks must be (start, end) pairs that end after they start, in order")
        object.__setattr__(self, "breaks", breaks)

    @property
    def n_bars(self) -> int:
        """Number of bars."""
        return int(self.bar_starts.size)

    @property
    def bar_ends(self) -> np.ndarray:
        """End time of each bar, seconds: the next bar's start, ``duration_s`` for the last."""
        return np.append(self.bar_starts[1:], self.duration_s)


def analyze_structure(features: MusicFeatures, *, beats_per_bar: int | None = None) -> MusicStructure:
    """Bars, bar energy, sections and steadiness of a song from its features.

    Parameters
    ----------
    features : the song's :class:`MusicFeatures` (``duration_s > 0``)
    beats_per_bar : 3 or 4 to impose a meter; None takes the one the downbeats were
        estimated with (4 where there are none, or where no bar is steady)

    Returns
    -------
    MusicStructure
        Bars covering ``0..duration_s``; a song without beats gets nominal bars, all unsteady.

    Raises
    ------
    ParameterError
        ``beats_per_bar`` is not 3, 4 or None, or the song has no frames.

    Examples
    --------
    >>> structure = analyze_structure(analyze_song("song.ogg", fps=30))  # doctest: +SKIP
    >>> structure.bar_starts[structure.section_labels == structure.section_labels[8]]  # doctest: +SKIP
    """
    if beats_per_bar is not None and beats_per_bar not in (3, 4):
        raise ParameterError(f"beats_per_bar must be 3, 4 or None, got {beats_per_bar!r}")
    if features.n_frames == 0 or features.duration_s <= 0:
        raise ParameterError("the song has no frames: it has no structure")
    fps = features.fps
    tracked = features.beat_times
    meter = beats_per_bar if beats_per_bar is not None else _meter_of(tracked, features.downbeat_times)
    envelope = features.features[:, ONSET_ENVELOPE_COLUMN].astype(np.float64)
    first = _first_downbeat_index(tracked, features.downbeat_times, meter)
    bars = _steady_bars(tracked, envelope, fps=fps, meter=meter, first=first)
    if not bars and beats_per_bar is None:
        meter = 4  # no steady bar: the meter of beats that are not steady says nothing; nominal bars are in 4
    tempo_bpm = features.tempo_bpm if bars else 0.0
    nominal_s = meter * 60.0 / (tempo_bpm if tempo_bpm > 0 else NOMINAL_TEMPO_BPM)
    bar_starts, steady = _cover(
        [(float(tracked[a]), end_s) for a, end_s in bars], duration_s=features.duration_s, nominal_s=nominal_s
    )
    in_steady = np.zeros(tracked.size, dtype=bool)
    for a, _ in bars:
        in_steady[a : a + meter] = True
    frame_spans = _frame_spans(bar_starts, features.duration_s, fps, features.n_frames)
    return MusicStructure(
        beat_times=tracked[in_steady],
        downbeat_times=tracked[[a for a, _ in bars]],
        beats_per_bar=meter,
        bar_starts=bar_starts,
        bar_energy=_bar_energy(features, frame_spans),
        section_labels=_section_labels(features, frame_spans),
        steady=steady,
        onset_times=np.flatnonzero(features.features[:, ONSET_PEAK_COLUMN] > 0) / fps,
        tempo_bpm=tempo_bpm,
        duration_s=features.duration_s,
        breaks=find_breaks(features),
    )


def find_breaks(features: MusicFeatures) -> np.ndarray:
    """``[breaks, 2]`` start and end seconds of the song's breaks (see the module docstring); the beat
    is the song's tempo's (:data:`NOMINAL_TEMPO_BPM` where none was fitted)."""
    fps = features.fps
    beat_s = 60.0 / (features.tempo_bpm if features.tempo_bpm > 0 else NOMINAL_TEMPO_BPM)
    envelope = uniform_filter1d(
        features.features[:, ONSET_ENVELOPE_COLUMN].astype(np.float64), size=_BREAK_SMOOTHING_FRAMES
    )
    peaks = np.flatnonzero(features.features[:, ONSET_PEAK_COLUMN] > 0)
    context = max(2, round(BREAK_CONTEXT_S * fps))
    if envelope.size <= context + 2:
        return np.zeros((0, 2))
    # the loudest onset and the busyness of the `context` frames before each frame
    level = np.full(envelope.size, np.inf)
    level[context:] = maximum_filter1d(envelope, size=context, mode="nearest")[
        context // 2 : envelope.size - context + context // 2
    ]
    busy = uniform_filter1d(envelope, size=context, mode="nearest")
    typical = float(np.median(busy))
    quiet = envelope < BREAK_QUIET_FRACTION * level
    out: list[tuple[float, float]] = []
    t = context
    while t < envelope.size:
        if not quiet[t]:
            t += 1
            continue
        threshold = BREAK_QUIET_FRACTION * level[t]
        loud = np.flatnonzero(envelope[t:] >= threshold)
        if loud.size == 0:  # quiet to the song's end: the song ended, it did not break
            break
        end = t + int(loud[0])
        before = envelope[t - context : t] < threshold
        if (
            end - t >= BREAK_MIN_S * fps
            and busy[t - context // 2 - 1] >= 0.5 * typical
            and end - t >= BREAK_CONTRAST * _longest_run(before)
            and envelope[t:end].mean() <= BREAK_DROP * envelope[t - context : t][~before].mean()
        ):
            accent = peaks[(peaks <= t) & (peaks >= t - _ACCENT_LOOKBACK_S * fps)]
            start = int(accent[-1]) if accent.size else t
            back = peaks[(peaks >= end) & (peaks <= end + _BREAK_SMOOTHING_FRAMES)]
            start_s, end_s = start / fps, (int(back[0]) if back.size else end) / fps
            if end_s - start_s >= BREAK_MIN_BEATS * beat_s:
                out.append((start_s, end_s))
        t = end
    return np.asarray(out, dtype=np.float64).reshape(-1, 2)


def _longest_run(mask: np.ndarray) -> int:
    """Length of the longest run of True in ``mask``."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return int((np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)).max(initial=0))


def _meter_of(beats: np.ndarray, downbeats: np.ndarray) -> int:
    """Beats per bar the downbeats were chosen with: the typical count of beats between them."""
    if downbeats.size < 2 or beats.size < 2:
        return 4
    index = np.searchsorted(beats, downbeats - 1e-6)
    return 3 if int(np.median(np.diff(index))) == 3 else 4


def _first_downbeat_index(beats: np.ndarray, downbeats: np.ndarray, meter: int) -> int:
    """Index in ``beats`` of the first downbeat (0 where none was estimated), below ``meter``."""
    if beats.size == 0 or downbeats.size == 0:
        return 0
    index = int(np.argmin(np.abs(beats - downbeats[0])))
    return index % meter


def _steady_bars(
    beats: np.ndarray, envelope: np.ndarray, *, fps: int, meter: int, first: int
) -> list[tuple[int, float]]:
    """``(first beat index, end_s)`` of every bar of ``meter`` beats from beat ``first`` on that is steady.

    A bar ends on the next bar's downbeat, or one local beat period after its last
    beat where the song's beats end.
    """
    if beats.size < meter:
        return []
    intervals = np.diff(beats)
    # Local period: the median interval over the two bars around each interval.
    window = 2 * meter
    local = np.array(
        [np.median(intervals[max(0, i - window) : i + window + 1]) for i in range(intervals.size)]
    )
    regular = np.abs(np.log(intervals / local)) <= math.log(STEADY_INTERVAL_RATIO)
    frames = np.clip(np.rint(beats * fps).astype(np.int64), 0, envelope.size - 1)
    around = max(1, round(float(np.median(local)) * fps * meter))
    mean_around = uniform_filter1d(envelope, size=around | 1, mode="constant")[frames]
    at_beat = maximum_filter1d(envelope, size=3)[frames]
    salience = np.where(mean_around > 0, at_beat / np.maximum(mean_around, 1e-12), 0.0)
    bars = []
    for start in range(first, beats.size - meter + 1, meter):
        stop = start + meter  # the next bar's downbeat
        if not (
            np.all(regular[start : min(stop, intervals.size)])
            and np.median(salience[start:stop]) >= BEAT_SALIENCE_MIN
        ):
            continue
        end_s = beats[stop] if stop < beats.size else beats[-1] + local[-1]
        bars.append((start, float(end_s)))
    return bars


def _cover(
    steady_spans: list[tuple[float, float]], *, duration_s: float, nominal_s: float
) -> tuple[np.ndarray, np.ndarray]:
    """Bar starts covering ``0..duration_s``: the steady bars, and nominal bars over the gaps.

    A gap of length ``g`` between, before or after steady bars gets
    ``max(1, round(g / nominal_s))`` equal unsteady bars.
    """
    starts: list[float] = []
    steady: list[bool] = []
    cursor = 0.0

    def fill(until: float) -> None:
        gap = until - cursor
        if gap > 1e-6:
            count = max(1, round(gap / nominal_s))
            starts.extend(cursor + gap * np.arange(count) / count)
            steady.extend([False] * count)

    for start_s, end_s in steady_spans:
        if start_s >= duration_s:
            break
        fill(start_s)
        starts.append(start_s)
        steady.append(True)
        cursor = min(end_s, duration_s)
    fill(duration_s)
    return np.asarray(starts, dtype=np.float64), np.asarray(steady, dtype=bool)


def _frame_spans(bar_starts: np.ndarray, duration_s: float, fps: int, n_frames: int) -> np.ndarray:
    """``[bars, 2]`` first and one-past-last feature row of each bar (at least one row each)."""
    edges = np.clip(np.rint(np.append(bar_starts, duration_s) * fps).astype(np.int64), 0, n_frames)
    first = np.minimum(edges[:-1], n_frames - 1)
    return np.stack([first, np.maximum(edges[1:], first + 1)], axis=1)


def _bar_means(values: np.ndarray, spans: np.ndarray) -> np.ndarray:
    """Mean of ``values`` rows over each bar's frame span."""
    cumulative = np.concatenate([np.zeros((1, *values.shape[1:])), np.cumsum(values, axis=0)])
    lengths = (spans[:, 1] - spans[:, 0]).reshape(-1, *([1] * (values.ndim - 1)))
    return (cumulative[spans[:, 1]] - cumulative[spans[:, 0]]) / lengths


def _bar_energy(features: MusicFeatures, spans: np.ndarray) -> np.ndarray:
    """Per-bar energy in 0..1: half relative loudness, half relative onset activity."""
    rows = features.features.astype(np.float64)
    level_db = _bar_means(rows[:, MFCC_COLUMNS][:, 0] / math.sqrt(128.0), spans)  # mean log-mel dB
    loudness = np.clip(1.0 - (level_db.max() - level_db) / ENERGY_RANGE_DB, 0.0, 1.0)
    activity = _bar_means(rows[:, ONSET_ENVELOPE_COLUMN], spans)
    busy = float(np.percentile(activity, 90))
    activity = np.clip(activity / busy, 0.0, 1.0) if busy > 0 else np.zeros_like(activity)
    return 0.5 * (loudness + activity)


def _bar_features(features: MusicFeatures, spans: np.ndarray) -> np.ndarray:
    """``[bars, 24]`` timbre and harmony per bar, centred and scaled per column, each half of equal weight.

    Each column is divided by its spread over the bars, but never by less than
    :data:`_SPREAD_FLOOR` of its kind: a song that does not change has no
    sections, and its numerical jitter must not be scaled up into some.
    """
    rows = features.features.astype(np.float64)
    timbre = _bar_means(rows[:, MFCC_COLUMNS][:, _MFCC_FOR_TIMBRE], spans)
    harmony = _bar_means(rows[:, CHROMA_COLUMNS], spans)
    parts = []
    for part, floor in zip((timbre, harmony), _SPREAD_FLOOR, strict=True):
        scaled = (part - part.mean(axis=0)) / np.maximum(part.std(axis=0), floor)
        parts.append(scaled / math.sqrt(part.shape[1]))
    return np.concatenate(parts, axis=1)


def _section_labels(features: MusicFeatures, spans: np.ndarray) -> np.ndarray:
    """A label per bar: novelty boundaries on the bar self-similarity, sections clustered by their means."""
    bars = _bar_features(features, spans)
    count = bars.shape[0]
    if count < 2 * SECTION_KERNEL_BARS:
        return np.zeros(count, dtype=np.int64)
    unit = bars / np.maximum(np.linalg.norm(bars, axis=1, keepdims=True), 1e-12)
    boundaries = np.concatenate([[0], _novelty_boundaries(unit @ unit.T), [count]])
    means = np.stack([bars[a:b].mean(axis=0) for a, b in pairwise(boundaries)])
    if means.shape[0] == 1:
        return np.zeros(count, dtype=np.int64)
    clusters = fcluster(linkage(means, method="average"), SECTION_DISTANCE, criterion="distance")
    order: dict[int, int] = {}  # renumber 0, 1, ... in order of first appearance
    for cluster in clusters:
        order.setdefault(int(cluster), len(order))
    section = np.array([order[int(c)] for c in clusters], dtype=np.int64)
    return np.repeat(section, np.diff(boundaries))


def _novelty_boundaries(similarity: np.ndarray) -> np.ndarray:
    """Bars where a new section starts: peaks of a Gaussian-tapered checkerboard kernel along the diagonal."""
    half = SECTION_KERNEL_BARS
    offsets = np.arange(-half, half) + 0.5
    taper = np.exp(-0.5 * (offsets / (0.5 * half)) ** 2)
    kernel = np.outer(np.sign(offsets), np.sign(offsets)) * np.outer(taper, taper)
    count = similarity.shape[0]
    padded = np.pad(similarity, half, mode="edge")
    novelty = np.array([np.sum(kernel * padded[k : k + 2 * half, k : k + 2 * half]) for k in range(count)])
    novelty[:half] = novelty[count - half + 1 :] = 0.0  # edge padding invents no boundary
    novelty = np.maximum(novelty, 0.0)
    if novelty.max() <= 0:
        return np.zeros(0, dtype=np.int64)
    peaks = find_peaks(novelty, distance=half, height=0.2 * novelty.max())
    return peaks[(peaks > 0) & (peaks < count)]
