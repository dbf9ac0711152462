"""How far a backend or precision strays from the fp32 reference, in units people read.

* joint-rotation error: the angle, in degrees, of the rotation taking a joint's
  reference rotation to the tested one (geodesic distance on SO(3)), over every
  joint and frame;
* trajectory MSE in normalised coordinates: world joint positions from forward
  kinematics, normalised per axis by the reference motion's mean and standard
  deviation, then the mean squared difference. This is the measure a published
  TensorRT INT8 deployment of an LSTM dance generator reported (0.012). Over a
  whole song the root position is integrated from velocities, so small errors
  add up; the same measure on root-relative joint positions (the pose alone) is
  reported beside it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_quat

__all__ = ["PoseError", "compare_poses", "rotation_error_deg", "trajectory_mse_normalised"]


def rotation_error_deg(reference: np.ndarray, tested: np.ndarray) -> np.ndarray:
    """Per-frame, per-joint rotation error in degrees, ``[N, 24]``, for poses ``[N, 75]``."""
    qa = aa_to_quat(np.asarray(reference, dtype=np.float64)[:, :72].reshape(-1, 24, 3))
    qb = aa_to_quat(np.asarray(tested, dtype=np.float64)[:, :72].reshape(-1, 24, 3))
    dot = np.clip(np.abs(np.sum(qa * qb, axis=-1)), 0.0, 1.0)
    return np.degrees(2.0 * np.arccos(dot))


def trajectory_mse_normalised(
    reference: np.ndarray, tested: np.ndarray, fps: float = 30.0, *, root_relative: bool = False
) -> float:
    """MSE of joint positions after z-scoring each axis by the reference's statistics.

    ``root_relative`` subtracts the root's position first (the pose without the path).
    """
    ref = joint_positions(Motion.from_array(reference, fps=fps))
    test = joint_positions(Motion.from_array(tested, fps=fps))
    if root_relative:
        ref = ref - ref[:, :1]
        test = test - test[:, :1]
    mean = ref.reshape(-1, 3).mean(axis=0)
    std = ref.reshape(-1, 3).std(axis=0) + 1e-9
    return float(np.mean(((test - mean) / std - (ref - mean) / std) ** 2))


@dataclass(frozen=True)
class PoseError:
    """Summary of one comparison against the reference."""

    frames: int
    rotation_mean_deg: float
    rotation_p99_deg: float
    rotation_max_deg: float
    root_max_m: float
    trajectory_mse_norm: float
    pose_mse_norm: float

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def compare_poses(reference: np.ndarray, tested: np.ndarray, fps: float = 30.0) -> PoseError:
    """All the error measures of ``tested`` against ``reference`` (both ``[N, 75]``)."""
    angles = rotation_error_deg(reference, tested)
    return PoseError(
        frames=int(reference.shape[0]),
        rotation_mean_deg=float(angles.mean()),
        rotation_p99_deg=float(np.percentile(angles, 99)),
        rotation_max_deg=float(angles.max()),
        root_max_m=float(np.abs(np.asarray(reference)[:, 72:] - np.asarray(tested)[:, 72:]).max()),
        trajectory_mse_norm=trajectory_mse_normalised(reference, tested, fps),
        pose_mse_norm=trajectory_mse_normalised(reference, tested, fps, root_relative=True),
    )
