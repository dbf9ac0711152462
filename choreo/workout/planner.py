"""Plan a workout: the song in 8-counts, moves taught as instructors teach them, on an intensity curve.

The song's steady 4/4 bars are paired into 8-counts from the start of each run
of steady bars (the music's phrase grid); bars outside them (a beatless intro,
an odd bar, the song's cut-short end) are danced freely with the calmest safe
phrase that fits. The 8-counts are grouped into blocks of four (a run's
remainder makes its last blocks five or six long), so moves change only on
16-count boundaries, never mid-phrase. Blocks go in turn: teach a move (the
move repeated on its first side, then mirrored to the other: ``A A A' A'``),
teach another and a third, combine the last two (``B C B' C'``), and again. Each taught move is
one 8-beat library phrase that passes the workout's rules
(:func:`choreo.workout.safety.screen_phrases`) and was not danced before (no
shared source second), chosen for the block's mean target intensity
(:func:`choreo.workout.curves.target_intensity`, the block's mean, matched in the phrases' motion
energy, the mean squared joint speed ``choreo eval`` reports), for looping
well (its end pose near its own start and its mirror image's), for staying on
the spot, for the song's tempo and for the style asked for.

Each 8-count's arms are danced gentler where its move is above its target
(``arm_amplitude``), then its whole body above the feet bigger or smaller
(``body_amplitude``) until the guide's energy per 8-count is the target's
(:func:`choreo.workout.intensity.follow_on_guide`; the pipeline corrects it again from
the finished motion, :func:`choreo.pipeline.follow_intensity`).

The plan is an ordinary :class:`~choreo.contracts.plan.Plan` (the blend performs
it like any other) with a :class:`~choreo.contracts.routine.WorkoutPlan`: the
cue sheet and which phrases were left out, and why.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

import numpy as np

from choreo.audio.structure import MusicStructure
from choreo.choreography.guide import scale_arms
from choreo.choreography.library import PhraseLibrary
from choreo.choreography.planner import MAX_STRETCH, MIN_STRETCH, _Bars, _bars, _to_plan
from choreo.contracts.plan import Plan
from choreo.contracts.routine import Cue, WorkoutPlan
from choreo.errors import ParameterError
from choreo.metrics.freeze import motion_energy
from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion
from choreo.motion.rotations import quat_to_aa
from choreo.workout.curves import target_intensity
from choreo.workout.intensity import follow_on_guide
from choreo.workout.moves import distinguish, move_name, phrase_features
from choreo.workout.safety import screen_phrases

__all__ = [
    "AMPLITUDE_WEIGHT",
    "ARM_MIN",
    "BLOCK",
    "ENERGY_RANGE",
    "ENERGY_TOLERANCE",
    "ENERGY_WEIGHT",
    "FRESH_TOLERANCE",
    "MIN_STYLE_MOVES",
    "NEW_MOVES_PER_MIN",
    "MOVE_BEATS",
    "plan_workout",
]

MOVE_BEATS = 8
MIN_STYLE_MOVES = 12
"""A style with fewer safe 8-beat moves than this gives way to the style with the most."""
ENERGY_WEIGHT = 40.0
"""How much a move missing its block's target energy (by the pool's range) costs against the rest."""
ENERGY_TOLERANCE = 0.08
"""A move whose danced energy is this close to the target's (a share of the pool's range) fits it."""
NEW_MOVES_PER_MIN = 7.0 / 3.0
"""A move is taught again only once the routine has taught this many a minute (the goal is 6 in 3)."""
FRESH_TOLERANCE = 0.25
"""A move not taught yet this close is taken where none is near and the routine has not taught
enough moves yet to teach one again (it needs new moves: at least 6 in 3 minutes)."""
ENERGY_RANGE = (10.0, 90.0)
"""The percentiles of the moves' danced energy that intensity 0 and 1 aim at."""
BLOCK = 4
ARM_MIN = 0.4
"""The least arm amplitude a workout's 8-count is danced with (:attr:`Segment.arm_amplitude
<choreo.contracts.plan.Segment.arm_amplitude>`): the move's arms at 40 %, its legs as they are."""
AMPLITUDE_WEIGHT = 2.0
"""How much a move that must be danced gentler than full (1 - amplitude, squared) costs against the rest."""
"""8-counts per block: a move twice on each side, or two moves in turn on each side."""


@dataclass(frozen=True)
class _Slot:
    bar: int
    n_bars: int
    counted: bool
    """An 8-count (two steady bars of four beats); False: a free stretch."""


def _slots(bars: _Bars) -> list[list[_Slot]]:
    """Runs of consecutive 8-counts and the free bars between them, in song order."""
    steady = bars.steady & (bars.n_beats == 4)
    out: list[list[_Slot]] = []
    k = 0
    while k < bars.n_bars:
        if k + 1 < bars.n_bars and steady[k] and steady[k + 1]:
            if not out or not out[-1][-1].counted:
                out.append([])
            out[-1].append(_Slot(k, 2, True))
            k += 2
        else:
            if not out or out[-1][-1].counted:
                out.append([])
            out[-1].append(_Slot(k, 1, False))
            k += 1
    return out


def _block_sizes(n: int) -> list[int]:
    """A run of ``n`` 8-counts cut into blocks of :data:`BLOCK`, the remainder added to the last ones."""
    if n < BLOCK:
        return [n] if n else []
    sizes = [BLOCK] * (n // BLOCK)
    extra = n % BLOCK
    for i in range(extra):
        sizes[-1 - (i % 2) if len(sizes) > 1 else -1] += 1
    return sizes


def _arm_energies(library: PhraseLibrary, phrases: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each phrase's motion energy at its source's pace, danced fully and with the arms at
    :data:`ARM_MIN` (:func:`choreo.choreography.guide.scale_arms`, as the guide dances it)."""
    first, last = library.phrase_frames
    full, gentle = np.zeros(len(phrases)), np.zeros(len(phrases))
    for i, p in enumerate(np.asarray(phrases).tolist()):
        quats, root = library.frames_quats(
            int(first[p]), int(last[p]), mirrored=bool(library.phrase_mirrored[p])
        )
        for out, amplitude in ((full, 1.0), (gentle, ARM_MIN)):
            rotations = quat_to_aa(scale_arms(quats.astype(np.float64), amplitude))
            motion = Motion(fps=library.fps, root_translation=root, rotations=rotations)
            out[i] = motion_energy(joint_positions(motion), fps=library.fps)
    return full, gentle


_SCREENED: dict[tuple[int, str], tuple[PhraseLibrary, np.ndarray, list[tuple[str, ...]]]] = {}


def _screened(library: PhraseLibrary, impact: str) -> tuple[np.ndarray, list[tuple[str, ...]]]:
    """The library's original phrases and why each is left out of a workout of ``impact`` (the
    screen runs once per library and impact: it reads every frame)."""
    entry = _SCREENED.get((id(library), impact))
    if entry is None or entry[0] is not library:
        if len(_SCREENED) >= 4:
            del _SCREENED[next(iter(_SCREENED))]
        originals = np.nonzero(~library.phrase_mirrored)[0]
        entry = (library, originals, screen_phrases(library, originals, impact=impact))
        _SCREENED[(id(library), impact)] = entry
    return entry[1], entry[2]


def _pair_cost(library: PhraseLibrary, from_keys: np.ndarray, to_keys: np.ndarray) -> np.ndarray:
    """:meth:`PhraseLibrary.transition_cost` of each pair ``(from_keys[i], to_keys[i])``, ``[n]``
    (the diagonal alone: the whole matrix of a large pool would not fit in memory)."""
    features = library.key_features_f32
    cost = np.mean((features[from_keys] - features[to_keys]) ** 2, axis=-1) * 3
    return np.where(library.key_floor[from_keys] != library.key_floor[to_keys], np.inf, cost)


class _Chooser:
    """Picks the moves: the safe phrases, their costs, what the routine has used."""

    def __init__(
        self, library: PhraseLibrary, safe: np.ndarray, style: int, seed: int, count_s: float, impact: str
    ):
        self.lib = library
        self.impact = impact
        self.safe = safe
        self.style = style
        self.rng = np.random.default_rng(seed)
        moves = safe[library.phrase_beats[safe] == MOVE_BEATS]
        self.full = library.phrase_energy.astype(np.float64)
        """Each phrase's motion energy at its source's pace (:func:`_arm_energies` for the moves)."""
        self.gentle = self.full.copy()
        """The same with the arms at :data:`ARM_MIN` (the moves'; other phrases are danced fully)."""
        self.full[moves], self.gentle[moves] = _arm_energies(library, moves)
        stretch = count_s / library.phrase_duration_s[moves]
        fits = (stretch >= MIN_STRETCH) & (stretch <= MAX_STRETCH)
        energy = self.danced_energy(moves[fits] if fits.sum() >= MIN_STYLE_MOVES else moves, count_s)
        bounds = np.percentile(energy, ENERGY_RANGE) if safe.size else np.array([0.0, 1.0])
        self.e_lo, self.e_hi = float(bounds[0]), float(bounds[1])
        self.used_seconds: set[int] = set()
        self.rounds = 0
        """Times every safe move had been taught and the routine began teaching them again."""
        self.used_names: Counter[str] = Counter()
        self.taught: list[int] = []
        self.names = {p: move_name(library, p) for p in safe.tolist()}
        first, last = library.phrase_seconds
        self.seconds = [set(range(int(a), int(b) + 1)) for a, b in zip(first, last, strict=True)]

    def danced_energy(self, phrases: np.ndarray, duration_s: float, amplitude: float = 1.0) -> np.ndarray:
        """The motion energy ``phrases`` have danced over ``duration_s`` with the arms at
        ``amplitude``: a stretch ``s`` plays the motion ``s`` times slower, so its mean squared joint
        speed is divided by ``s ** 2``; between :data:`ARM_MIN` and 1 the arms' share goes with the
        amplitude squared (their speeds scale with it)."""
        stretch = duration_s / self.lib.phrase_duration_s[phrases]
        share = (amplitude**2 - ARM_MIN**2) / (1.0 - ARM_MIN**2)
        gentle = self.gentle[phrases]
        return (gentle + share * (self.full[phrases] - gentle)) / stretch**2

    def amplitude_for(self, phrase: int, target: float, duration_s: float) -> float:
        """The arm amplitude, :data:`ARM_MIN` to 1, at which ``phrase`` danced over ``duration_s``
        has the energy ``target`` asks for (1 where even that is not enough)."""
        one = np.array([phrase])
        full = float(self.danced_energy(one, duration_s)[0])
        gentle = float(self.danced_energy(one, duration_s, ARM_MIN)[0])
        if full - gentle <= 1e-9:
            return 1.0
        share = float(np.clip((self.energy_for(target) - gentle) / (full - gentle), 0.0, 1.0))
        return round(float(np.sqrt(ARM_MIN**2 + share * (1.0 - ARM_MIN**2))), 3)

    def miss(self, phrases: np.ndarray, target: float, duration_s: float) -> np.ndarray:
        """How far ``target``'s energy lies outside what each phrase can dance, :data:`ARM_MIN` to
        full arms, as a share of the pool's range (0 where an amplitude reaches it)."""
        e = self.energy_for(target)
        low = self.danced_energy(phrases, duration_s, ARM_MIN)
        high = self.danced_energy(phrases, duration_s)
        return np.maximum(np.maximum(low - e, e - high), 0.0) / max(self.e_hi - self.e_lo, 1e-9)

    def energy_for(self, target: float) -> float:
        return float(self.e_lo + np.clip(target, 0.0, 1.0) * (self.e_hi - self.e_lo))

    def pick(
        self,
        target: float,
        duration_s: float,
        *,
        beats: int | None,
        after: int | None,
        fresh: bool,
        until_s: float = 0.0,
    ) -> int:
        """The phrase to dance at ``target`` over ``duration_s``: energy first, then the other costs.

        A taught move (``fresh``) comes from the first of these that is not empty: the moves not
        taught yet whose danced energy is within :data:`ENERGY_TOLERANCE` of the target's, the
        moves taught before (not the last two, nor their mirror images) within
        :data:`ENERGY_TOLERANCE` once the routine has taught :data:`NEW_MOVES_PER_MIN` a minute up
        to ``until_s`` (the block's end: a class is taught a move again rather than one off its
        intensity), the moves not taught yet within :data:`FRESH_TOLERANCE`, then every move not
        taught yet. Within it, missing
        the target costs :data:`ENERGY_WEIGHT` against the rest. A low-impact routine takes no
        phrase it would dance faster than :data:`~choreo.choreography.planner.MIN_STRETCH` allows
        (unless no other is left): its contacts were screened at its own pace, and at up to twice
        that pace a step becomes a leap (18 of the 19 frames of the 12.6-minute held-out song whose
        contact track had neither foot down) and its energy is four times its own.
        """
        lib = self.lib
        pool = self.safe if beats is None else self.safe[lib.phrase_beats[self.safe] == beats]
        if pool.size == 0:
            raise ParameterError(
                "the library has too few phrases that pass the workout's rules for this song"
            )
        if self.impact == "low":  # its contacts were screened at its own pace: faster, a step is a leap
            quick = duration_s / lib.phrase_duration_s[pool] < MIN_STRETCH
            pool = pool[~quick] if not quick.all() else pool
        miss = self.miss(pool, target, duration_s)
        if fresh:
            unused = np.array([not self.seconds[p] & self.used_seconds for p in pool.tolist()])
            if not unused.any():  # every safe move taught already: teach them again
                self.used_seconds.clear()
                self.rounds += 1
                unused[:] = True
            again = set(self.taught[:-2]) - set(self.taught[-2:])  # as first taught, not mirrored
            enough = len(set(self.taught)) >= NEW_MOVES_PER_MIN * until_s / 60.0
            near = miss <= ENERGY_TOLERANCE
            tiers = (
                near & unused,
                near & np.isin(pool, list(again)) & enough,
                (miss <= FRESH_TOLERANCE) & unused,
                unused,
            )
            keep = next(tier for tier in tiers if tier.any())
            pool, miss = pool[keep], miss[keep]
        cost = ENERGY_WEIGHT * miss**2
        gentler = np.array([1.0 - self.amplitude_for(p, target, duration_s) for p in pool.tolist()])
        cost += AMPLITUDE_WEIGHT * gentler**2
        stretch = duration_s / lib.phrase_duration_s[pool]
        cost += (np.log(stretch) / np.log(MAX_STRETCH)) ** 2
        cost += 4.0 * ((stretch < MIN_STRETCH) | (stretch > MAX_STRETCH))
        cost += np.hypot(*lib.phrase_move[pool].T) ** 2
        cost += 1.0 * (lib.phrase_style[pool] != self.style)
        end = lib.phrase_key[pool] + lib.phrase_beats[pool]
        start, twin = lib.phrase_key[pool], lib.phrase_key[lib.mirror_phrase[pool]]
        loop = _pair_cost(lib, end, start) + _pair_cost(lib, end, twin)
        cost += 0.5 * np.where(np.isfinite(loop), loop, 50.0)
        if after is not None:
            into = _pair_cost(
                lib, np.full(start.size, int(lib.phrase_key[after] + lib.phrase_beats[after])), start
            )
            cost += 0.5 * np.where(np.isfinite(into), into, 50.0)
        if fresh:
            cost += 1.5 * np.array([self.used_names[self.names[p]] for p in pool.tolist()])
        cost += 0.3 * self.rng.random(pool.size)
        chosen = int(pool[int(np.argmin(cost))])
        if fresh:
            self.used_seconds |= self.seconds[chosen]
            self.used_names[self.names[chosen]] += 1
            self.taught.append(chosen)
        return chosen


def plan_workout(
    library: PhraseLibrary,
    music: MusicStructure,
    *,
    style: str,
    profile: str,
    curve: tuple[float, ...] = (),
    impact: str = "low",
    energy: str = "auto",
    seed: int = 0,
) -> Plan:
    """A workout's plan for the whole song, with its cue sheet (see the module docstring).

    Raises
    ------
    ParameterError
        On music not in 4/4, an unknown style or profile, or a library with too few safe phrases.
    """
    if int(music.beats_per_bar) != 4:
        raise ParameterError("a workout is counted in 8s: it needs music in 4/4, this song is in 3/4")
    style_index = library.style_index(style)
    bars = _bars(music)
    originals, reasons = _screened(library, impact)
    ok = np.array([not r for r in reasons])
    moves = (library.phrase_beats[originals] == MOVE_BEATS) & ok
    per_style = np.bincount(library.phrase_style[originals[moves]], minlength=len(library.styles))
    style_note = None
    if per_style[style_index] < MIN_STYLE_MOVES:
        best = int(np.argmax(per_style))
        style_note = (
            f"the workout dances {library.styles[best]}: {int(per_style[style_index])} {style} moves pass "
            f"its rules, {int(per_style[best])} {library.styles[best]} moves do"
        )
        style_index = best
    safe_originals = originals[ok]
    safe = np.concatenate([safe_originals, library.mirror_phrase[safe_originals]])
    safe = safe[safe >= 0]
    runs = _slots(bars)
    counted = [s for run in runs for s in run if s.counted]
    centres = np.array([0.5 * (bars.starts[s.bar] + bars.starts[s.bar + s.n_bars]) for s in counted])
    block_of: list[tuple[int, int]] = []  # per 8-count: (block, position in it)
    block_sizes: list[int] = []
    for run in runs:
        if run[0].counted:
            for size in _block_sizes(len(run)):
                block_of += [(len(block_sizes), i) for i in range(size)]
                block_sizes.append(size)
    block_start_s = np.array([bars.starts[counted[i].bar] for i, (_, pos) in enumerate(block_of) if pos == 0])
    labels = np.asarray(music.section_labels)
    changes = np.asarray(music.bar_starts)[1:][labels[1:] != labels[:-1]]
    switches = (
        np.unique(block_start_s[np.abs(block_start_s[:, None] - changes[None]).argmin(axis=0)])
        if (changes.size and block_start_s.size)
        else None
    )
    duration = float(music.duration_s)
    spans = [bars.starts[s.bar + 2] - bars.starts[s.bar] for s in counted]
    chooser = _Chooser(library, safe, style_index, seed, float(np.median(spans)) if spans else 4.0, impact)
    targets = target_intensity(profile, centres, duration, curve=curve, switches_s=switches)

    chosen: list[tuple] = []
    amplitudes: list[float] = []  # per segment, its arm_amplitude
    cue_parts: list[tuple] = []  # (slot index or -1, move phrase, side, block kind, target)
    taught: list[int] = []
    counted_index = 0
    last_phrase: int | None = None
    kinds_cycle = ("teach", "teach", "teach", "combine")
    n_blocks = 0
    for run in runs:
        if not run[0].counted:
            for slot in run:
                span = bars.starts[slot.bar + slot.n_bars] - bars.starts[slot.bar]
                t = float(
                    target_intensity(profile, np.array([bars.starts[slot.bar]]), duration, curve=curve)[0]
                )
                p = chooser.pick(min(t, 0.3), span, beats=None, after=last_phrase, fresh=False)
                chosen.append(
                    (slot.bar, p, slot.n_bars, 0.0, span / library.phrase_duration_s[p], None, False)
                )
                amplitudes.append(1.0)
                cue_parts.append((-1, p, "-", "free", t))
                last_phrase = p
            continue
        i = 0
        while i < len(run):
            block, _ = block_of[counted_index + i]
            size = block_sizes[block]
            block_targets = targets[counted_index + i : counted_index + i + size]
            slots = run[i : i + size]
            span = float(np.median([bars.starts[s.bar + 2] - bars.starts[s.bar] for s in slots]))
            kind = (
                kinds_cycle[n_blocks % len(kinds_cycle)]
                if size == BLOCK or kinds_cycle[n_blocks % len(kinds_cycle)] == "teach"
                else "teach"
            )
            if kind == "combine" and len(taught) >= 2:
                a, b = taught[-2], taught[-1]
                if chooser.miss(np.array([a, b]), float(block_targets.mean()), span).max() > ENERGY_TOLERANCE:
                    kind = "teach"
            else:
                kind = "teach"
            if kind == "teach":
                a = chooser.pick(
                    float(block_targets.mean()),
                    span,
                    beats=MOVE_BEATS,
                    after=last_phrase,
                    fresh=True,
                    until_s=float(bars.starts[slots[-1].bar + 2]),
                )
                taught.append(a)
                right = (size + 1) // 2
                pattern = [(a, "right")] * right + [(int(library.mirror_phrase[a]), "left")] * (size - right)
                moves = [a] * size
            else:
                a, b = taught[-2], taught[-1]
                ma, mb = int(library.mirror_phrase[a]), int(library.mirror_phrase[b])
                pattern = [(a, "right"), (b, "right"), (ma, "left"), (mb, "left")]
                moves = [a, b, a, b]
            for j, (slot, (p, side), move, t) in enumerate(
                zip(slots, pattern, moves, block_targets, strict=True)
            ):
                stretch = (bars.starts[slot.bar + 2] - bars.starts[slot.bar]) / library.phrase_duration_s[p]
                chosen.append((slot.bar, p, 2, 1.0, stretch, None, False))
                amplitudes.append(
                    chooser.amplitude_for(p, float(t), float(stretch * library.phrase_duration_s[p]))
                )
                cue_parts.append((counted_index + i + j, move, side, kind, float(t)))
                last_phrase = p
            n_blocks += 1
            i += size
        counted_index += len(run)
    plan = _to_plan(library, bars, chosen, library.styles[style_index], energy, seed, style_index)
    plan = replace(
        plan,
        segments=tuple(
            replace(segment, arm_amplitude=a) for segment, a in zip(plan.segments, amplitudes, strict=True)
        ),
    )
    cues = _cue_sheet(library, plan, cue_parts)
    counts = Counter(r for rs in reasons for r in rs)
    listed = tuple(
        {
            "clip": library.clip_names[int(library.key_clip[library.phrase_key[p]])],
            "phrase": int(p),
            "reasons": list(rs),
        }
        for p, rs in zip(originals.tolist(), reasons, strict=True)
        if rs and int(library.phrase_style[p]) == style_index and library.phrase_beats[p] == MOVE_BEATS
    )
    if style_note is not None:
        plan = replace(plan, notes=(*plan.notes, style_note))
    if chooser.rounds:
        plan = replace(
            plan,
            notes=(
                *plan.notes,
                f"every safe move was taught, then taught again ({chooser.rounds} times more)",
            ),
        )
    note = (
        f"workout ({profile}, {impact} impact): {int(ok.sum())} of {ok.size} library phrases pass its rules; "
        + ", ".join(f"{n} {r}" for r, n in counts.most_common())
    )
    workout = WorkoutPlan(
        profile=profile,
        curve=tuple(curve),
        impact=impact,
        cues=cues,
        excluded=dict(counts),
        excluded_phrases=listed,
        target_energy_m2_s2=(round(chooser.e_lo, 4), round(chooser.e_hi, 4)),
    )
    return follow_on_guide(library, replace(plan, notes=(*plan.notes, note), routine=workout))


def _cue_sheet(library: PhraseLibrary, plan: Plan, parts: list[tuple]) -> tuple[Cue, ...]:
    """One cue per segment: the move's number and name, side, repeat, the count the next move starts."""
    numbers: dict[int, int] = {}
    names: dict[int, str] = {}
    alike: dict[str, list[dict[str, float]]] = {}  # a name's moves so far, by their features
    for _, move, _, kind, _ in parts:
        if kind != "free" and move not in numbers:
            numbers[move] = len(numbers) + 1
            features = phrase_features(library, move)
            name = move_name(library, move)
            if name in alike:
                qualified = f"{name}, {distinguish(features, alike[name])}"
                taken = set(names.values())
                name = qualified if qualified not in taken else f"{qualified} {numbers[move]}"
            alike.setdefault(move_name(library, move), []).append(features)
            names[move] = name
    count_at = [8 * index + 1 if index >= 0 else None for index, *_ in parts]
    cues = []
    repeat = 0
    for i, ((index, move, side, kind, target), segment) in enumerate(zip(parts, plan.segments, strict=True)):
        if kind == "free":
            cues.append(
                Cue(0, segment.start_s, segment.end_s, i, 0, "free", "-", 1, None, round(target, 3), kind)
            )
            repeat = 0
            continue
        previous = parts[i - 1] if i else None
        repeat = repeat + 1 if previous and previous[1] == move and previous[2] == side else 1
        nxt = next(
            (count_at[j] for j in range(i + 1, len(parts)) if parts[j][3] != "free" and parts[j][1] != move),
            None,
        )
        cues.append(
            Cue(
                index + 1,
                segment.start_s,
                segment.end_s,
                i,
                numbers[move],
                names[move],
                side,
                repeat,
                nxt,
                round(target, 3),
                kind,
            )
        )
    return tuple(cues)
