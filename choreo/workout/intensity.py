"""A workout's 8-counts danced bigger or smaller until their energy is their target's.

The planner chooses each move for its block's target, but a flat ``steady``
target between moves whose energies scatter about it correlates with nothing
(r 0.22 and -0.20 on the held-out songs). So each 8-count's
:attr:`~choreo.contracts.plan.Segment.body_amplitude` is corrected towards its
target energy (:func:`target_energies`, the line ``choreo eval``'s MET error
measures against) from its energy as danced (:func:`choreo.workout.sheet.cue_energy`,
the sheet's and ``choreo eval``'s measure), a few rounds: the planner from the
guide it builds (:func:`follow_on_guide`), the pipeline from the finished motion.
Each round moves an amplitude by the secant through its last two rounds (in
amplitude squared, which a scaled move's energy goes with), or by the square
root of the energy ratio in the first.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from choreo.choreography.guide import build_guide
from choreo.choreography.library import PhraseLibrary
from choreo.contracts.plan import Plan
from choreo.contracts.routine import WorkoutPlan
from choreo.errors import ParameterError
from choreo.motion import Motion, joint_positions
from choreo.workout.sheet import aimed_energy, cue_energy

__all__ = [
    "BODY_RANGE",
    "GUIDE_FPS",
    "GUIDE_ROUNDS",
    "OWN_SHARE",
    "follow_on_guide",
    "retarget",
    "eight_count_energy",
]

BODY_RANGE = (0.4, 1.3)
"""The least and the most body amplitude an 8-count is danced with (above 1 a move is danced bigger;
the workout's safety rules are measured on the finished motion all the same)."""
OWN_SHARE = 0.5
"""How far an 8-count's amplitude (squared) goes from its run's mean towards its own: all the way,
a move danced at a ramp's two ends no longer repeats itself (0.58 of a held-out routine's 8-counts
repeated another, the goal is 0.75); none, a run cannot follow a warm-up's ramp."""
GUIDE_ROUNDS = 3
"""Rounds the planner corrects the amplitudes from its guide's energy."""
GUIDE_FPS = 30.0


def _routine(plan: Plan) -> WorkoutPlan:
    if plan.routine is None:
        raise ParameterError("the plan is a dance's, not a workout's: it has no 8-counts")
    return plan.routine


def _counted(plan: Plan) -> list[tuple[int, float, float, float]]:
    """Per 8-count of the plan's cue sheet: its segment, start and end (s) and target (0..1)."""
    return [(c.segment, c.start_s, c.end_s, c.target) for c in _routine(plan).cues if c.index > 0]


def _runs(plan: Plan) -> np.ndarray:
    """Per 8-count, the number of its run: the 8-counts that dance one move on one side in a row
    (``A A`` of ``A A A' A'``) share one body amplitude, so that they still repeat each other."""
    cues = [c for c in _routine(plan).cues if c.index > 0]
    starts = [i == 0 or c.repeat == 1 for i, c in enumerate(cues)]
    return np.cumsum(starts) - 1


def eight_count_energy(motion: Motion, plan: Plan) -> np.ndarray:
    """The motion energy of each of the workout ``plan``'s 8-counts in ``motion`` (the sheet's)."""
    return cue_energy(joint_positions(motion), motion.fps, [(a, b) for _, a, b, _ in _counted(plan)])


def retarget(
    plan: Plan, energy: np.ndarray, previous: tuple[np.ndarray, np.ndarray] | None = None
) -> tuple[Plan, tuple[np.ndarray, np.ndarray]]:
    """``plan`` with each 8-count's body amplitude moved towards the amplitude that dances its target
    energy, given the ``energy`` it was danced with (partly its run's: :func:`_runs`,
    :data:`OWN_SHARE`); and this round's (amplitudes, energies) to pass as ``previous`` to the next
    (the secant's other point)."""
    counted = _counted(plan)
    segments = [c[0] for c in counted]
    amplitude = np.array([plan.segments[s].body_amplitude for s in segments])
    target = aimed_energy(np.array([c[3] for c in counted]), _routine(plan).target_energy_m2_s2)
    energy = np.maximum(np.asarray(energy, dtype=np.float64), 1e-9)
    squared = amplitude**2 * target / energy  # as if the whole energy went with the amplitude squared
    if previous is not None:
        slope_a, slope_e = amplitude**2 - previous[0] ** 2, energy - previous[1]
        usable = (np.abs(slope_a) > 1e-4) & (slope_e * slope_a > 0)
        secant = amplitude**2 + (target - energy) * slope_a / np.where(usable, slope_e, 1.0)
        squared = np.where(usable, secant, squared)
    runs = _runs(plan)
    shared = np.bincount(runs, squared) / np.bincount(runs)
    squared = shared[runs] + OWN_SHARE * (squared - shared[runs])
    new = np.sqrt(np.clip(squared, BODY_RANGE[0] ** 2, BODY_RANGE[1] ** 2)).round(3)
    changed = list(plan.segments)
    for s, a in zip(segments, new.tolist(), strict=True):
        changed[s] = replace(changed[s], body_amplitude=a)
    return replace(plan, segments=tuple(changed)), (amplitude, energy)


def follow_on_guide(library: PhraseLibrary, plan: Plan, rounds: int = GUIDE_ROUNDS) -> Plan:
    """``plan`` after ``rounds`` of :func:`retarget` from its guide's energy at :data:`GUIDE_FPS`."""
    n_frames = int(np.ceil(plan.duration_s * GUIDE_FPS - 1e-9))
    previous = None
    for _ in range(rounds):
        guide = build_guide(library, plan, n_frames, GUIDE_FPS)
        motion = Motion.from_array(guide.poses.astype(np.float64), fps=GUIDE_FPS)
        plan, previous = retarget(plan, eight_count_energy(motion, plan), previous)
    return plan
