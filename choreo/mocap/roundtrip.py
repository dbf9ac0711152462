"""How far a motion read back from a file is from the motion that was written: the round-trip error.

The measure docs/choreography.md reports for the library's BVH round trip:
per frame and joint, the distance between the two motions' joint positions
relative to their pelvis (so a root offset or a floor shift does not count),
over the frames both have.
"""

from __future__ import annotations

import numpy as np

from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion

__all__ = ["pose_error_m"]


def pose_error_m(motion: Motion, reference: Motion) -> np.ndarray:
    """Distances ``[frames, 24]`` in metres between the joints of ``motion`` and ``reference``, each
    relative to its own pelvis, over their first ``min(n_frames)`` frames (same frame rate assumed)."""
    n = min(motion.n_frames, reference.n_frames)
    a, b = joint_positions(motion)[:n], joint_positions(reference)[:n]
    return np.linalg.norm((a - a[:, :1]) - (b - b[:, :1]), axis=-1)
