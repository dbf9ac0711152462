"""Change a motion's frame rate: slerp for rotations, linear for the root."""

from __future__ import annotations

import numpy as np

from choreo.errors import ParameterError
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_quat, quat_align_hemisphere, quat_slerp, quat_to_aa

__all__ = ["resample"]


def resample(motion: Motion, fps: float, *, n_frames: int | None = None) -> Motion:
    """The same motion sampled at ``fps``.

    Frame ``k`` of the result is the pose at time ``k / fps``, interpolated
    between the two source frames around it (quaternion slerp for joint
    rotations, linear for the root translation); times past the last source
    frame hold the last pose.

    Parameters
    ----------
    motion : the source motion
    fps : float > 0, the new frame rate
    n_frames : frames wanted; default ``ceil(motion.duration_s * fps)``, so the
        result covers the same time span

    Returns
    -------
    Motion : a new motion; the input is untouched
    """
    if not np.isfinite(fps) or fps <= 0:
        raise ParameterError(f"fps must be positive, got {fps}")
    if motion.n_frames == 0:
        raise ParameterError("cannot resample an empty motion")
    if n_frames is None:
        n_frames = int(np.ceil(motion.duration_s * fps - 1e-9))
    source_pos = np.arange(n_frames) * (motion.fps / fps)
    source_pos = np.clip(source_pos, 0.0, motion.n_frames - 1)
    lo = np.floor(source_pos).astype(int)
    hi = np.minimum(lo + 1, motion.n_frames - 1)
    t = source_pos - lo

    quat = quat_align_hemisphere(aa_to_quat(motion.rotations), axis=0)
    rotations = quat_to_aa(quat_slerp(quat[lo], quat[hi], t[:, None]))
    root = motion.root_translation[lo] * (1.0 - t[:, None]) + motion.root_translation[hi] * t[:, None]
    return motion.replace(fps=float(fps), root_translation=root, rotations=rotations)
