"""Shipped model files: ``choreo-guided.onnx`` (the network ``--synth model`` runs) and ``MODEL_CARD.md``."""

from pathlib import Path

__all__ = ["DEFAULT_MODEL_PATH"]

DEFAULT_MODEL_PATH = Path(__file__).resolve().parent / "choreo-guided.onnx"
