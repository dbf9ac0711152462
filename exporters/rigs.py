"""Target rigs: how a Choreo motion is laid onto the skeleton a file describes.

Every exporter (BVH, FBX, glTF) writes the motion through one :class:`Rig`, so
joint names, units and bone axes are decided in one place.

``smpl``
    Choreo's own joint names (``pelvis``, ``left_hip``, ...), metres, and every
    joint's axes parallel to the world axes in the rest pose (Y up, the figure
    facing +Z, its left side +X): a joint's local rotation is exactly the
    motion's axis-angle rotation.

``mixamo``
    The conventions of characters rigged by Adobe Mixamo, so that retargeting
    tools (Unity Humanoid, Unreal IK Retargeter, Blender add-ons) map the bones
    without manual work. Relative to ``smpl`` it changes:

    * names: ``mixamorig:Hips``, ``mixamorig:Spine``, ``mixamorig:LeftUpLeg``, ...
      (table :data:`MIXAMO_NAMES`);
    * units: centimetres by default;
    * bone axes: each joint's local +Y axis points along its bone towards its
      main child (the spine chain, the neck, the arm and leg chains), as in
      Mixamo characters; local +Z is the direction nearest to the figure's
      forward (+Z) that is perpendicular to the bone, or, for bones that point
      forward (the feet), the direction nearest to up. The hips keep the world
      axes; end joints (head, hands, toes) keep their parent's axes. The rest
      pose is still the T-pose, so the rest *shape* is unchanged: only the
      frame each rotation is expressed in differs, and rest rotations
      (``Lcl Rotation`` in FBX, node rotations in glTF) carry the bone axes.

    BVH has no rest rotations (a BVH's all-zero pose *is* its rest pose), so a
    BVH written with the mixamo rig gets its names and units but world-aligned
    joint axes, as every BVH importer expects.

The figure's 24 joints are the same in both rigs; SMPL's ``left_hand`` and
``right_hand`` (the end of the palm) become Mixamo's ``LeftHandMiddle1`` and
``RightHandMiddle1``, the base of the middle finger.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.contracts.choices import RIGS
from choreo.errors import ParameterError
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_quat, mat_to_quat, quat_multiply, quat_to_aa, quat_to_euler
from choreo.motion.skeleton import JOINT_NAMES, REST_PELVIS_HEIGHT_M, SMPL, Skeleton

__all__ = [
    "MIXAMO_NAMES",
    "UNITS",
    "Rig",
    "continuous_euler",
    "get_rig",
    "units_scale",
]

UNITS = ("m", "cm")

MIXAMO_NAMES: dict[str, str] = {
    "pelvis": "mixamorig:Hips",
    "left_hip": "mixamorig:LeftUpLeg",
    "right_hip": "mixamorig:RightUpLeg",
    "spine1": "mixamorig:Spine",
    "left_knee": "mixamorig:LeftLeg",
    "right_knee": "mixamorig:RightLeg",
    "spine2": "mixamorig:Spine1",
    "left_ankle": "mixamorig:LeftFoot",
    "right_ankle": "mixamorig:RightFoot",
    "spine3": "mixamorig:Spine2",
    "left_foot": "mixamorig:LeftToeBase",
    "right_foot": "mixamorig:RightToeBase",
    "neck": "mixamorig:Neck",
    "left_collar": "mixamorig:LeftShoulder",
    "right_collar": "mixamorig:RightShoulder",
    "head": "mixamorig:Head",
    "left_shoulder": "mixamorig:LeftArm",
    "right_shoulder": "mixamorig:RightArm",
    "left_elbow": "mixamorig:LeftForeArm",
    "right_elbow": "mixamorig:RightForeArm",
    "left_wrist": "mixamorig:LeftHand",
    "right_wrist": "mixamorig:RightHand",
    "left_hand": "mixamorig:LeftHandMiddle1",
    "right_hand": "mixamorig:RightHandMiddle1",
}
"""SMPL joint name -> Mixamo bone name."""

# The child a joint's bone points to when it has several (SMPL names).
_MAIN_CHILD = {"pelvis": "spine1", "spine3": "neck"}

# Length of the bone beyond each end joint (a BVH End Site, an FBX end bone), metres,
# along the end joint's own offset direction; the head's points straight up.
_TIP_LENGTH_M = {"head": 0.12, "left_hand": 0.08, "right_hand": 0.08, "left_foot": 0.05, "right_foot": 0.05}
_DEFAULT_TIP_LENGTH_M = 0.05


def units_scale(units: str) -> float:
    """File units per metre: 1 for ``"m"``, 100 for ``"cm"``.

    Raises
    ------
    ParameterError
        For any other unit name.
    """
    if units == "m":
        return 1.0
    if units == "cm":
        return 100.0
    raise ParameterError(f"units must be one of {UNITS}, got {units!r}")


@dataclass(frozen=True)
class Rig:
    """A target skeleton for export: names, units and bone axes.

    Parameters
    ----------
    name : ``"smpl"`` or ``"mixamo"``
    skeleton : the motion skeleton the rig is laid onto (joint order is kept)
    joint_names : tuple of str, the name written for each skeleton joint
    default_units : ``"m"`` or ``"cm"``, used when an exporter is given no units
    bone_frames : np.ndarray [shape=(joints, 3, 3)], world orientation of each
        joint's axes in the rest pose (columns are the local X, Y, Z axes);
        identity everywhere for world-aligned rigs
    """

    name: str
    skeleton: Skeleton
    joint_names: tuple[str, ...]
    default_units: str
    bone_frames: np.ndarray

    @property
    def n_joints(self) -> int:
        return self.skeleton.n_joints

    @property
    def parents(self) -> tuple[int, ...]:
        return self.skeleton.parents

    @property
    def world_aligned(self) -> bool:
        """True when every joint's rest axes are the world axes."""
        return bool(np.allclose(self.bone_frames, np.eye(3), atol=1e-12))

    def resolve_units(self, units: str | None) -> str:
        """``units`` checked, or the rig's default when ``None``."""
        chosen = self.default_units if units is None else units
        units_scale(chosen)
        return chosen

    def rest_root_position_m(self) -> np.ndarray:
        """Rest position of the root, metres: the pelvis height above the origin."""
        return np.array([0.0, REST_PELVIS_HEIGHT_M, 0.0])

    def rest_local_rotations(self, *, world_aligned: bool = False) -> np.ndarray:
        """Each joint's rest rotation relative to its parent's axes, ``[joints, 3, 3]``.

        With ``world_aligned`` (BVH) every rest rotation is the identity.
        """
        if world_aligned:
            return np.broadcast_to(np.eye(3), (self.n_joints, 3, 3)).copy()
        frames = self.bone_frames
        out = np.empty_like(frames)
        for j, p in enumerate(self.parents):
            out[j] = frames[j] if p < 0 else frames[p].T @ frames[j]
        return out

    def rest_offsets_m(self, *, world_aligned: bool = False) -> np.ndarray:
        """Each joint's rest offset in its parent's axes, metres, ``[joints, 3]`` (root: zero)."""
        offsets = np.array(self.skeleton.offsets, dtype=np.float64)
        if world_aligned:
            return offsets
        parent_frames = np.stack([self.bone_frames[max(p, 0)] for p in self.parents])
        return np.einsum("jba,jb->ja", parent_frames, offsets)

    def tip_offsets_m(self, *, world_aligned: bool = False) -> np.ndarray:
        """Offset of the bone tip beyond each end joint in that joint's axes, metres.

        Rows of joints that have children are zero. The tip continues the end
        joint's own bone (the head's points up) so that viewers draw a bone there.
        """
        tips = np.zeros((self.n_joints, 3))
        smpl_names = self.skeleton.names
        for j in range(self.n_joints):
            if self.skeleton.children(j):
                continue
            name = smpl_names[j]
            length = _TIP_LENGTH_M.get(name, _DEFAULT_TIP_LENGTH_M)
            if name == "head":
                direction = np.array([0.0, 1.0, 0.0])
            else:
                offset = self.skeleton.offsets[j]
                direction = offset / max(float(np.linalg.norm(offset)), 1e-9)
            world = direction * length
            tips[j] = world if world_aligned else self.bone_frames[j].T @ world
        return tips

    def local_quaternions(self, motion: Motion, *, world_aligned: bool = False) -> np.ndarray:
        """The motion's joint rotations in the rig's local axes, quaternions ``[frames, joints, 4]`` (xyzw).

        For a joint ``j`` with parent ``p`` and rest axes ``B``, the rig rotation
        is ``B[p]^T @ L[j] @ B[j]`` where ``L`` is the motion's local rotation
        (the root: ``L[0] @ B[0]``); this keeps every joint's world position.
        With ``world_aligned`` (BVH), or for a world-aligned rig, it is ``L``.
        """
        self._check_motion(motion)
        local = aa_to_quat(motion.rotations)
        if world_aligned or self.world_aligned:
            return local
        frames = mat_to_quat(self.bone_frames)
        parents = np.stack([np.array([0.0, 0.0, 0.0, 1.0]) if p < 0 else frames[p] for p in self.parents])
        parents_inv = parents * np.array([-1.0, -1.0, -1.0, 1.0])
        return quat_multiply(quat_multiply(parents_inv, local), frames)

    def motion_rotations(self, rig_local: np.ndarray, *, world_aligned: bool = False) -> np.ndarray:
        """Inverse of :meth:`local_quaternions`: rig quaternions back to the motion's axis-angle."""
        q = np.asarray(rig_local, dtype=np.float64)
        if not (world_aligned or self.world_aligned):
            frames = mat_to_quat(self.bone_frames)
            parents = np.stack([np.array([0.0, 0.0, 0.0, 1.0]) if p < 0 else frames[p] for p in self.parents])
            frames_inv = frames * np.array([-1.0, -1.0, -1.0, 1.0])
            q = quat_multiply(quat_multiply(parents, q), frames_inv)
        return quat_to_aa(q)

    def root_positions_m(self, motion: Motion) -> np.ndarray:
        """World position of the root in every frame, metres, ``[frames, 3]``."""
        self._check_motion(motion)
        return np.asarray(motion.root_translation, dtype=np.float64)

    def _check_motion(self, motion: Motion) -> None:
        if motion.skeleton.names != self.skeleton.names or motion.skeleton.parents != self.skeleton.parents:
            raise ParameterError(f"rig {self.name!r} was built for another skeleton than the motion's")


def _mixamo_bone_frames(skeleton: Skeleton) -> np.ndarray:
    """Rest axes with +Y along each bone, as Mixamo characters have them."""
    names = skeleton.names
    frames = np.broadcast_to(np.eye(3), (skeleton.n_joints, 3, 3)).copy()
    forward = np.array([0.0, 0.0, 1.0])
    up = np.array([0.0, 1.0, 0.0])
    for j, name in enumerate(names):
        children = skeleton.children(j)
        if skeleton.parents[j] < 0:
            continue  # the hips keep the world axes
        if not children:
            frames[j] = frames[skeleton.parents[j]]
            continue
        main = names.index(_MAIN_CHILD[name]) if name in _MAIN_CHILD else children[0]
        y_axis = skeleton.offsets[main] / np.linalg.norm(skeleton.offsets[main])
        reference = forward if abs(float(y_axis @ forward)) < 0.7 else up
        z_axis = reference - (reference @ y_axis) * y_axis
        z_axis /= np.linalg.norm(z_axis)
        x_axis = np.cross(y_axis, z_axis)
        frames[j] = np.stack([x_axis, y_axis, z_axis], axis=1)
    return frames


def get_rig(name: str, skeleton: Skeleton = SMPL) -> Rig:
    """The rig called ``name`` (``"smpl"`` or ``"mixamo"``) laid onto ``skeleton``.

    Raises
    ------
    ParameterError
        For an unknown rig name, or ``mixamo`` on a skeleton that is not SMPL's.
    """
    if name == "smpl":
        frames = np.broadcast_to(np.eye(3), (skeleton.n_joints, 3, 3)).copy()
        return Rig("smpl", skeleton, tuple(skeleton.names), "m", frames)
    if name == "mixamo":
        if tuple(skeleton.names) != JOINT_NAMES:
            raise ParameterError("rig 'mixamo' needs the SMPL 24-joint skeleton")
        names = tuple(MIXAMO_NAMES[n] for n in skeleton.names)
        return Rig("mixamo", skeleton, names, "cm", _mixamo_bone_frames(skeleton))
    raise ParameterError(f"unknown rig {name!r}; choose one of {RIGS}")


def continuous_euler(quats: np.ndarray, order: str) -> np.ndarray:
    """Intrinsic Euler angles (radians) of quaternions ``[frames, ..., 4]`` (xyzw), continuous in time.

    Each rotation has two Euler solutions, ``(a, b, c)`` and
    ``(a + pi, pi - b, c + pi)``, and each angle is defined modulo 2 pi. The
    plain conversion keeps the middle angle within +-90 degrees, so a joint
    that turns past it jumps by 180 degrees in two channels at once, which
    interpolating importers turn into a spin. This picks, frame by frame, the
    solution that continues the previous one (a jump of both outer angles by
    more than 90 degrees switches branch), then unwraps every channel. Both
    steps are vectorised over frames; every output is an exact Euler
    representation of its rotation whatever branch is chosen.
    """
    angles = quat_to_euler(quats, order)
    if angles.shape[0] < 2:
        return angles
    step = np.diff(angles, axis=0)
    wrapped = (step + np.pi) % (2 * np.pi) - np.pi
    flips = (np.abs(wrapped[..., 0]) > np.pi / 2) & (np.abs(wrapped[..., 2]) > np.pi / 2)
    branch = np.concatenate([np.zeros_like(flips[:1]), np.cumsum(flips, axis=0) % 2 == 1], axis=0)
    alternate = np.stack([angles[..., 0] + np.pi, np.pi - angles[..., 1], angles[..., 2] + np.pi], axis=-1)
    chosen = np.where(branch[..., None], alternate, angles)
    return np.unwrap(chosen, axis=0)
