"""Sample a motion at arbitrary times, as a time warp needs.

Frame-rate conversion on a regular grid is :func:`choreo.motion.resample.resample`.

Rotations are interpolated by quaternion slerp per joint (linear interpolation
of axis-angle vectors cuts corners and breaks near 180 degrees), the root
translation linearly.
"""

from __future__ import annotations

import numpy as np

from choreo.errors import ParameterError
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_quat, quat_align_hemisphere, quat_slerp, quat_to_aa

__all__ = ["sample_at"]


def sample_at(motion: Motion, times_s: np.ndarray, fps: float) -> Motion:
    """A new motion at ``fps`` whose frame ``k`` is ``motion`` at ``times_s[k]`` seconds.

    Parameters
    ----------
    motion : the motion to sample
    times_s : np.ndarray [shape=(frames,)], source times in seconds, each within
        ``[0, (motion.n_frames - 1) / motion.fps]`` (clipped to it)
    fps : frame rate of the result

    Returns
    -------
    Motion
    """
    times_s = np.asarray(times_s, dtype=np.float64).reshape(-1)
    if motion.n_frames < 2:
        raise ParameterError(f"cannot sample a motion of {motion.n_frames} frame(s)")
    if not np.all(np.isfinite(times_s)):
        raise ParameterError("sample times must be finite")
    pos = np.clip(times_s * motion.fps, 0.0, motion.n_frames - 1)
    lo = np.minimum(np.floor(pos).astype(int), motion.n_frames - 2)
    t = pos - lo
    quat = quat_align_hemisphere(aa_to_quat(motion.rotations), axis=0)
    rot = quat_to_aa(quat_slerp(quat[lo], quat[lo + 1], t[:, None]))
    root = motion.root_translation[lo] * (1.0 - t)[:, None] + motion.root_translation[lo + 1] * t[:, None]
    return motion.replace(fps=float(fps), rotations=rot, root_translation=root)
