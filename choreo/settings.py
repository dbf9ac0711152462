"""Settings for rendering, read from ``CHOREO_*`` environment variables.

Every field has a typed default, so the embedded path works with no
configuration at all. Which model runs, on which backend and with how many
threads, is the engines' settings (:mod:`engines.settings`); the model's
frame rate is in its own metadata. Hand settings around through
:func:`get_settings`, not an import-time global, so that tests can change the
environment.

A plain pydantic model reads the variables (:meth:`Settings.from_environment`)
rather than ``pydantic_settings.BaseSettings``: importing pydantic-settings costs a
cold ``choreo render`` about 0.1 s of CPU, for six scalar fields.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from choreo.contracts.choices import DEFAULT_FPS

__all__ = ["Settings", "get_settings"]

_ENV_PREFIX = "CHOREO_"
"""A field ``name`` is read from the variable ``CHOREO_<NAME>`` (the name in any case)."""


class Settings(BaseModel):
    """What a render does when the caller does not say."""

    model_config = ConfigDict(extra="ignore")

    default_fps: int = Field(default=DEFAULT_FPS, description="Frame rate when none is asked for.")
    default_seed: int = Field(default=0, description="Seed when none is given: same song, same dance.")
    default_style: str = Field(default="auto", description="Style when none is given.")
    max_duration_s: float = Field(default=1200.0, gt=0, description="Longest song accepted (20 minutes).")
    min_duration_s: float = Field(default=1.0, gt=0, description="Shortest song accepted.")
    silence_dbfs: float = Field(
        default=-60.0, description="A song whose level never rises above this is silent."
    )

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The defaults overridden by ``CHOREO_<FIELD>`` variables of ``environ`` (default: the process's).

        Names match in any case, as pydantic-settings matched them; a bad value raises pydantic's
        ``ValidationError`` naming the field."""
        env = {key.lower(): value for key, value in (os.environ if environ is None else environ).items()}
        prefix = _ENV_PREFIX.lower()
        given = {name: env[prefix + name] for name in cls.model_fields if prefix + name in env}
        return cls.model_validate(given)


@lru_cache
def get_settings() -> Settings:
    """The process's settings, read once from the environment."""
    return Settings.from_environment()
