"""The provenance record every exported dance carries.

A dance file should say where it came from: which model made it, with which
seed and style, from which song (by SHA-256, never the audio itself), and
whose data the model learnt from (the credit lines the data licences ask
for). Each format stores it where it can: FBX in its scene info, glTF in the
``asset`` extras, and BVH, which has no metadata slot, in the JSON summary
beside it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata

from choreo.errors import ParameterError

__all__ = ["Provenance", "generator_name"]

_SHA256 = re.compile(r"[0-9a-f]{64}")


def generator_name() -> str:
    """``"Choreo <version>"`` of the installed package (``"Choreo"`` when not installed)."""
    try:
        return f"Choreo {metadata.version('choreo')}"
    except metadata.PackageNotFoundError:
        return "Choreo"


@dataclass(frozen=True)
class Provenance:
    """Where a dance came from.

    Parameters
    ----------
    model_version : version string of the model that generated the motion
    seed : the generation seed (non-negative)
    style : the dance style that was used (the resolved one when ``auto`` was asked for)
    song_sha256 : SHA-256 of the song file, 64 lower-case hex digits
    data_credits : credit lines of the data the model was trained on
    generator : the software that wrote the file
    model_trained : whether the model was trained (False for an exported but untrained network);
        keyword-only and required, so no caller can leave it to a default
    synthesizer : what made the motion: ``blend`` (library phrases on a plan) or ``model`` (the network)
    energy : the energy level asked for (``low``, ``medium``, ``high``, ``auto``)
    library_sha256 : SHA-256 of the phrase library the plan draws on; empty without one
    """

    model_version: str
    seed: int
    style: str
    song_sha256: str
    data_credits: tuple[str, ...] = ()
    generator: str = field(default_factory=generator_name)
    model_trained: bool = field(kw_only=True)
    synthesizer: str = field(default="model", kw_only=True)
    energy: str = field(default="auto", kw_only=True)
    library_sha256: str = field(default="", kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(self.model_version, str) or not self.model_version:
            raise ParameterError("provenance model_version must be a non-empty string")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ParameterError(f"provenance seed must be a non-negative integer, got {self.seed!r}")
        if not isinstance(self.style, str) or not self.style:
            raise ParameterError("provenance style must be a non-empty string")
        if not isinstance(self.song_sha256, str) or not _SHA256.fullmatch(self.song_sha256):
            raise ParameterError(
                f"provenance song_sha256 must be 64 lower-case hex digits, got {self.song_sha256!r}"
            )
        if not isinstance(self.model_trained, bool):
            raise ParameterError(
                f"provenance model_trained must be true or false, got {self.model_trained!r}"
            )
        if isinstance(self.data_credits, str) or not all(isinstance(c, str) for c in self.data_credits):
            raise ParameterError("provenance data_credits must be a sequence of strings")
        if self.library_sha256 and not _SHA256.fullmatch(self.library_sha256):
            raise ParameterError(
                f"provenance library_sha256 must be empty or 64 hex digits, got {self.library_sha256!r}"
            )
        object.__setattr__(self, "data_credits", tuple(self.data_credits))

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-ready dictionary (credits as a list)."""
        return {
            "generator": self.generator,
            "model_version": self.model_version,
            "seed": self.seed,
            "style": self.style,
            "song_sha256": self.song_sha256,
            "data_credits": list(self.data_credits),
            "model_trained": self.model_trained,
            "synthesizer": self.synthesizer,
            "energy": self.energy,
            "library_sha256": self.library_sha256,
        }

    def to_json(self) -> str:
        """Compact JSON text of :meth:`to_dict`, keys in a fixed order."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Provenance:
        """Inverse of :meth:`to_dict`; raises ParameterError naming a missing key."""
        try:
            return cls(
                model_version=data["model_version"],  # type: ignore[arg-type]
                seed=data["seed"],  # type: ignore[arg-type]
                style=data["style"],  # type: ignore[arg-type]
                song_sha256=data["song_sha256"],  # type: ignore[arg-type]
                data_credits=tuple(data.get("data_credits", ())),  # type: ignore[arg-type]
                generator=str(data.get("generator", generator_name())),
                model_trained=data["model_trained"],  # type: ignore[arg-type]
                synthesizer=str(data.get("synthesizer", "model")),
                energy=str(data.get("energy", "auto")),
                library_sha256=str(data.get("library_sha256", "")),
            )
        except KeyError as exc:
            raise ParameterError(f"provenance lacks the key {exc.args[0]!r}") from None

    @classmethod
    def from_json(cls, text: str) -> Provenance:
        """Inverse of :meth:`to_json`."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParameterError(f"provenance is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ParameterError("provenance JSON must be an object")
        return cls.from_dict(data)
