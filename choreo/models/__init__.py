"""Shipped model files: ``choreo-lstm.onnx`` and its ``MODEL_CARD.md``."""

from pathlib import Path

__all__ = ["DEFAULT_MODEL_PATH"]

DEFAULT_MODEL_PATH = Path(__file__).resolve().parent / "choreo-lstm.onnx"
