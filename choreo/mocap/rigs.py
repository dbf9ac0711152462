"""How each source skeleton of the mocap folders maps onto SMPL's 24 joints.

A :class:`SourceRig` says, for every SMPL joint, which source joints give its
world position (one joint, the mean of several, or a joint's End Site written
``"name@end"``) and which source joint's world orientation carries its twist.
The correspondences follow ``mocap/JOINT_MAP.md``, adjusted where the source has
zero-length bones (the CMU skeleton's ``LowerBack`` and ``Neck`` sit on their
parents, its ``*FingerBase`` on the hand) so that every SMPL bone gets a
direction with a length. Skeletons named after SMPL's joints or Mixamo's bones
(what ``choreo render --rig smpl|mixamo`` writes, and Mixamo characters' BVH)
map one joint to one joint, by the exporters' name table.
"""

from __future__ import annotations

from dataclasses import dataclass

from choreo.errors import ParameterError
from choreo.motion.bvh_reader import BvhData
from choreo.motion.skeleton import JOINT_NAMES
from exporters.rigs import MIXAMO_NAMES

__all__ = ["RIGS", "SourceRig", "detect_rig"]


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


def _sided(template: dict[str, str | tuple[str, ...]], left: str, right: str) -> dict[str, tuple[str, ...]]:
    """Expand ``{side}`` in names: SMPL ``left_``/``right_`` with source ``left``/``right`` tokens."""
    out: dict[str, tuple[str, ...]] = {}
    for smpl, src in template.items():
        names = (src,) if isinstance(src, str) else src
        if "{side}" in smpl:
            out[smpl.format(side="left")] = tuple(n.format(s=left) for n in names)
            out[smpl.format(side="right")] = tuple(n.format(s=right) for n in names)
        else:
            out[smpl] = tuple(names)
    return out


def _rig(name: str, marker: str, left: str, right: str, pos: dict, rot: dict | None = None) -> SourceRig:
    """A rig from ``{side}`` templates; ``rot`` left out means each positioning joint also orients."""
    orient = {k: v[0] for k, v in _sided(pos if rot is None else rot, left, right).items()}
    return SourceRig(name, marker, _sided(pos, left, right), orient)


_SALSA = _rig(
    "cmu_salsa",
    "abdomen",
    "l",
    "r",
    {
        "pelvis": "hip",
        "{side}_hip": "{s}Thigh",
        "{side}_knee": "{s}Shin",
        "{side}_ankle": "{s}Foot",
        "{side}_foot": "{s}Foot@end",
        "spine1": "abdomen",
        "spine2": ("abdomen", "chest"),
        "spine3": "chest",
        "neck": "neck",
        "head": "head",
        "{side}_collar": "{s}Collar",
        "{side}_shoulder": "{s}Shldr",
        "{side}_elbow": "{s}ForeArm",
        "{side}_wrist": "{s}Hand",
        "{side}_hand": "{s}Mid1",
    },
    {
        "pelvis": "hip",
        "{side}_hip": "{s}Thigh",
        "{side}_knee": "{s}Shin",
        "{side}_ankle": "{s}Foot",
        "spine1": "abdomen",
        "spine2": "abdomen",
        "spine3": "chest",
        "neck": "neck",
        "head": "head",
        "{side}_collar": "{s}Collar",
        "{side}_shoulder": "{s}Shldr",
        "{side}_elbow": "{s}ForeArm",
        "{side}_wrist": "{s}Hand",
        "{side}_hand": "{s}Mid1",
    },
)

_NEO = _rig(
    "neo",
    "Neo_Hips",
    "Left",
    "Right",
    {
        "pelvis": "Neo_Hips",
        "{side}_hip": "Neo_{s}UpLeg",
        "{side}_knee": "Neo_{s}Leg",
        "{side}_ankle": "Neo_{s}Foot",
        "{side}_foot": "Neo_{s}ToeBase",
        "spine1": "Neo_Spine",
        "spine2": "Neo_Spine1",
        "spine3": "Neo_Spine2",
        "neck": "Neo_Neck",
        "head": "Neo_Head",
        "{side}_collar": "Neo_{s}Shoulder",
        "{side}_shoulder": "Neo_{s}Arm",
        "{side}_elbow": "Neo_{s}ForeArm",
        "{side}_wrist": "Neo_{s}Hand",
    },
)

_CMU = _rig(
    "cmu",
    "LHipJoint",
    "Left",
    "Right",
    {
        "pelvis": "Hips",
        "{side}_hip": "{s}UpLeg",
        "{side}_knee": "{s}Leg",
        "{side}_ankle": "{s}Foot",
        "{side}_foot": "{s}ToeBase",
        "spine1": "Spine",
        "spine2": ("Spine", "Spine1"),
        "spine3": "Spine1",
        "neck": "Neck1",
        "head": "Head",
        "{side}_collar": "{s}Shoulder",
        "{side}_shoulder": "{s}Arm",
        "{side}_elbow": "{s}ForeArm",
        "{side}_wrist": "{s}Hand",
        "{side}_hand": "{s}HandIndex1",
    },
    {
        "pelvis": "Hips",
        "{side}_hip": "{s}UpLeg",
        "{side}_knee": "{s}Leg",
        "{side}_ankle": "{s}Foot",
        "{side}_foot": "{s}ToeBase",
        "spine1": "Spine",
        "spine2": "Spine",
        "spine3": "Spine1",
        "neck": "Neck1",
        "head": "Head",
        "{side}_collar": "{s}Shoulder",
        "{side}_shoulder": "{s}Arm",
        "{side}_elbow": "{s}ForeArm",
        "{side}_wrist": "{s}Hand",
        "{side}_hand": "{s}FingerBase",
    },
)

_CC = _rig(
    "iclone_cc",
    "CC_Base_Hip",
    "L",
    "R",
    {
        "pelvis": "CC_Base_Pelvis",
        "{side}_hip": "CC_Base_{s}_Thigh",
        "{side}_knee": "CC_Base_{s}_Calf",
        "{side}_ankle": "CC_Base_{s}_Foot",
        "{side}_foot": "CC_Base_{s}_ToeBase",
        "spine1": "CC_Base_Waist",
        "spine2": "CC_Base_Spine01",
        "spine3": "CC_Base_Spine02",
        "neck": "CC_Base_NeckTwist01",
        "head": "CC_Base_Head",
        "{side}_collar": "CC_Base_{s}_Clavicle",
        "{side}_shoulder": "CC_Base_{s}_Upperarm",
        "{side}_elbow": "CC_Base_{s}_Forearm",
        "{side}_wrist": "CC_Base_{s}_Hand",
        "{side}_hand": "CC_Base_{s}_Mid1",
    },
)


def _one_to_one(name: str, names: dict[str, str], marker: str) -> SourceRig:
    """A skeleton with a joint for every SMPL joint (``names``: SMPL name -> its name), each joint
    giving its SMPL joint's position and orientation."""
    return SourceRig(name, marker, {s: (n,) for s, n in names.items()}, dict(names))


_MIXAMO_PREFIX = "mixamorig:"

_SMPL_NAMED = _one_to_one("smpl", {n: n for n in JOINT_NAMES}, "left_hip")
_MIXAMO = _one_to_one("mixamo", MIXAMO_NAMES, MIXAMO_NAMES["left_hip"])
_MIXAMO_PLAIN = _one_to_one(
    "mixamo_unprefixed",
    {s: n.removeprefix(_MIXAMO_PREFIX) for s, n in MIXAMO_NAMES.items()},
    MIXAMO_NAMES["spine3"].removeprefix(_MIXAMO_PREFIX),  # Spine2: CMU's skeleton has Spine and Spine1 only
)

RIGS: tuple[SourceRig, ...] = (_SALSA, _NEO, _CMU, _CC, _SMPL_NAMED, _MIXAMO, _MIXAMO_PLAIN)
"""Every source skeleton of ``shared/data/mocap``, and BVH named as our exporter names it
(:mod:`exporters.rigs`: SMPL's joint names, Mixamo's with or without the ``mixamorig:`` prefix)."""


def detect_rig(bvh: BvhData, source: str = "BVH") -> SourceRig:
    """The rig whose marker joint ``bvh`` has; ``source`` names the file in errors."""
    for rig in RIGS:
        if rig.marker in bvh.names:
            missing = [
                n.split("@")[0]
                for names in rig.positions.values()
                for n in names
                if n.split("@")[0] not in bvh.names
            ]
            missing += [n for n in rig.orientations.values() if n not in bvh.names]
            if missing:
                raise ParameterError(
                    f"{source}: looks like rig {rig.name} but lacks joints {sorted(set(missing))}"
                )
            return rig
    known = ", ".join(f"{rig.name} (joint {rig.marker!r})" for rig in RIGS)
    raise ParameterError(f"{source}: unknown skeleton: its joints name none of the known rigs, {known}")
