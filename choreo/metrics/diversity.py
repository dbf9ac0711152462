"""Diversity: how different dances are from each other, in kinetic features.

Each dance is summarised by kinetic features, three numbers per joint: mean
squared horizontal speed, mean squared vertical speed (kinetic energy per unit
mass, twice) and mean acceleration magnitude (how much effort goes into
changing the motion). These are our own choice in the spirit of the AIST++
"kinetic" features. Features are standardised per dimension (by a reference
set's mean and standard deviation where one is given), and diversity is the
mean Euclidean distance over pairs of dances: between dances of different
songs, and between seeds of the same song.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from choreo.errors import ParameterError
from choreo.metrics._positions import check_fps, check_positions
from choreo.motion.contacts import HORIZONTAL_AXES, UP_AXIS

__all__ = ["kinetic_features", "mean_pairwise_distance", "standardiser"]


def kinetic_features(positions: np.ndarray, *, fps: float) -> np.ndarray:
    """Kinetic features of one dance, ``[joints * 3]``.

    Parameters
    ----------
    positions : np.ndarray [shape=(frames >= 3, joints, 3)], metres, Y up
    fps : float > 0, frame rate of ``positions``

    Returns
    -------
    np.ndarray [shape=(joints * 3,)]
        Per joint: mean squared horizontal speed (m^2/s^2), mean squared
        vertical speed (m^2/s^2), mean acceleration magnitude (m/s^2).
    """
    fps = check_fps(fps)
    pos = check_positions(positions, min_frames=3)
    velocity = np.diff(pos, axis=0) * fps
    horizontal = np.mean(np.sum(velocity[..., HORIZONTAL_AXES] ** 2, axis=-1), axis=0)
    vertical = np.mean(velocity[..., UP_AXIS] ** 2, axis=0)
    accel = np.mean(np.linalg.norm(np.diff(velocity, axis=0) * fps, axis=-1), axis=0)
    return np.stack([horizontal, vertical, accel], axis=-1).reshape(-1)


def standardiser(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and scale per dimension of a set of feature vectors ``[dances, dims]``.

    Dimensions that do not vary get scale 1, so they contribute nothing and divide by nothing.
    """
    feats = np.atleast_2d(np.asarray(features, dtype=np.float64))
    scale = feats.std(axis=0)
    return feats.mean(axis=0), np.where(scale > 1e-12, scale, 1.0)


def mean_pairwise_distance(
    features: np.ndarray,
    groups: Sequence[object],
    *,
    same_group: bool,
    mean: np.ndarray | None = None,
    scale: np.ndarray | None = None,
) -> float | None:
    """Mean Euclidean distance between standardised feature vectors over selected pairs.

    Parameters
    ----------
    features : np.ndarray [shape=(dances, dims)]
    groups : one label per dance (the song)
    same_group : True for pairs within a group (between seeds of one song),
        False for pairs across groups (between songs)
    mean, scale : standardisation per dimension; by default those of ``features``

    Returns
    -------
    float or None
        ``None`` when no pair qualifies (one song, or one seed per song).

    Raises
    ------
    ParameterError
        If ``groups`` and ``features`` disagree in length.
    """
    feats = np.atleast_2d(np.asarray(features, dtype=np.float64))
    if len(groups) != feats.shape[0]:
        raise ParameterError(f"{len(groups)} group labels for {feats.shape[0]} feature vectors")
    default_mean, default_scale = standardiser(feats)
    mean = default_mean if mean is None else mean
    scale = default_scale if scale is None else scale
    normed = (feats - mean) / scale
    labels = np.array([str(g) for g in groups])
    first, second = np.triu_indices(feats.shape[0], k=1)
    same = labels[first] == labels[second]
    keep = same if same_group else ~same
    if not np.any(keep):
        return None
    distances = np.linalg.norm(normed[first[keep]] - normed[second[keep]], axis=-1)
    return float(np.mean(distances))
