"""Beat alignment score, as Bailando (Li et al., CVPR 2022) defines it.

Kinematic beats are the local minima of the mean joint speed, smoothed with a
Gaussian of ``sigma`` 5 frames: the moments the dancer pauses or turns. The
score is the mean over music beats of ``exp(-d^2 / (2 * 3^2))``, with ``d`` the
distance in frames from the music beat to the nearest kinematic beat.

The score depends on the frame rate: the 3-frame tolerance is 100 ms at 30 fps
and 50 ms at 60 fps, so always report the fps with it. Published anchors are at
60 fps (AIST++ real dances 0.237, Bailando 0.233, EDGE about 0.26).
"""

from __future__ import annotations

import numpy as np

from choreo.errors import ParameterError
from choreo.metrics._positions import check_fps, check_positions
from choreo.motion.stops import SPEED_SIGMA_FRAMES, speed_minima

__all__ = [
    "BEAT_TOLERANCE_FRAMES",
    "beat_align_score",
    "kinematic_beats",
]

BEAT_TOLERANCE_FRAMES = 3.0


def kinematic_beats(positions: np.ndarray, *, sigma_frames: float = SPEED_SIGMA_FRAMES) -> np.ndarray:
    """Frames of the local minima of the smoothed mean joint speed.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres
    sigma_frames : float >= 0, standard deviation of the Gaussian smoothing, in frames

    Returns
    -------
    np.ndarray [shape=(beats,)], int
        Frame indices; speed sample ``k`` is the step from frame ``k`` to ``k + 1``,
        as in Bailando's code.
    """
    pos = check_positions(positions, min_frames=2)
    speed = np.mean(np.linalg.norm(np.diff(pos, axis=0), axis=-1), axis=1)
    return speed_minima(speed, sigma_frames)


def beat_align_score(
    positions: np.ndarray,
    music_beat_times_s: np.ndarray,
    *,
    fps: float,
    sigma_frames: float = SPEED_SIGMA_FRAMES,
    tolerance_frames: float = BEAT_TOLERANCE_FRAMES,
) -> float:
    """Bailando's beat alignment score, in [0, 1] (1: every music beat has a kinematic beat on it).

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres, frame ``k`` at ``k / fps`` s
    music_beat_times_s : np.ndarray [shape=(beats,)], seconds; beats after the
        motion's last frame are ignored
    fps : float > 0, frame rate of ``positions`` (the score depends on it)
    sigma_frames : smoothing of the speed curve, frames
    tolerance_frames : width of the Gaussian credit around each music beat, frames

    Raises
    ------
    ParameterError
        If no music beat falls within the motion.

    Examples
    --------
    >>> beat_align_score(positions, features.beat_times, fps=30)  # doctest: +SKIP
    """
    fps = check_fps(fps)
    pos = check_positions(positions, min_frames=2)
    beat_frames = np.rint(np.asarray(music_beat_times_s, dtype=np.float64) * fps)
    beat_frames = beat_frames[(beat_frames >= 0) & (beat_frames < pos.shape[0])]
    if beat_frames.size == 0:
        raise ParameterError("no music beat falls within the motion: beat alignment is undefined")
    motion_beats = kinematic_beats(pos, sigma_frames=sigma_frames)
    if motion_beats.size == 0:
        return 0.0
    distance = np.min(np.abs(beat_frames[:, None] - motion_beats[None, :]), axis=1)
    return float(np.mean(np.exp(-(distance**2) / (2.0 * tolerance_frames**2))))
