"""``PreparedSong``: the prepare stage's output, a song's analysis and its plan, in memory and as one file.

The service's prepare stage analyses the song at its synthesizer's frame rate and
plans the dance; the perform stage reads both back (``work/prepared.npz``),
validated: the features as :class:`~choreo.audio.MusicFeatures` and the plan as
a :class:`~choreo.contracts.plan.Plan`, JSON only inside the file.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from os import PathLike
from typing import BinaryIO

import numpy as np

from choreo.audio import MusicFeatures
from choreo.contracts.plan import Plan
from choreo.errors import ParameterError

__all__ = ["PreparedSong"]


@dataclass(frozen=True)
class PreparedSong:
    """A song's features at the synthesizer's rate and the plan made on them."""

    features: MusicFeatures
    plan: Plan

    def to_npz(self, file: str | PathLike[str] | BinaryIO) -> None:
        """Write both as one ``.npz``: the features' own file and the plan's JSON."""
        features = io.BytesIO()
        self.features.to_npz(features)
        np.savez(
            file,
            features=np.frombuffer(features.getvalue(), dtype=np.uint8),
            plan=np.array(json.dumps(self.plan.to_dict())),
        )

    @classmethod
    def from_npz(cls, file: str | PathLike[str] | BinaryIO) -> PreparedSong:
        """Read what :meth:`to_npz` wrote.

        Raises
        ------
        AudioError
            code ``corrupt_features``, when the features are not readable.
        ParameterError
            When the file is not a prepared song or its plan is not valid.
        """
        try:
            with np.load(file, allow_pickle=False) as data:
                features, plan = data["features"].tobytes(), str(data["plan"])
        except (OSError, ValueError, EOFError, KeyError) as exc:
            raise ParameterError(f"not a prepared song file ({exc})") from None
        try:
            plan_data = json.loads(plan)
        except json.JSONDecodeError as exc:
            raise ParameterError(f"the prepared song holds no valid plan ({exc})") from None
        return cls(MusicFeatures.from_npz(io.BytesIO(features)), Plan.from_dict(plan_data))
