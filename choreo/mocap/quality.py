"""Numbers that say whether a retargeted clip kept its source's contact with the floor.

Retargeting changes proportions (SMPL's legs, feet and arms are not the
performer's), and a wrong root scale or floor shows up as feet that slide or
float. Foot skating is measured with the metrics' own definition on the
source (its joints at the SMPL joints' places, scaled by the leg ratio and put
on the floor by the same rule) and on the SMPL result, so the two can be set
side by side in ``meta.json``.
"""

from __future__ import annotations

import numpy as np

from choreo.metrics.foot_skate import foot_skate_ratio
from choreo.mocap.readers.take import SourceTake, as_take
from choreo.mocap.retarget import FLOOR_CLEARANCE_M, leg_length, source_joint_positions
from choreo.mocap.rigs import SourceRig
from choreo.motion.bvh_reader import BvhData
from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion
from choreo.motion.skeleton import JOINT_NAMES, SMPL

__all__ = ["retarget_quality"]

_FEET = [JOINT_NAMES.index(n) for n in ("left_foot", "right_foot", "left_ankle", "right_ankle")]


def retarget_quality(clip: SourceTake | BvhData, rig: SourceRig, motion: Motion) -> dict[str, float]:
    """Foot skating of source and result, and how the result meets the floor.

    Parameters
    ----------
    clip : the source take (or parsed BVH file)
    rig : its correspondence to SMPL
    motion : ``retarget(clip, rig)``, whole (not trimmed)

    Returns
    -------
    dict with ``foot_skate_source`` and ``foot_skate_smpl`` (share of frame
    steps with a grounded foot sliding faster than 0.3 m/s),
    ``feet_p5_m`` (5th percentile of the lower foot joint's height) and
    ``lowest_joint_p1_m`` (1st percentile of the lowest joint's height)
    """
    take = as_take(clip)
    src, _ = source_joint_positions(take, rig)
    leg_m = float(np.linalg.norm(SMPL.offsets[4]) + np.linalg.norm(SMPL.offsets[7]))
    src = src * (leg_m / leg_length(src))
    src[..., 1] -= np.percentile(src[:, _FEET, 1].min(axis=1), 5) - FLOOR_CLEARANCE_M
    src = np.nan_to_num(src)  # joints the source lacks; foot skating reads only the feet
    pos = joint_positions(motion)
    return {
        "foot_skate_source": round(foot_skate_ratio(src, fps=take.fps), 4),
        "foot_skate_smpl": round(foot_skate_ratio(pos, fps=motion.fps), 4),
        "feet_p5_m": round(float(np.percentile(pos[:, _FEET, 1].min(axis=1), 5)), 4),
        "lowest_joint_p1_m": round(float(np.percentile(pos[..., 1].min(axis=1), 1)), 4),
    }
