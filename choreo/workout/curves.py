"""The intensity a workout aims for over the song: 0 (rest) to 1 (all out).

Every named profile has a warm-up that rises and a cool-down that falls, each
a straight ramp between its ends, as long as a class's: an instructor warms up
for 5 to 10 minutes of a 45- to 60-minute class, so a routine gets
:data:`WARM_UP_SHARE` of its song to warm up in (at least :data:`WARM_UP_MIN_S`,
one block of four 8-counts at 120 BPM: a ramp of one 8-count is no warm-up; at
most :data:`WARM_UP_MAX_S`) and somewhat less to cool down in
(:data:`COOL_DOWN_SHARE`, :data:`COOL_DOWN_MIN_S` to :data:`COOL_DOWN_MAX_S`).
Between them ``steady`` holds, ``pyramid`` climbs to its peak at the middle and
comes back, ``intervals`` alternates work and rest at each change of the music's
section (the planner passes those changes, moved onto its blocks' starts). A
custom curve gives one number from 1 to 10 per minute, at the minute's middle,
joined by straight lines.
"""

from __future__ import annotations

import numpy as np

from choreo.contracts.routine import CURVE_MAX, ROUTINE_PROFILES
from choreo.errors import ParameterError

__all__ = [
    "COOL_DOWN_MAX_S",
    "COOL_DOWN_MIN_S",
    "COOL_DOWN_SHARE",
    "REST",
    "WARM_UP_MAX_S",
    "WARM_UP_MIN_S",
    "WARM_UP_SHARE",
    "WORK",
    "target_intensity",
]

WARM_UP_SHARE, WARM_UP_MIN_S, WARM_UP_MAX_S = 0.2, 16.0, 300.0
COOL_DOWN_SHARE, COOL_DOWN_MIN_S, COOL_DOWN_MAX_S = 0.15, 12.0, 180.0
WORK, REST = 0.95, 0.4
"""The intervals' work and rest levels."""
_START, _MAIN, _END = 0.3, 0.7, 0.25


def target_intensity(
    profile: str,
    times_s: np.ndarray,
    duration_s: float,
    *,
    curve: tuple[float, ...] = (),
    switches_s: np.ndarray | None = None,
) -> np.ndarray:
    """The profile's intensity at ``times_s`` (seconds into a song of ``duration_s``), ``[n]`` in 0..1.

    ``curve`` is a custom profile's numbers per minute; ``switches_s`` where ``intervals`` turns
    from work to rest or back (none: every 30 s of the main part).

    Raises
    ------
    ParameterError
        For an unknown profile, or ``custom`` without numbers.
    """
    t = np.asarray(times_s, dtype=np.float64)
    if profile == "custom":
        if not curve:
            raise ParameterError("a custom routine needs its numbers per minute")
        minutes = (np.arange(len(curve)) + 0.5) * 60.0
        return (np.interp(t, minutes, np.asarray(curve)) - 1.0) / (CURVE_MAX - 1.0)
    if profile not in ROUTINE_PROFILES:
        raise ParameterError(f"unknown routine {profile!r}; choose one of {', '.join(ROUTINE_PROFILES)}")
    warm = float(np.clip(WARM_UP_SHARE * duration_s, WARM_UP_MIN_S, WARM_UP_MAX_S))
    cool = duration_s - float(np.clip(COOL_DOWN_SHARE * duration_s, COOL_DOWN_MIN_S, COOL_DOWN_MAX_S))
    if cool <= warm:  # a song too short for both at their least: shares of it
        warm, cool = WARM_UP_SHARE * duration_s, duration_s * (1.0 - COOL_DOWN_SHARE)
    main_t = np.clip((t - warm) / max(cool - warm, 1e-9), 0.0, 1.0)
    if profile == "steady":
        main = np.full(t.shape, _MAIN)
        edge = _MAIN
    elif profile == "pyramid":
        main = 0.5 + 0.5 * (1.0 - np.abs(2.0 * main_t - 1.0))
        edge = 0.5
    else:
        switches = (
            np.arange(warm + 30.0, cool, 30.0)
            if switches_s is None
            else np.asarray(switches_s, dtype=np.float64)
        )
        switches = switches[(switches > warm) & (switches < cool)]
        main = np.where(np.searchsorted(switches, t, side="right") % 2 == 0, WORK, REST)
        edge = 0.6
    up = _START + (edge - _START) * np.clip(t / max(warm, 1e-9), 0.0, 1.0)
    down = edge + (_END - edge) * np.clip((t - cool) / max(duration_s - cool, 1e-9), 0.0, 1.0)
    return np.where(t < warm, up, np.where(t >= cool, down, main))
