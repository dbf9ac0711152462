"""``ModelSpec``: what a model file is, read from its metadata.

The engines read it when they load a model, the training code writes it when it
exports one, and the pipeline builds a song's inputs from it, so it sits on the
contracts floor rather than in any of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from choreo.errors import EngineError

__all__ = ["LEGACY_INPUTS", "ModelSpec"]

LEGACY_INPUTS = ("music", "style", "latent")
"""The per-frame inputs of model files written before the metadata declared them."""


@dataclass(frozen=True)
class ModelSpec:
    """What a model file is, read from its metadata.

    Parameters
    ----------
    version : model version string, written into every exported file
    native_fps : the frame rate the model generates at; other rates are resampled
    feature_dim : numbers of music features per frame (35)
    styles : style names, in the order of the one-hot ``style`` input
    latent_dim : Z, width of the ``latent`` input
    state_shapes : per-sequence shape of each state tensor, by name without prefix
    trained : False for an exported but untrained network
    credits : credit lines of the data the model was trained on
    inputs : ``(name, width)`` of each per-frame input in graph order, as the
        metadata's ``choreo.inputs`` declares them; empty for files written before
        that key, which take ``music``, ``style`` and ``latent``
    """

    version: str
    native_fps: int
    feature_dim: int
    styles: tuple[str, ...]
    latent_dim: int
    state_shapes: Mapping[str, tuple[int, ...]]
    trained: bool
    credits: tuple[str, ...]
    inputs: tuple[tuple[str, int], ...] = ()

    @property
    def input_widths(self) -> dict[str, int]:
        """Width of each per-frame input, by name, in graph order."""
        if self.inputs:
            return dict(self.inputs)
        widths = (self.feature_dim, len(self.styles), self.latent_dim)
        return dict(zip(LEGACY_INPUTS, widths, strict=True))

    @classmethod
    def from_metadata(cls, meta: Mapping[str, str]) -> ModelSpec:
        """Build from ONNX ``metadata_props`` (keys prefixed ``choreo.``)."""
        try:
            return cls(
                version=meta["choreo.model_version"],
                native_fps=int(meta["choreo.native_fps"]),
                feature_dim=int(meta["choreo.feature_dim"]),
                styles=tuple(json.loads(meta["choreo.styles"])),
                latent_dim=int(meta["choreo.latent_dim"]),
                state_shapes={k: tuple(v) for k, v in json.loads(meta["choreo.state_shapes"]).items()},
                trained=meta.get("choreo.trained", "false").lower() == "true",
                credits=tuple(json.loads(meta.get("choreo.credits", "[]"))),
                inputs=tuple((str(n), int(w)) for n, w in json.loads(meta.get("choreo.inputs", "[]"))),
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise EngineError(f"model metadata is incomplete or malformed: {exc}") from exc

    def to_metadata(self) -> dict[str, str]:
        """Inverse of :meth:`from_metadata`."""
        meta = {
            "choreo.model_version": self.version,
            "choreo.native_fps": str(self.native_fps),
            "choreo.feature_dim": str(self.feature_dim),
            "choreo.styles": json.dumps(list(self.styles)),
            "choreo.latent_dim": str(self.latent_dim),
            "choreo.state_shapes": json.dumps({k: list(v) for k, v in self.state_shapes.items()}),
            "choreo.trained": "true" if self.trained else "false",
            "choreo.credits": json.dumps(list(self.credits)),
        }
        if self.inputs:
            meta["choreo.inputs"] = json.dumps([[n, w] for n, w in self.inputs])
        return meta
