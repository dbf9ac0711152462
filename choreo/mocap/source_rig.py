"""``SourceRig``: how one source skeleton's joints give SMPL's 24, found by name (:mod:`.rigs`) or by
shape (:mod:`.shape_rig`)."""

from __future__ import annotations

from dataclasses import dataclass

from choreo.errors import ParameterError
from choreo.motion.skeleton import JOINT_NAMES

__all__ = ["SourceRig"]


@dataclass(frozen=True)
class SourceRig:
    """The correspondence between one source skeleton and SMPL.

    Parameters
    ----------
    name : str, short name of the skeleton
    marker : str, a joint name only this skeleton has, used to recognise it
    positions : dict, SMPL joint name -> tuple of source joint names whose mean
        position is the SMPL joint's position (``"joint@end"`` for an End Site);
        SMPL joints left out have no source position
    orientations : dict, SMPL joint name -> source joint whose world orientation
        drives the SMPL joint (up to a constant offset fitted per clip); left
        out for SMPL leaf joints that follow their parent
    """

    name: str
    marker: str
    positions: dict[str, tuple[str, ...]]
    orientations: dict[str, str]

    def __post_init__(self) -> None:
        for key in list(self.positions) + list(self.orientations):
            if key not in JOINT_NAMES:
                raise ParameterError(f"rig {self.name}: {key!r} is not an SMPL joint")
