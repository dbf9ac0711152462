"""A move's name from what its motion does: the legs (steps and their direction, level, lifts) and
the arms, e.g. ``side step, arms overhead`` or ``knee lift, arms alternate``.

Every feature is measured in the body's heading frame at the phrase's start and is
symmetric under mirroring (ranges and magnitudes, never signs), so a move and its
mirror image get the same name; the side is said apart (the cue sheet's ``side``).
The thresholds are plain body measures on SMPL in metres (standing, the pelvis is
about 0.9 m up and the head 0.55 m above it).
"""

from __future__ import annotations

import numpy as np

from choreo.choreography.library import PhraseLibrary
from choreo.motion.contacts import point_contacts
from choreo.motion.kinematics import joint_positions
from choreo.motion.skeleton import SMPL

__all__ = ["distinguish", "move_features", "move_name", "phrase_features"]

_J = {name: SMPL.index(name) for name in SMPL.names}
_TURN_RAD = np.deg2rad(60.0)
_KICK_M = 0.45
"""An ankle this high is a kick."""
_KNEE_LIFT_M = -0.2
"""A knee within this of the pelvis's height is a knee lift."""
_LOW_PELVIS_M = 0.78
"""A median pelvis height under this is danced low: a squat."""
_TRAVEL_RANGE_M = 0.3
_OVERHEAD_SHARE = 0.25
_WIDE_M = 0.55
_SWING_M = 0.35


def move_features(positions: np.ndarray, fps: float, turn_rad: float) -> dict[str, float]:
    """The measures a name is made of, from ``[frames, 24, 3]`` positions (Y up, floor at 0)."""
    pos = np.asarray(positions, dtype=np.float64)
    pelvis = pos[:, _J["pelvis"]]
    trunk = pos[0, _J["left_hip"]] - pos[0, _J["right_hip"]]
    right = np.array([trunk[0], 0.0, trunk[2]]) / max(float(np.hypot(trunk[0], trunk[2])), 1e-9)
    forward = np.array([-right[2], 0.0, right[0]])
    rel = pelvis - pelvis[0]
    feet = point_contacts(
        pos[:, [_J[n] for n in ("left_ankle", "left_foot", "right_ankle", "right_foot")]], fps
    )
    down = np.stack([feet[:, :2].any(axis=1), feet[:, 2:].any(axis=1)], axis=1)
    steps = int(np.count_nonzero(np.diff(down.astype(np.int8), axis=0) == 1))
    y = pos[..., 1]
    wrists = [_J["left_wrist"], _J["right_wrist"]]
    lateral = np.abs((pos[:, wrists] - pelvis[:, None]) @ right)
    wy = y[:, wrists]
    corr = float(np.corrcoef(wy[:, 0], wy[:, 1])[0, 1]) if wy.std(axis=0).min() > 1e-6 else 1.0
    return {
        "turn_deg": float(np.degrees(abs(turn_rad))),
        "steps": float(steps),
        "side_range_m": float(np.ptp(rel @ right)),
        "forward_range_m": float(np.ptp(rel @ forward)),
        "pelvis_m": float(np.median(pelvis[:, 1])),
        "ankle_max_m": float(y[:, [_J["left_ankle"], _J["right_ankle"]]].max()),
        "knee_over_pelvis_m": float(
            (y[:, [_J["left_knee"], _J["right_knee"]]].max(axis=1) - pelvis[:, 1]).max()
        ),
        "overhead_share": float(np.mean(wy.max(axis=1) > y[:, _J["head"]])),
        "wide_m": float(np.percentile(lateral.max(axis=1), 75)),
        "swing_m": float(np.ptp(wy, axis=0).max()),
        "arm_correlation": corr,
    }


def _name(f: dict[str, float]) -> str:
    if f["turn_deg"] > np.degrees(_TURN_RAD):
        legs = "turn"
    elif f["ankle_max_m"] > _KICK_M:
        legs = "kick"
    elif f["knee_over_pelvis_m"] > _KNEE_LIFT_M:
        legs = "knee lift"
    elif f["pelvis_m"] < _LOW_PELVIS_M:
        legs = "squat"
    elif f["side_range_m"] > _TRAVEL_RANGE_M and f["side_range_m"] >= f["forward_range_m"]:
        legs = "side step"
    elif f["forward_range_m"] > _TRAVEL_RANGE_M:
        legs = "step forward and back"
    elif f["steps"] >= 2:
        legs = "step in place"
    else:
        legs = "sway"
    if f["overhead_share"] > _OVERHEAD_SHARE:
        arms = "arms overhead"
    elif f["wide_m"] > _WIDE_M:
        arms = "arms wide"
    elif f["swing_m"] > _SWING_M:
        arms = "arms alternate" if f["arm_correlation"] < -0.3 else "arm swing"
    else:
        arms = "arms low"
    return f"{legs}, {arms}"


def phrase_features(library: PhraseLibrary, phrase: int) -> dict[str, float]:
    """:func:`move_features` of library phrase ``phrase``."""
    first, last = library.phrase_frames
    motion = library.frames_motion(int(first[phrase]), int(last[phrase]))
    return move_features(joint_positions(motion), library.fps, float(library.phrase_turn[phrase]))


def move_name(library: PhraseLibrary, phrase: int) -> str:
    """The name of library phrase ``phrase`` (a mirror image gets its original's name)."""
    return _name(phrase_features(library, phrase))


_QUALIFIERS = (
    # feature, the unit a difference is counted in, the word when larger, the word when smaller
    ("steps", 2.0, "quick steps", "slow steps"),
    ("side_range_m", 0.15, "wide", "narrow"),
    ("forward_range_m", 0.15, "long", "short"),
    ("swing_m", 0.15, "big arms", "small arms"),
    ("wide_m", 0.1, "arms out", "arms in"),
    ("pelvis_m", 0.04, "tall", "low"),
    ("knee_over_pelvis_m", 0.08, "high knees", "low knees"),
)


def distinguish(features: dict[str, float], others: list[dict[str, float]]) -> str:
    """The word that tells a move apart from ``others`` of the same name: its largest difference
    from the nearest of them, in plain body measures (``wide``, ``quick steps``, ``big arms``...)."""
    if not others:
        return ""

    def gaps(other: dict[str, float]) -> list[float]:
        return [(features[key] - other[key]) / unit for key, unit, _, _ in _QUALIFIERS]

    nearest = min((gaps(o) for o in others), key=lambda g: max(abs(v) for v in g))
    k = int(np.argmax(np.abs(nearest)))
    _, _, larger, smaller = _QUALIFIERS[k]
    return larger if nearest[k] > 0 else smaller
