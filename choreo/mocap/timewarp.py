"""Beat retiming: warp a motion's clock so that its kinematic beats land on music beats.

The warp maps output (music) time ``u`` to source (motion) time ``s(u)``. It
is piecewise linear through matched anchor pairs ``(music beat, kinematic
beat)``, monotonic, and its slope ``ds/du`` stays within ``[1 / max_stretch,
1 / min_stretch]``, so no stretch of the motion is slower than
``max_stretch`` or faster than ``min_stretch`` times its own pace. Before the
first and after the last anchor the motion plays at its own pace.

The anchors come from dynamic programming over all pairs: the chain with the
most matched beats wins, with a small penalty on stretching so that among equal
chains the one closest to the original timing is taken.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.errors import ParameterError

__all__ = ["MAX_STRETCH", "MIN_STRETCH", "TimeWarp", "fit_warp"]

MIN_STRETCH = 0.8
MAX_STRETCH = 1.25
_STRETCH_PENALTY = 0.5
_MAX_SKIP_MUSIC = 4
_MAX_SKIP_MOTION = 8


@dataclass(frozen=True)
class TimeWarp:
    """A monotonic piecewise-linear map from music time to motion time.

    Parameters
    ----------
    music_s : np.ndarray [shape=(anchors,)], music times of the anchors, increasing
    motion_s : np.ndarray [shape=(anchors,)], motion times of the anchors, increasing
    motion_duration_s : float, length of the source motion (its last frame time)
    """

    music_s: np.ndarray
    motion_s: np.ndarray
    motion_duration_s: float

    @property
    def start_s(self) -> float:
        """Music time at which the motion's first frame plays."""
        return float(self.music_s[0] - self.motion_s[0])

    @property
    def end_s(self) -> float:
        """Music time at which the motion's last frame plays."""
        return float(self.music_s[-1] + (self.motion_duration_s - self.motion_s[-1]))

    def motion_time(self, music_s: np.ndarray) -> np.ndarray:
        """Motion time ``s(u)`` for music times ``u`` (slope 1 outside the anchors), clipped to the clip."""
        u = np.asarray(music_s, dtype=np.float64)
        s = np.interp(u, self.music_s, self.motion_s)
        s = np.where(u < self.music_s[0], self.motion_s[0] + (u - self.music_s[0]), s)
        s = np.where(u > self.music_s[-1], self.motion_s[-1] + (u - self.music_s[-1]), s)
        return np.clip(s, 0.0, self.motion_duration_s)

    def slopes(self) -> np.ndarray:
        """``ds/du`` of each segment between anchors."""
        return np.diff(self.motion_s) / np.diff(self.music_s)


def fit_warp(
    motion_beats_s: np.ndarray,
    music_beats_s: np.ndarray,
    motion_duration_s: float,
    *,
    min_stretch: float = MIN_STRETCH,
    max_stretch: float = MAX_STRETCH,
    earliest_start_s: float = 0.0,
) -> TimeWarp | None:
    """The warp that lands the most kinematic beats on music beats.

    Parameters
    ----------
    motion_beats_s : kinematic beat times of the source motion, seconds
    music_beats_s : music beat times, seconds on the song's clock
    motion_duration_s : length of the source motion, seconds
    min_stretch, max_stretch : bounds on (music time / motion time) between anchors
    earliest_start_s : the motion may not start before this music time

    Returns
    -------
    TimeWarp, or None when no beat pair can be matched (no beats, or the
    motion would start before ``earliest_start_s`` for every pair)
    """
    if not 0 < min_stretch <= 1.0 <= max_stretch:
        raise ParameterError(f"need 0 < min_stretch <= 1 <= max_stretch, got {min_stretch}, {max_stretch}")
    k = np.unique(np.asarray(motion_beats_s, dtype=np.float64))
    b = np.unique(np.asarray(music_beats_s, dtype=np.float64))
    if k.size == 0 or b.size == 0:
        return None
    lo_slope, hi_slope = 1.0 / max_stretch, 1.0 / min_stretch
    n_b, n_k = b.size, k.size
    # best[i, j]: score of the best chain ending with music beat i matched to motion beat j
    start_ok = (b[:, None] - k[None, :]) >= earliest_start_s
    best = np.where(start_ok, 1.0, -np.inf)
    back = np.full((n_b, n_k, 2), -1, dtype=int)
    for i in range(1, n_b):
        for di in range(1, min(_MAX_SKIP_MUSIC, i) + 1):
            du = b[i] - b[i - di]
            for dj in range(1, min(_MAX_SKIP_MOTION, n_k - 1) + 1):
                ds = k[dj:] - k[:-dj]
                slope = ds / du
                ok = (slope >= lo_slope) & (slope <= hi_slope)
                cand = best[i - di, :-dj] + 1.0 - _STRETCH_PENALTY * np.abs(np.log(slope))
                cand = np.where(ok, cand, -np.inf)
                better = cand > best[i, dj:]
                idx = np.nonzero(better)[0]
                best[i, dj + idx] = cand[idx]
                back[i, dj + idx, 0] = i - di
                back[i, dj + idx, 1] = idx
    if not np.isfinite(best).any():
        return None
    i, j = (int(n) for n in np.unravel_index(np.argmax(best), best.shape))
    chain = []
    while i >= 0:
        chain.append((i, j))
        i, j = (int(n) for n in back[i, j])
    chain.reverse()
    music = np.array([b[i] for i, _ in chain])
    motion = np.array([k[j] for _, j in chain])
    return TimeWarp(music_s=music, motion_s=motion, motion_duration_s=float(motion_duration_s))
