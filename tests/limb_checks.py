"""How bent a limb is, for the tests that hold feet and hands: a knee or elbow must never snap straight."""

from __future__ import annotations

import numpy as np

from choreo.motion import SMPL, Motion, joint_positions


def bend_angles_deg(motion: Motion, upper: str, middle: str, end: str) -> np.ndarray:
    """Angle at each side's ``middle`` joint between its two bones, ``[frames, 2]`` (left, right),
    180 straight.

    ``bend_angles_deg(motion, "hip", "knee", "ankle")`` gives the knees, ``"shoulder", "elbow", "wrist"``
    the elbows."""
    pos = joint_positions(motion)
    out = []
    for side in ("left", "right"):
        top, hinge, tip = (pos[:, SMPL.index(f"{side}_{j}")] for j in (upper, middle, end))
        a, b = top - hinge, tip - hinge
        cos = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        out.append(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))
    return np.stack(out, axis=1)
