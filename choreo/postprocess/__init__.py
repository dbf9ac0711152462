"""Post-processing of generated motion: pure steps, motion in, new motion out.

One module per step: :mod:`.filtering` (zero-phase low-pass), :mod:`.joint_limits`
(anatomical limits), :mod:`.leg_ik` (planted feet held by bending the legs),
:mod:`.contacts` (heels, toes and hands on the floor, with hysteresis), :mod:`.ground` (feet on the floor),
:mod:`.foot_locking` (feet held at the mean of their path over each contact),
:mod:`.in_place` (no root travel) and
:mod:`.chain` (the composed :func:`postprocess`).
"""

from choreo.postprocess.chain import postprocess
from choreo.postprocess.filtering import lowpass_filter
from choreo.postprocess.foot_locking import lock_feet
from choreo.postprocess.ground import ground_feet
from choreo.postprocess.in_place import in_place
from choreo.postprocess.joint_limits import (
    SMPL_JOINT_LIMITS,
    JointLimit,
    clamp_joint_limits,
    count_limit_violations,
)
from choreo.postprocess.leg_ik import solve_leg_ik

__all__ = [
    "SMPL_JOINT_LIMITS",
    "JointLimit",
    "clamp_joint_limits",
    "count_limit_violations",
    "ground_feet",
    "in_place",
    "lock_feet",
    "lowpass_filter",
    "postprocess",
    "solve_leg_ik",
]
