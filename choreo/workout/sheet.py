"""A finished workout's report: the cue sheet with what the motion did, the energy estimate, safety.

Measured on the finished motion (after post-processing, at the asked frame
rate), never taken from the plan's labels: each cue's motion energy (the mean
squared joint speed over its span, :func:`choreo.metrics.freeze.motion_energy`,
``choreo eval``'s ``energy``) and its MET value, level and kilocalories
(:mod:`choreo.models.energy`), the correlation of the 8-counts' energy with the
profile's target, and the frames that break each safety rule
(:func:`choreo.workout.safety.measure_safety`).
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from choreo.contracts.contacts import ContactTrack
from choreo.contracts.plan import Plan
from choreo.contracts.summary import CueLine, RoutineSheet
from choreo.errors import ParameterError
from choreo.metrics.freeze import motion_energy
from choreo.models.energy import energy_calibration, intensity_level, kcal_per_min
from choreo.motion import Motion, joint_positions
from choreo.workout.safety import measure_safety

__all__ = ["aimed_energy", "cue_energy", "met_error_to_target", "routine_sheet"]


def cue_energy(positions: np.ndarray, fps: float, spans_s: list[tuple[float, float]]) -> np.ndarray:
    """Motion energy (m^2/s^2) of ``positions`` ``[frames, 24, 3]`` over each ``(start, end)`` span."""
    out = np.zeros(len(spans_s))
    for i, (start, end) in enumerate(spans_s):
        a, b = int(round(start * fps)), min(int(round(end * fps)) + 1, positions.shape[0])
        out[i] = motion_energy(positions[a:b], fps=fps) if b - a >= 2 else 0.0
    return out


def aimed_energy(targets: np.ndarray, target_energy_m2_s2: tuple[float, float]) -> np.ndarray:
    """The motion energy (m^2/s^2) ``targets`` (0..1) aim at: on the line ``target_energy_m2_s2``,
    the plan's energy for intensity 0 and 1."""
    low, high = target_energy_m2_s2
    return low + np.asarray(targets, dtype=np.float64) * (high - low)


def met_error_to_target(
    energy: np.ndarray, targets: np.ndarray, target_energy_m2_s2: tuple[float, float]
) -> float | None:
    """Root mean square, in MET, of 8-counts' measured ``energy`` (m^2/s^2) against their
    ``targets`` (0..1), each target made an energy on the line ``target_energy_m2_s2`` (the
    plan's energy for intensity 0 and 1) and both made MET by the calibration.

    Where a profile's target is nearly flat (``steady`` between its warm-up and cool-down) the
    correlation says little, this still does. ``None`` without 8-counts or a target energy.
    """
    if len(energy) == 0 or target_energy_m2_s2[1] <= 0:
        return None
    calibration = energy_calibration()
    aimed = aimed_energy(targets, target_energy_m2_s2)
    met = np.array([calibration.met(float(e)) for e in energy])
    met_aimed = np.array([calibration.met(float(e)) for e in aimed])
    return float(np.sqrt(np.mean((met - met_aimed) ** 2)))


def routine_sheet(
    motion: Motion, plan: Plan, *, body_mass_kg: float, contacts: ContactTrack | None = None
) -> RoutineSheet:
    """The report of ``motion``, the finished dance of workout ``plan``.

    ``contacts`` are the dance's foot contacts (:func:`choreo.pipeline.finished_contacts`): their
    frames with neither foot down are counted too (``contact_track_flight_frames``), beside the
    workout's own strict rule.

    Raises
    ------
    ParameterError
        When the plan is not a workout's.
    """
    routine = plan.routine
    if routine is None:
        raise ParameterError("the plan is a dance's, not a workout's: it has no cue sheet")
    calibration = energy_calibration()
    positions = joint_positions(motion)
    energy = cue_energy(positions, motion.fps, [(c.start_s, c.end_s) for c in routine.cues])
    lines = []
    for cue, e in zip(routine.cues, energy.tolist(), strict=True):
        met = calibration.met(e)
        fields = {k: v for k, v in asdict(cue).items() if k != "segment"}
        lines.append(
            CueLine(**fields, energy_m2_s2=round(e, 4), met=round(met, 2), level=intensity_level(met))
        )
    whole = calibration.met(motion_energy(positions, fps=motion.fps))
    counted = [i for i, c in enumerate(routine.cues) if c.index > 0]
    targets = np.array([routine.cues[i].target for i in counted])
    measured = energy[counted]
    correlation = (
        float(np.corrcoef(measured, targets)[0, 1])
        if len(counted) > 2 and measured.std() > 0 and targets.std() > 0
        else float("nan")
    )
    met_error = met_error_to_target(measured, targets, routine.target_energy_m2_s2)
    safety = measure_safety(motion)
    minutes = motion.n_frames / motion.fps / 60.0
    return RoutineSheet(
        profile=routine.profile,
        curve=list(routine.curve),
        impact=routine.impact,
        body_mass_kg=body_mass_kg,
        calibration=calibration.version,
        met=round(whole, 2),
        kcal_per_min=round(kcal_per_min(whole, body_mass_kg), 2),
        kcal_total=round(kcal_per_min(whole, body_mass_kg) * minutes, 1),
        intensity_level=intensity_level(whole),
        correlation_to_target=round(correlation, 4),
        met_rms_error_to_target=None if met_error is None else round(met_error, 3),
        safety={k: v for k, v in asdict(safety).items() if k != "frames"}
        | (
            {}
            if contacts is None
            else {"contact_track_flight_frames": int((~contacts.feet.any(axis=1)).sum())}
        ),
        excluded=dict(routine.excluded),
        cues=lines,
    )
