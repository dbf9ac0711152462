"""Every measure of one dance at once, computed from one forward-kinematics pass."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from choreo.metrics.beat_align import beat_align_score, kinematic_beats
from choreo.metrics.diversity import kinetic_features
from choreo.metrics.foot_skate import contact_share, foot_skate_ratio
from choreo.metrics.freeze import freeze_ratio, motion_energy
from choreo.metrics.jerk import mean_jerk
from choreo.metrics.limits import limit_violations
from choreo.metrics.pfc import pfc_score
from choreo.metrics.spread import Reach, pose_spread, reach
from choreo.motion.kinematics import joint_positions
from choreo.motion.motion import Motion

__all__ = ["DanceScores", "score_motion"]


@dataclass(frozen=True)
class DanceScores:
    """The measures of one dance at one frame rate; see each measure's module for its definition.

    ``energy`` is the mean squared joint speed over the whole dance (m^2/s^2,
    :func:`~choreo.metrics.freeze.motion_energy`): a dance that barely moves
    skates and jerks little, and this number shows it. ``kinematic_beats_per_s``
    is how often the dance pauses (the kinematic beats of the beat alignment
    score): a trembling dance pauses very often and gets beat alignment for free.
    """

    fps: float
    duration_s: float
    beat_align: float
    foot_skate: float
    foot_contact: float
    pfc: float
    jerk: float
    freeze_ratio: float | None
    limit_violations: int
    energy: float
    kinematic_beats_per_s: float
    pose_spread: float
    pose_spread_heading: float
    reach: Reach
    kinetic: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, float | int | None]:
        """The JSON-ready numbers (kinetic features left out)."""
        return {
            "fps": self.fps,
            "duration_s": round(self.duration_s, 4),
            "beat_align": round(self.beat_align, 4),
            "foot_skate": round(self.foot_skate, 4),
            "foot_contact": round(self.foot_contact, 4),
            "pfc": round(self.pfc, 4),
            "jerk": round(self.jerk, 3),
            "freeze_ratio": None if self.freeze_ratio is None else round(self.freeze_ratio, 4),
            "limit_violations": self.limit_violations,
            "energy": round(self.energy, 4),
            "kinematic_beats_per_s": round(self.kinematic_beats_per_s, 3),
            "pose_spread": round(self.pose_spread, 4),
            "pose_spread_heading": round(self.pose_spread_heading, 4),
            **self.reach.to_dict(),
        }


def score_motion(motion: Motion, music_beat_times_s: np.ndarray) -> DanceScores:
    """Score one dance against its song's beats, at the motion's own frame rate.

    Parameters
    ----------
    motion : the dance, floor at y = 0 (as after post-processing)
    music_beat_times_s : np.ndarray [shape=(beats,)], the song's beat times in seconds

    Raises
    ------
    ParameterError
        If the motion has fewer than 3 frames or no music beat falls within it.
    """
    positions = joint_positions(motion)
    fps = float(motion.fps)
    return DanceScores(
        fps=fps,
        duration_s=motion.duration_s,
        beat_align=beat_align_score(positions, music_beat_times_s, fps=fps),
        foot_skate=foot_skate_ratio(positions, fps=fps, skeleton=motion.skeleton),
        foot_contact=contact_share(positions, skeleton=motion.skeleton),
        pfc=pfc_score(positions, fps=fps, skeleton=motion.skeleton),
        jerk=mean_jerk(positions, fps=fps),
        freeze_ratio=freeze_ratio(positions, fps=fps),
        limit_violations=limit_violations(motion),
        energy=motion_energy(positions, fps=fps),
        kinematic_beats_per_s=kinematic_beats(positions).size / motion.duration_s,
        pose_spread=pose_spread(positions, skeleton=motion.skeleton),
        pose_spread_heading=pose_spread(positions, skeleton=motion.skeleton, heading_frame=True),
        reach=reach(positions, skeleton=motion.skeleton),
        kinetic=kinetic_features(positions, fps=fps),
    )
