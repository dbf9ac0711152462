"""Settings for rendering, read from ``CHOREO_*`` environment variables.

Every field has a typed default, so the embedded path works with no
configuration at all. Hand settings around through :func:`get_settings`, not
an import-time global, so that tests can change the environment.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from choreo.options import DEFAULT_FPS

__all__ = ["Settings", "get_settings"]

_PACKAGE_DIR = Path(__file__).resolve().parent


class Settings(BaseSettings):
    """What a render does when the caller does not say."""

    model_config = SettingsConfigDict(env_prefix="CHOREO_", extra="ignore")

    model_path: Path = Field(
        default=_PACKAGE_DIR / "models" / "choreo-lstm.onnx",
        description="ONNX model file the engines load.",
    )
    model_fps: int = Field(default=30, description="Frame rate the model generates at; others are resampled.")
    default_fps: int = Field(default=DEFAULT_FPS, description="Frame rate when none is asked for.")
    default_seed: int = Field(default=0, description="Seed when none is given: same song, same dance.")
    default_style: str = Field(default="auto", description="Style when none is given.")
    max_duration_s: float = Field(default=1200.0, gt=0, description="Longest song accepted (20 minutes).")
    min_duration_s: float = Field(default=1.0, gt=0, description="Shortest song accepted.")
    silence_dbfs: float = Field(
        default=-60.0, description="A song whose level never rises above this is silent."
    )
    chunk_frames: int = Field(default=128, ge=16, le=128, description="Frames per engine call.")
    engine_threads: int = Field(default=2, ge=1, description="CPU threads for ONNX Runtime.")


@lru_cache
def get_settings() -> Settings:
    """The process's settings, read once from the environment."""
    return Settings()
