"""A small ONNX chunk model with the engine contract, built in code for tests.

It is the dance network itself (:class:`engines.network.dance_net.DanceNet`) at a
small size with untrained weights, exported by
:func:`choreo.model.export.export_onnx`: the same graph as the shipped model
(an ONNX ``Scan`` over the frames of a chunk, ``state_in_*`` / ``state_out_*``
carried from chunk to chunk, ``poses [B, T, 75]``) and the same metadata, so
every backend, the torch one included, loads it as it loads the shipped file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from choreo.contracts.model_spec import ModelSpec
from choreo.model.export import export_onnx, untrained_params
from engines.network.config import ModelConfig

__all__ = ["STYLES", "build_tiny_model", "tiny_spec"]

STYLES = ("salsa", "modern", "breakdance", "whirl")
FEATURES = 35
LATENT = 8
POSE = 75


def tiny_spec(hidden: int) -> ModelSpec:
    """A small model description with three state tensors, for tests of the spec alone."""
    return ModelSpec(
        version="tiny-test-0",
        native_fps=30,
        feature_dim=FEATURES,
        styles=STYLES,
        latent_dim=LATENT,
        state_shapes={"h": (hidden,), "c": (hidden,), "pose": (POSE,)},
        trained=False,
        credits=(),
    )


def build_tiny_model(
    path: Path, *, hidden: int = 32, cond_hidden: int = 16, pose_std: float | None = None, seed: int = 0
) -> Path:
    """Write a small untrained styled dance network to ``path`` and return it.

    ``pose_std`` widens the spread of the poses around the T-pose to that many units of the 6D
    rotations (and metres of the root) for every pose feature; None keeps the narrow spread of
    :func:`~choreo.model.export.rest_pose_stats`, with which an untrained network barely moves.
    """
    config = ModelConfig(hidden=hidden, cond_hidden=cond_hidden, latent_dim=LATENT, styles=STYLES)
    params = untrained_params(config, seed)
    if pose_std is not None:
        params["pose_std"] = np.full_like(params["pose_std"], pose_std)
    export_onnx(config, params, path, version="tiny-test-0", trained=False, credits=())
    return path
