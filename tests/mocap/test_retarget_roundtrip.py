"""Round trip: an SMPL dance written as a BVH of the SMPL skeleton must retarget onto itself.

This checks the retargeting algorithm end to end with a known answer: the
source skeleton is SMPL itself (joint names mapped one to one), so every joint
position the retargeter produces can be compared with the original's.
"""

from __future__ import annotations

import numpy as np

from choreo.mocap.retarget import retarget
from choreo.mocap.rigs import SourceRig
from choreo.motion.bvh_reader import BvhData
from choreo.motion.kinematics import facing_angle, joint_positions
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_euler
from choreo.motion.skeleton import JOINT_NAMES, SMPL

_SMPL_RIG = SourceRig(
    name="smpl",
    marker="pelvis",
    positions={n: (n,) for n in JOINT_NAMES},
    orientations={n: n for n in JOINT_NAMES},
)
_LIMB_JOINTS = [
    JOINT_NAMES.index(f"{s}_{p}")
    for s in ("left", "right")
    for p in ("hip", "knee", "ankle", "foot", "shoulder", "elbow", "wrist", "hand")
]


def _as_bvh(motion: Motion, scale: float) -> BvhData:
    """The motion as BVH data of the SMPL skeleton in other units (ZXY Euler channels, degrees)."""
    euler = np.degrees(aa_to_euler(motion.rotations, "ZXY")).reshape(motion.n_frames, -1)
    frames = np.concatenate([motion.root_translation * scale, euler[:, :3], euler[:, 3:]], axis=1)
    root = ("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")
    channels = (root,) + (("Zrotation", "Xrotation", "Yrotation"),) * 23
    return BvhData(
        names=JOINT_NAMES,
        parents=SMPL.parents,
        offsets=SMPL.offsets * scale,
        channels=channels,
        frames=frames,
        frame_time_s=1.0 / motion.fps,
        end_sites=np.zeros((24, 3)),
        declared_frames=motion.n_frames,
    )


def _body_frame(motion: Motion) -> np.ndarray:
    """Joint positions relative to the pelvis, turned so that each frame faces +Z."""
    pos = joint_positions(motion)
    rel = pos - pos[:, :1]
    angle = facing_angle(motion)
    c, s = np.cos(-angle), np.sin(-angle)
    x = c[:, None] * rel[..., 0] + s[:, None] * rel[..., 2]
    z = -s[:, None] * rel[..., 0] + c[:, None] * rel[..., 2]
    return np.stack([x, rel[..., 1], z], axis=-1)


def test_smpl_dance_retargets_onto_itself(retargeted: dict[str, Motion]) -> None:
    original = retargeted["whirl"]  # a real dance, already on SMPL
    back = retarget(_as_bvh(original, scale=100.0), _SMPL_RIG)  # centimetres, like most sources
    ours, theirs = _body_frame(back), _body_frame(original)
    err = np.linalg.norm(ours - theirs, axis=-1)
    assert np.percentile(err[:, _LIMB_JOINTS], 99) < 0.01  # limbs within a centimetre
    assert np.percentile(err, 99) < 0.03  # trunk and head within a few centimetres
    # the root path, scaled back from centimetres, is the original one up to the floor and centring
    path = back.root_translation - back.root_translation.mean(axis=0)
    path_0 = original.root_translation - original.root_translation.mean(axis=0)
    np.testing.assert_allclose(path, path_0, atol=0.02)
