"""The network an exported model file carries: its config and weights, read from the ONNX metadata.

:func:`choreo.model.export.export_onnx` writes them beside the graph, so the
torch backend rebuilds the very network that was trained, with no second copy
of its arithmetic.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from choreo.errors import ParameterError
from engines.network.config import ModelConfig

__all__ = ["NETWORK_KEY", "WEIGHTS_KEY", "read_network"]

NETWORK_KEY = "choreo.network"
"""Metadata key of the network's config (JSON)."""

WEIGHTS_KEY = "choreo.weights"
"""Metadata key of the map from weight name to the graph initializer that holds it (JSON)."""


def read_network(path: Path) -> tuple[ModelConfig, dict[str, np.ndarray]]:
    """The network config and weights an exported model file carries (see the module docstring).

    Raises
    ------
    ParameterError
        When the file lacks the network metadata (a model exported before it was
        written, or not by :func:`export_onnx`), naming the key.
    """
    model = onnx.load(str(path))
    meta = {p.key: p.value for p in model.metadata_props}
    missing = [key for key in (NETWORK_KEY, WEIGHTS_KEY) if key not in meta]
    if missing:
        raise ParameterError(
            f"{path}: the model carries no network ({', '.join(missing)} missing); re-export it"
        )
    config = ModelConfig.from_dict(json.loads(meta[NETWORK_KEY]))
    initializers = {i.name: i for i in model.graph.initializer}
    params = {}
    for key, name in json.loads(meta[WEIGHTS_KEY]).items():
        if name not in initializers:
            raise ParameterError(f"{path}: weight {key!r} names initializer {name!r}, which the graph lacks")
        params[key] = numpy_helper.to_array(initializers[name]).astype(np.float32)
    return config, params
