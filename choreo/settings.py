"""Settings for rendering, read from ``CHOREO_*`` environment variables.

Every field has a typed default, so the embedded path works with no
configuration at all. Which model runs, on which backend and with how many
threads, is the engines' settings (:mod:`engines.settings`); the model's
frame rate is in its own metadata. Hand settings around through
:func:`get_settings`, not an import-time global, so that tests can change the
environment.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from choreo.contracts.choices import DEFAULT_FPS

__all__ = ["Settings", "get_settings"]


class Settings(BaseSettings):
    """What a render does when the caller does not say."""

    model_config = SettingsConfigDict(env_prefix="CHOREO_", extra="ignore")

    default_fps: int = Field(default=DEFAULT_FPS, description="Frame rate when none is asked for.")
    default_seed: int = Field(default=0, description="Seed when none is given: same song, same dance.")
    default_style: str = Field(default="auto", description="Style when none is given.")
    max_duration_s: float = Field(default=1200.0, gt=0, description="Longest song accepted (20 minutes).")
    min_duration_s: float = Field(default=1.0, gt=0, description="Shortest song accepted.")
    silence_dbfs: float = Field(
        default=-60.0, description="A song whose level never rises above this is silent."
    )


@lru_cache
def get_settings() -> Settings:
    """The process's settings, read once from the environment."""
    return Settings()
