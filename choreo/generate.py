"""A whole song's model inputs: its features, the plan's guide and junction timing, the seed latent.

The conditioning of a song (features, the guide and junction timing of its plan,
a style one-hot for a styled model, the seed latent) is built
once for all its frames, so the dance depends only on the song, the style and
the seed, never on how a song runner (:mod:`engines.runner`) cuts the frames
into chunks or batches them.
"""

from __future__ import annotations

import numpy as np

from choreo.contracts.model_spec import ModelSpec
from choreo.errors import ParameterError

__all__ = ["song_inputs"]


def song_inputs(
    features: np.ndarray,
    *,
    style: str,
    seed: int,
    spec: ModelSpec,
    guide: np.ndarray | None = None,
    junction: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """The model inputs for every frame of a song, ``{name: [N, width]}`` float32: those ``spec`` declares.

    Parameters
    ----------
    features : np.ndarray [shape=(N, spec.feature_dim)], music features at the model's fps
    style : a concrete style name from ``spec.styles``
    seed : int; the latent is i.i.d. standard normal noise from ``numpy.random.default_rng(seed)``
    spec : the model's description
    guide, junction : np.ndarray [shape=(N, 75)] and [shape=(N, 2)], the planned dance and the
        seconds to the junctions around each frame (:mod:`choreo.choreography.guide`), for a
        synthesizer that performs a plan

    Raises
    ------
    ParameterError
        When the features have the wrong shape, the style is unknown, or the model asks for a guide
        that was not given.
    """
    if features.ndim != 2 or features.shape[1] != spec.feature_dim:
        raise ParameterError(f"features must be [frames, {spec.feature_dim}], got {features.shape}")
    widths = spec.input_widths
    n = features.shape[0]
    inputs = {"music": features.astype(np.float32)}
    if "style" in widths:
        if style not in spec.styles:
            raise ParameterError(f"the model knows styles {spec.styles}, not {style!r}")
        one_hot = np.zeros((n, len(spec.styles)), dtype=np.float32)
        one_hot[:, spec.styles.index(style)] = 1.0
        inputs["style"] = one_hot
    if "latent" in widths:
        inputs["latent"] = (
            np.random.default_rng(seed).standard_normal((n, spec.latent_dim)).astype(np.float32)
        )
    for name, given in (("guide", guide), ("junction", junction)):
        if name in widths:
            if given is None or np.shape(given)[0] != n:
                raise ParameterError(f"the synthesizer needs a {name} of {n} frames")
            inputs[name] = np.asarray(given, dtype=np.float32)
    return inputs
