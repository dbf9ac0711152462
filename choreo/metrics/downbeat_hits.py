"""Are the big moves on the downbeats and at section starts? Hits by where the beat falls in the bar.

Each music beat gets the dance's *hit*: the top of the smoothed mean joint
speed over the half beat before the beat less its lowest within a quarter beat
of it, in m/s (:func:`choreo.motion.stops.hit_strengths`): a big move that
stops on the beat scores its speed, a move that carries on through the beat or
a body standing still scores about 0. The measure is the mean hit on the
downbeats over the mean on all beats (1: the bar's first beat is danced like
any other), and, as the control a music-blind dancer fails, the same ratio on
the beats one after the downbeats (the downbeats shifted by one beat): a
dancer who ignores the bar scores about the same on both, one whose big moves
land on the downbeats scores above 1 on its own downbeats and below on the
shifted ones. The same ratio on the downbeats that start a section of the
music (the bar where the section label changes, the song's first bar left out:
a dance's first bar starts from its opening pose) says whether a new section
comes in with a big move.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.metrics._positions import check_fps, check_positions
from choreo.motion.stops import hit_strengths, smoothed_speed

__all__ = ["DOWNBEAT_MATCH_S", "DownbeatHits", "beat_hits", "downbeat_hits", "section_start_times"]

DOWNBEAT_MATCH_S = 0.05
"""A downbeat (or section start) is the beat within this many seconds of it; one farther off is left out."""


@dataclass(frozen=True)
class DownbeatHits:
    """Mean hit on downbeats, on the beats after them, and on section starts, each over all beats'.

    A ratio is None where the dance has no such beat (or no beat with any hit).
    """

    on_downbeats: float | None
    shifted: float | None
    section_starts: float | None

    @property
    def own_minus_shifted(self) -> float | None:
        if self.on_downbeats is None or self.shifted is None:
            return None
        return self.on_downbeats - self.shifted

    def to_dict(self) -> dict[str, float | None]:
        def rounded(value: float | None) -> float | None:
            return None if value is None else round(value, 4)

        return {
            "downbeat_hit_own": rounded(self.on_downbeats),
            "downbeat_hit_shifted": rounded(self.shifted),
            "downbeat_hit_own_minus_shifted": rounded(self.own_minus_shifted),
            "section_start_hit": rounded(self.section_starts),
        }


def beat_hits(positions: np.ndarray, beat_times_s: np.ndarray, *, fps: float) -> np.ndarray:
    """[beats] the hit strength on each beat (m/s, :func:`~choreo.motion.stops.hit_strengths`); NaN
    for a beat outside the motion.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres, frame ``k`` at ``k / fps``
    beat_times_s : np.ndarray [shape=(beats,)], seconds, increasing; a beat's length is the time
        since the beat before, at most the median (across a gap between steady stretches, and for
        the first beat)
    fps : frame rate of ``positions``
    """
    fps = check_fps(fps)
    pos = check_positions(positions, min_frames=2)
    beats = np.asarray(beat_times_s, dtype=np.float64).reshape(-1)
    if beats.size < 2:
        return np.full(beats.size, np.nan)
    gaps = np.diff(beats)
    most = float(np.median(gaps))
    length = np.minimum(np.concatenate([[most], gaps]), most) * fps
    frames = beats * fps
    inside = (frames >= 0) & (frames <= pos.shape[0] - 1)
    out = np.full(beats.size, np.nan)
    out[inside] = hit_strengths(smoothed_speed(pos, fps), frames[inside], length[inside])
    return out


def section_start_times(bar_starts_s: np.ndarray, section_labels: np.ndarray) -> np.ndarray:
    """Start times of the bars where a new section begins (the first bar left out)."""
    starts = np.asarray(bar_starts_s, dtype=np.float64).reshape(-1)
    labels = np.asarray(section_labels).reshape(-1)
    return starts[1:][labels[1:] != labels[:-1]]


def _beat_indices(beats: np.ndarray, times_s: np.ndarray) -> np.ndarray:
    """Index of the beat nearest each time, for times within :data:`DOWNBEAT_MATCH_S` of one."""
    times = np.asarray(times_s, dtype=np.float64).reshape(-1)
    if beats.size == 0 or times.size == 0:
        return np.zeros(0, dtype=np.int64)
    right = np.clip(np.searchsorted(beats, times), 0, beats.size - 1)
    left = np.clip(right - 1, 0, beats.size - 1)
    nearest = np.where(np.abs(beats[left] - times) < np.abs(beats[right] - times), left, right)
    return np.unique(nearest[np.abs(beats[nearest] - times) <= DOWNBEAT_MATCH_S])


def downbeat_hits(
    positions: np.ndarray,
    beat_times_s: np.ndarray,
    downbeat_times_s: np.ndarray,
    *,
    fps: float,
    section_starts_s: np.ndarray | None = None,
) -> DownbeatHits:
    """The mean hit on downbeats, on the beats one after them, and on section starts, over all beats'.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres
    beat_times_s : the song's beats on the dance's clock, seconds, increasing
    downbeat_times_s : the bars' first beats on the same clock
    fps : frame rate of ``positions``
    section_starts_s : start times of the bars that begin a section (:func:`section_start_times`)
    """
    beats = np.asarray(beat_times_s, dtype=np.float64).reshape(-1)
    energy = beat_hits(positions, beats, fps=fps)
    valid = np.isfinite(energy)
    overall = float(energy[valid].mean()) if valid.any() else 0.0

    def ratio(index: np.ndarray) -> float | None:
        index = index[valid[index]] if index.size else index
        if index.size == 0 or overall <= 0.0:
            return None
        return float(energy[index].mean()) / overall

    down = _beat_indices(beats, downbeat_times_s)
    after = down[down + 1 < beats.size] + 1
    sections = _beat_indices(beats, section_starts_s if section_starts_s is not None else np.zeros(0))
    return DownbeatHits(on_downbeats=ratio(down), shifted=ratio(after), section_starts=ratio(sections))
