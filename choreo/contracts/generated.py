"""``GeneratedMotion``: the perform stage's output, in memory and as one file.

A raw dance at the synthesizer's native fps, where it came from (the
provenance, with the resolved style and whether the model is trained), the
song's timing that post-processing and export need, and the plan it performed.
The contacts (:class:`~choreo.contracts.contacts.ContactTrack`, which heels, toes and hands
touch the floor in which frame) are detected on the raw dance, with the phrase
library's foot bits of the plan's phrases taken in, and travel with it.
The service stores it as one ``.npz`` (``work/performed.npz``), so the finishing
stage reads one object with one schema; the plan is typed in memory and JSON
only inside the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from os import PathLike
from typing import BinaryIO

import numpy as np

from choreo.contracts.contacts import CONTACT_POINTS, ContactTrack
from choreo.contracts.plan import Plan
from choreo.contracts.provenance import Provenance
from choreo.contracts.timing import SongTiming
from choreo.errors import ParameterError
from choreo.motion import Motion

__all__ = ["GeneratedMotion"]

_NPZ_VERSION = 3
_NPZ_KEYS = (
    "version",
    "poses",
    "fps",
    "provenance",
    "beat_times",
    "downbeat_times",
    "tempo_bpm",
    "duration_s",
    "plan",
    "contacts",
)


@dataclass(frozen=True)
class GeneratedMotion:
    """A raw dance and everything the later stages need to finish and export it.

    Parameters
    ----------
    motion : the raw dance at the synthesizer's native fps
    provenance : where it came from; ``provenance.style`` is the concrete style it
        was generated in (``auto`` resolved from the tempo, the one place it is resolved)
    song : the song's beats, tempo and duration
    plan : the choreography plan the dance performed
    contacts : the raw dance's contacts, at its fps and frame count
    """

    motion: Motion
    provenance: Provenance
    song: SongTiming
    plan: Plan
    contacts: ContactTrack

    def __post_init__(self) -> None:
        if self.contacts.n_frames != self.motion.n_frames or self.contacts.fps != self.motion.fps:
            raise ParameterError(
                f"contacts ({self.contacts.n_frames} frames at {self.contacts.fps} fps) do not match "
                f"the motion ({self.motion.n_frames} frames at {self.motion.fps} fps)"
            )

    def to_npz(self, file: str | PathLike[str] | BinaryIO) -> None:
        """Write as an ``.npz`` (poses as float32, as the engine made them; not compressed: zlib
        saves a quarter of the bytes for 50 ms of CPU a 3-minute dance)."""
        np.savez(
            file,
            version=np.int64(_NPZ_VERSION),
            poses=self.motion.to_array().astype(np.float32),
            fps=np.float64(self.motion.fps),
            provenance=np.array(self.provenance.to_json()),
            beat_times=self.song.beat_times,
            downbeat_times=self.song.downbeat_times,
            tempo_bpm=np.float64(self.song.tempo_bpm),
            duration_s=np.float64(self.song.duration_s),
            plan=np.array(json.dumps(self.plan.to_dict())),
            contacts=np.packbits(self.contacts.frames, axis=1),
        )

    @classmethod
    def from_npz(cls, file: str | PathLike[str] | BinaryIO) -> GeneratedMotion:
        """Read what :meth:`to_npz` wrote.

        Raises
        ------
        ParameterError
            Naming the missing key, the unknown version or what is wrong with the plan.
        """
        with np.load(file, allow_pickle=False) as data:
            missing = [key for key in _NPZ_KEYS if key not in data.files]
            if missing:
                raise ParameterError(f"not a GeneratedMotion file (missing {missing})")
            if int(data["version"]) != _NPZ_VERSION:
                raise ParameterError(
                    f"GeneratedMotion file version {int(data['version'])}, this code reads {_NPZ_VERSION}"
                )
            motion = Motion.from_array(data["poses"].astype(np.float64), fps=float(data["fps"]))
            song = SongTiming(
                data["beat_times"],
                data["downbeat_times"],
                float(data["tempo_bpm"]),
                float(data["duration_s"]),
            )
            try:
                plan = Plan.from_dict(json.loads(str(data["plan"])))
            except json.JSONDecodeError as exc:
                raise ParameterError(f"GeneratedMotion file holds no valid plan ({exc})") from None
            bits = np.unpackbits(data["contacts"], axis=1, count=len(CONTACT_POINTS)).astype(bool)
            contacts = ContactTrack(motion.fps, bits)
            return cls(motion, Provenance.from_json(str(data["provenance"])), song, plan, contacts)
