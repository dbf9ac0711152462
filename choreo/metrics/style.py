"""Style separability: can the style be told from the dance alone?

Each 4-second window of a dance is described by
:func:`~choreo.metrics.descriptor.motion_descriptor` and classified to the
nearest style centroid. Centroids come from reference windows of each style
(the phrase library's source clips, or recorded mocap), after standardising
every dimension by the reference windows' mean and spread. The measure is the
share of a dance's windows classified as the style it was asked to dance.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from choreo.errors import ParameterError
from choreo.metrics.diversity import standardiser

__all__ = ["STYLE_WINDOW_S", "StyleCentroids", "style_centroids", "style_separability"]

STYLE_WINDOW_S = 4.0


@dataclass(frozen=True)
class StyleCentroids:
    """Per-style centroids of standardised descriptors, with the standardisation."""

    styles: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    centroids: np.ndarray  # [styles, dims]

    def classify(self, descriptors: np.ndarray) -> list[str]:
        """The nearest style of each descriptor row ``[windows, dims]``."""
        rows = np.atleast_2d(np.asarray(descriptors, dtype=np.float64))
        if rows.shape[1] != self.centroids.shape[1]:
            raise ParameterError(
                f"descriptors have {rows.shape[1]} dims, the centroids {self.centroids.shape[1]}"
            )
        normed = (rows - self.mean) / self.scale
        distance = np.linalg.norm(normed[:, None, :] - self.centroids[None, :, :], axis=-1)
        return [self.styles[i] for i in np.argmin(distance, axis=1)]


def style_centroids(reference: Mapping[str, np.ndarray]) -> StyleCentroids:
    """Centroids from reference descriptors per style, ``{style: [windows, dims]}``.

    Raises
    ------
    ParameterError
        With fewer than two styles, or a style without windows.
    """
    if len(reference) < 2:
        raise ParameterError(f"style separability needs at least two styles, got {sorted(reference)}")
    empty = [style for style, rows in reference.items() if np.shape(rows)[0] == 0]
    if empty:
        raise ParameterError(f"no reference windows for style(s) {empty}")
    styles = tuple(sorted(reference))
    pooled = np.concatenate([np.atleast_2d(reference[s]) for s in styles])
    mean, scale = standardiser(pooled)
    centroids = np.stack([((np.atleast_2d(reference[s]) - mean) / scale).mean(axis=0) for s in styles])
    return StyleCentroids(styles=styles, mean=mean, scale=scale, centroids=centroids)


def style_separability(descriptors: np.ndarray, style: str, centroids: StyleCentroids) -> float | None:
    """Share of a dance's windows whose nearest centroid is ``style``; None without windows.

    Raises
    ------
    ParameterError
        If ``style`` has no centroid.
    """
    if style not in centroids.styles:
        raise ParameterError(f"style {style!r} has no centroid (have {', '.join(centroids.styles)})")
    rows = np.atleast_2d(np.asarray(descriptors, dtype=np.float64))
    if rows.shape[0] == 0:
        return None
    return float(np.mean([found == style for found in centroids.classify(rows)]))
