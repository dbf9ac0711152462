"""Joint-limit violations of a motion: the count the post-processing must bring to zero."""

from __future__ import annotations

from choreo.motion.motion import Motion
from choreo.postprocess.joint_limits import count_limit_violations

__all__ = ["limit_violations"]


def limit_violations(motion: Motion) -> int:
    """Number of (frame, joint) pairs outside the SMPL joint limits.

    Works on rotations, so it needs the :class:`~choreo.motion.Motion` itself
    rather than joint positions; independent of the frame rate.
    """
    return count_limit_violations(motion)
