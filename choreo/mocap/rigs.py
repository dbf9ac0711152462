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

from choreo.errors import ParameterError
from choreo.mocap.readers.take import SourceTake, as_take
from choreo.mocap.shape_rig import rig_by_shape
from choreo.mocap.source_rig import SourceRig
from choreo.motion.bvh_reader import BvhData
from choreo.motion.skeleton import JOINT_NAMES
from exporters.rigs import MIXAMO_NAMES

__all__ = ["RIGS", "SourceRig", "detect_rig"]


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


def _named_rig(take: SourceTake) -> SourceRig | None:
    """The rig whose marker joint ``take`` has, or None; raises when it lacks the rig's other joints."""
    names = set(take.names)
    for rig in RIGS:
        if rig.marker in names:
            missing = [n.split("@")[0] for names_ in rig.positions.values() for n in names_]
            missing = [n for n in missing + list(rig.orientations.values()) if n not in names]
            if missing:
                raise ParameterError(
                    f"{take.label}: looks like rig {rig.name} but lacks joints {sorted(set(missing))}"
                )
            return rig
    return None


def detect_rig(clip: SourceTake | BvhData, source: str = "BVH") -> SourceRig:
    """The rig of ``clip``: the known rig whose marker joint it has, else the one its shape gives
    (:func:`choreo.mocap.shape_rig.rig_by_shape`); ``source`` names a parsed BVH file in errors.

    Raises
    ------
    ParameterError
        Naming the file, the joints it has and the rigs known, when neither names nor shape map it.
    """
    take = as_take(clip, source)
    rig = _named_rig(take)
    if rig is not None:
        return rig
    try:
        return rig_by_shape(take)
    except ParameterError as why:
        known = ", ".join(f"{rig.name} (joint {rig.marker!r})" for rig in RIGS)
        shown = ", ".join(take.names[:40]) + (
            f", ... ({len(take.names)} in all)" if len(take.names) > 40 else ""
        )
        raise ParameterError(
            f"{take.label}: unknown skeleton: its joints ({shown}) name none of the known rigs, {known}; "
            f"and its shape is not a body's ({why})"
        ) from None
