"""A whole song's model inputs: its features, style one-hot and seed latent.

The conditioning of a song (features, style one-hot and seed latent) is built
once for all its frames, so the dance depends only on the song, the style and
the seed, never on how a song runner (:mod:`engines.runner`) cuts the frames
into chunks or batches them.
"""

from __future__ import annotations

import numpy as np

from choreo.errors import ParameterError
from engines.base import ModelSpec

__all__ = ["song_inputs"]


def song_inputs(features: np.ndarray, *, style: str, seed: int, spec: ModelSpec) -> dict[str, np.ndarray]:
    """The model inputs for every frame of a song, ``{name: [N, width]}`` float32.

    Parameters
    ----------
    features : np.ndarray [shape=(N, spec.feature_dim)], music features at the model's fps
    style : a concrete style name from ``spec.styles``
    seed : int; the latent is i.i.d. standard normal noise from ``numpy.random.default_rng(seed)``
    spec : the model's description
    """
    if features.ndim != 2 or features.shape[1] != spec.feature_dim:
        raise ParameterError(f"features must be [frames, {spec.feature_dim}], got {features.shape}")
    if style not in spec.styles:
        raise ParameterError(f"the model knows styles {spec.styles}, not {style!r}")
    n = features.shape[0]
    one_hot = np.zeros((n, len(spec.styles)), dtype=np.float32)
    one_hot[:, spec.styles.index(style)] = 1.0
    latent = np.random.default_rng(seed).standard_normal((n, spec.latent_dim)).astype(np.float32)
    return {"music": features.astype(np.float32), "style": one_hot, "latent": latent}
