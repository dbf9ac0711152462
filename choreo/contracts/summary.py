"""The JSON summary written beside every rendered dance: one typed schema.

It carries the provenance (which BVH has no slot for), the song's timing, the
options and the files, so a reader can match the dance to its song without
the audio. :func:`choreo.pipeline.export_dance` builds it, the caller adds what
only it knows (the command line its timings) and writes it once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["DanceSummary"]


class DanceSummary(BaseModel):
    """What ``<name>.json`` says about a dance (seconds, frames, fps, beats per minute)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    generator: str
    model_version: str
    seed: int
    style: str
    song_sha256: str
    data_credits: list[str]
    model_trained: bool
    synthesizer: str = "model"
    energy: str = "auto"
    library_sha256: str = ""
    song: str
    duration_s: float
    frames: int
    fps: float
    tempo_bpm: float
    beat_times: list[float]
    downbeat_times: list[float]
    options: dict[str, Any]
    files: dict[str, str]
    timings_s: dict[str, float] | None = None
    plan: dict[str, Any] | None = None
    """The choreography plan (:class:`choreo.contracts.plan.Plan` as JSON) when the blend danced it."""

    def write(self, path: Path) -> Path:
        """Write the summary as indented JSON (no ``timings_s`` key when there are none); returns ``path``."""
        path.write_text(self.model_dump_json(indent=2, exclude_none=True) + "\n")
        return path
