"""Structure consistency: is a section that comes back in the music danced alike when it comes back?

Each bar of the dance is described by
:func:`~choreo.metrics.descriptor.motion_descriptor`, standardised over the
dance's bars. The measure is the mean distance between bars of *different*
sections over the mean distance between bars of two different occurrences of
the *same* section: motion similarity (the inverse distance) between repeated
sections over that between different sections. About 1: the dance ignores the
song's form; above 1: a returning chorus brings its moves back.
"""

from __future__ import annotations

import numpy as np

from choreo.errors import ParameterError
from choreo.metrics._positions import check_fps, check_positions
from choreo.metrics.descriptor import motion_descriptor
from choreo.metrics.diversity import standardiser
from choreo.motion.skeleton import SMPL, Skeleton

__all__ = ["structure_consistency"]


def structure_consistency(
    positions: np.ndarray,
    bar_starts_s: np.ndarray,
    section_labels: np.ndarray,
    *,
    fps: float,
    skeleton: Skeleton = SMPL,
) -> float | None:
    """Distance between different sections' bars over that between repeated sections' bars.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames, joints, 3)], metres, frame ``k`` at ``k / fps``
    bar_starts_s : np.ndarray [shape=(bars,)], seconds, increasing; the last bar ends with the motion
    section_labels : np.ndarray [shape=(bars,)], int, a repeated section's bars share a label
    fps : frame rate of ``positions``

    Returns
    -------
    float or None
        None when no label occurs in two separate runs of bars, or there is only one label.

    Raises
    ------
    ParameterError
        If bars and labels disagree in length.
    """
    fps = check_fps(fps)
    pos = check_positions(positions, min_frames=3)
    starts = np.asarray(bar_starts_s, dtype=np.float64).reshape(-1)
    labels = np.asarray(section_labels).reshape(-1)
    if starts.size != labels.size:
        raise ParameterError(f"{starts.size} bar starts for {labels.size} section labels")
    edges = np.clip(np.rint(np.append(starts, pos.shape[0] / fps) * fps).astype(np.int64), 0, pos.shape[0])
    keep = np.flatnonzero(edges[1:] - edges[:-1] >= 3)
    if keep.size < 2:
        return None
    run = np.concatenate([[0], np.cumsum(labels[1:] != labels[:-1])])  # occurrence of each bar's section
    bars = np.stack(
        [motion_descriptor(pos[edges[k] : edges[k + 1]], fps=fps, skeleton=skeleton) for k in keep]
    )
    mean, scale = standardiser(bars)
    normed = (bars - mean) / scale
    labels, run = labels[keep], run[keep]
    first, second = np.triu_indices(keep.size, k=1)
    squared = np.sum(normed**2, axis=1)
    gram = squared[:, None] + squared[None, :] - 2.0 * normed @ normed.T  # no [pairs, dims] array
    distance = np.sqrt(np.maximum(gram[first, second], 0.0))
    same = labels[first] == labels[second]
    repeated = same & (run[first] != run[second])
    if not repeated.any() or same.all():
        return None
    return float(distance[~same].mean() / distance[repeated].mean())
