"""Retarget a take of any mapped skeleton (BVH, FBX, glTF) onto the SMPL skeleton.

Why this way: the source skeletons have different rest poses (T-pose, A-pose,
or rest frames whose bones all point along one axis because the FBX
pre-rotations were baked into the channels), so copying local rotations is
meaningless. What all skeletons agree on is where the joints are in the world.
The retargeter therefore

1. takes the source's world positions and orientations from its reader
   (:class:`choreo.mocap.readers.take.SourceTake`: the BVH's own forward
   kinematics, or Assimp's node transforms for FBX and glTF);
2. builds, per SMPL joint and frame, a *target frame* from the source joint
   positions: the bone direction (to the SMPL child) plus a secondary
   direction (the side-to-side axis for the trunk, the hinge axis of knees and
   elbows, the shin for the ankle);
3. fits one constant rotation per joint and clip, ``A``, so that the source
   joint's world orientation times ``A`` matches the target frames best
   (weighted by how well defined the secondary direction is: a straight knee
   says nothing about its hinge). The source orientation then supplies the
   twist where positions cannot (straight limbs, the wrist, the head);
4. swings that orientation minimally so the SMPL bone points exactly where the
   source bone points, and takes SMPL local rotations from the world ones.

Bone lengths are SMPL's by construction (only rotations and the root move).
The root translation is the source pelvis scaled by the ratio of leg lengths
(SMPL over source), put on the floor (low joints near y = 0), centred on the
floor space, and the clip is turned so that it starts facing +Z.
"""

from __future__ import annotations

import numpy as np

from choreo.errors import ParameterError
from choreo.mocap.readers.take import SourceTake, as_take
from choreo.mocap.rigs import SourceRig, detect_rig
from choreo.motion.bvh_reader import BvhData
from choreo.motion.kinematics import facing_angle, joint_positions
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_mat, mat_to_aa
from choreo.motion.skeleton import JOINT_NAMES, SMPL

__all__ = [
    "FLOOR_CLEARANCE_M",
    "face_forward",
    "leg_length",
    "retarget",
    "source_joint_positions",
    "source_rest_orientations",
]

FLOOR_CLEARANCE_M = 0.015
"""Height of the lowest joint centre when a foot is flat on the floor (SMPL toes at rest)."""

_J = {name: i for i, name in enumerate(JOINT_NAMES)}
_REST = SMPL.rest_positions()
_X = np.array([1.0, 0.0, 0.0])
_MAX_SINK_M = 0.03
_FEET = [_J[n] for n in ("left_foot", "right_foot", "left_ankle", "right_ankle")]


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(n < 1e-9, 1.0, n)


def _frame(primary: np.ndarray, secondary: np.ndarray) -> np.ndarray:
    """Orthonormal frame ``[..., 3, 3]`` (columns) from a primary and a secondary direction."""
    a = _unit(primary)
    b = _unit(secondary - np.sum(secondary * a, axis=-1, keepdims=True) * a)
    c = np.cross(a, b)
    return np.stack([a, b, c], axis=-1)


def _swing(frm: np.ndarray, to: np.ndarray) -> np.ndarray:
    """Smallest rotations ``[..., 3, 3]`` turning unit-ish vectors ``frm`` onto ``to``."""
    a = _unit(frm)
    b = _unit(to)
    v = np.cross(a, b)
    c = np.sum(a * b, axis=-1)
    vx = np.zeros(v.shape + (3,))
    vx[..., 0, 1], vx[..., 0, 2] = -v[..., 2], v[..., 1]
    vx[..., 1, 0], vx[..., 1, 2] = v[..., 2], -v[..., 0]
    vx[..., 2, 0], vx[..., 2, 1] = -v[..., 1], v[..., 0]
    k = 1.0 / np.maximum(1.0 + c, 1e-9)
    rot = np.eye(3) + vx + vx @ vx * k[..., None, None]
    # opposite vectors: turn half a turn about any axis perpendicular to a
    flip = c < -1.0 + 1e-9
    if np.any(flip):
        axis = _unit(np.cross(a[flip], np.where(np.abs(a[flip, :1]) < 0.9, _X, [0.0, 1.0, 0.0])))
        rot[flip] = 2.0 * axis[..., :, None] * axis[..., None, :] - np.eye(3)
    return rot


def _project_so3(m: np.ndarray) -> np.ndarray:
    """Nearest rotation to a 3x3 matrix (polar decomposition)."""
    u, _, vt = np.linalg.svd(m)
    d = np.sign(np.linalg.det(u @ vt))
    return u @ np.diag([1.0, 1.0, d]) @ vt


def source_joint_positions(clip: SourceTake | BvhData, rig: SourceRig) -> tuple[np.ndarray, np.ndarray]:
    """Source positions at SMPL joints and source orientations driving them.

    Returns
    -------
    positions : np.ndarray [shape=(frames, 24, 3)], file units, NaN where the rig has no source
    orientations : np.ndarray [shape=(frames, 24, 3, 3)], NaN where the rig has no source
    """
    take = as_take(clip)
    pos, rot = take.positions, take.rotations
    n = take.n_frames
    out_pos = np.full((n, 24, 3), np.nan)
    out_rot = np.full((n, 24, 3, 3), np.nan)
    for smpl_name, names in rig.positions.items():
        pts = []
        for name in names:
            joint, _, end = name.partition("@")
            j = take.index(joint)
            p = pos[:, j]
            if end and not np.any(take.end_sites[j]):
                p = np.full_like(p, np.nan)  # the file keeps no End Site there (a glTF has none)
            elif end:
                p = p + np.einsum("fab,b->fa", rot[:, j], take.end_sites[j])
            pts.append(p)
        out_pos[:, _J[smpl_name]] = np.mean(pts, axis=0)
    for smpl_name, name in rig.orientations.items():
        out_rot[:, _J[smpl_name]] = rot[:, take.index(name)]
    return out_pos, out_rot


def source_rest_orientations(take: SourceTake, rig: SourceRig) -> np.ndarray | None:
    """Rest orientations ``[24, 3, 3]`` of the source joints driving SMPL's (NaN where none), or
    None for a take whose rest frames are the world's (BVH)."""
    if take.rest_rotations is None:
        return None
    out = np.full((24, 3, 3), np.nan)
    for smpl_name, name in rig.orientations.items():
        out[_J[smpl_name]] = take.rest_rotations[take.index(name)]
    return out


def leg_length(positions: np.ndarray) -> float:
    """Median over frames of hip-knee-ankle length, averaged over both legs, in the positions' units."""
    lengths = []
    for hip, knee, ankle in (
        ("left_hip", "left_knee", "left_ankle"),
        ("right_hip", "right_knee", "right_ankle"),
    ):
        thigh = np.linalg.norm(positions[:, _J[knee]] - positions[:, _J[hip]], axis=-1)
        shin = np.linalg.norm(positions[:, _J[ankle]] - positions[:, _J[knee]], axis=-1)
        lengths.append(np.median(thigh + shin))
    return float(np.mean(lengths))


def _targets(
    pos: np.ndarray, j: int, world: np.ndarray
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray]:
    """Target frames, their weights and the primary direction for SMPL joint ``j``.

    Returns ``(frames [F,3,3] or None, primary [F,3] or None, weights [F])``;
    ``None`` frames mean that no source position fixes this joint (``world``
    holds the parents already).
    """
    name = JOINT_NAMES[j]
    n = pos.shape[0]
    ones = np.ones(n)
    lateral_hips = pos[:, _J["left_hip"]] - pos[:, _J["right_hip"]]
    lateral_arms = pos[:, _J["left_shoulder"]] - pos[:, _J["right_shoulder"]]
    rest_lat_arms = _REST[_J["left_shoulder"]] - _REST[_J["right_shoulder"]]

    def bone(a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
        return pos[:, _J[b]] - pos[:, _J[a]], _REST[_J[b]] - _REST[_J[a]]

    if name == "pelvis":
        up, up0 = bone("pelvis", "spine3")
        cur = _frame(lateral_hips, up)
        rest = _frame(_REST[_J["left_hip"]] - _REST[_J["right_hip"]], up0)
        return cur @ rest.T, lateral_hips, ones
    if name in ("spine1", "spine2", "spine3", "neck"):
        # The trunk's bones are short and their rest shapes differ (curved ribcages, forward-set
        # joints), so single segments would copy the source's build, not its motion: the target is
        # the whole trunk's direction, and the source orientations distribute the bending.
        p, p0 = bone("pelvis", "neck") if name != "neck" else bone("neck", "head")
        if name == "spine1":
            lat, lat0 = lateral_hips, _X
        elif name == "spine2":
            lat, lat0 = _unit(lateral_hips) + _unit(lateral_arms), _X
        else:
            lat, lat0 = lateral_arms, rest_lat_arms
        return _frame(p, lat) @ _frame(p0, lat0).T, None, ones
    side, _, part = name.partition("_")
    if part == "collar":
        p, p0 = bone(name, f"{side}_shoulder")
        s, s0 = bone("spine3", "neck")
        return _frame(p, s) @ _frame(p0, s0).T, p, ones
    if part in ("shoulder", "elbow", "hip", "knee"):
        upper, lower = {
            "shoulder": ("shoulder", "elbow"),
            "elbow": ("shoulder", "elbow"),
            "hip": ("hip", "knee"),
            "knee": ("hip", "knee"),
        }[part]
        end = "wrist" if upper == "shoulder" else "ankle"
        a, _ = bone(f"{side}_{upper}", f"{side}_{lower}")
        b, _ = bone(f"{side}_{lower}", f"{side}_{end}")
        hinge = np.cross(a, b)
        weight = np.linalg.norm(hinge, axis=-1) / np.maximum(
            np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1), 1e-9
        )
        if upper == "hip":
            hinge0 = _X
        else:
            hinge0 = np.array([0.0, -1.0, 0.0]) if side == "left" else np.array([0.0, 1.0, 0.0])
        p, p0 = (
            (a, _REST[_J[f"{side}_{lower}"]] - _REST[_J[f"{side}_{upper}"]])
            if part == upper
            else (
                b,
                _REST[_J[f"{side}_{end}"]] - _REST[_J[f"{side}_{lower}"]],
            )
        )
        return _frame(p, hinge) @ _frame(p0, hinge0).T, p, weight**2
    if part == "ankle":
        p, p0 = bone(name, f"{side}_foot")
        s, s0 = bone(name, f"{side}_knee")
        if np.all(np.isnan(p)):
            return None, None, ones
        return _frame(p, s) @ _frame(p0, s0).T, p, ones
    if part == "wrist":
        p, p0 = bone(name, f"{side}_hand")
        parent = world[:, SMPL.parents[j]]
        if np.all(np.isnan(p)):
            return None, None, ones
        return _swing(np.einsum("fab,b->fa", parent, p0), p) @ parent, p, ones
    # leaves (head, toes, hands): no SMPL child to aim at
    return None, None, ones


def retarget(clip: SourceTake | BvhData, rig: SourceRig | None = None, source: str = "BVH") -> Motion:
    """The take ``clip`` as an SMPL :class:`Motion` at the take's own frame rate.

    Parameters
    ----------
    clip : a take of one of the mapped skeletons (Y up), or a parsed BVH file
    rig : the correspondence; detected from the joint names or the skeleton's shape when left out
    source : name of the file, for error messages (a take names its own)

    Returns
    -------
    Motion on :data:`choreo.motion.skeleton.SMPL`, facing +Z at its first
    frame, centred on the origin over the clip, lowest joints on the floor.
    """
    take = as_take(clip, source)
    source = take.label
    rig = rig or detect_rig(take)
    if take.n_frames < 2:
        raise ParameterError(f"{source}: needs at least 2 frames, has {take.n_frames}")
    pos, src_rot = source_joint_positions(take, rig)
    rest_rot = source_rest_orientations(take, rig)
    trunk = pos[:, _J["head"]] - pos[:, _J["pelvis"]]
    if np.median(trunk[:, 1]) <= 0.5 * np.median(np.linalg.norm(trunk, axis=-1)):
        raise ParameterError(
            f"{source}: the head is not above the pelvis along +Y; the retargeter expects Y up"
        )
    scale = float(
        np.linalg.norm(SMPL.offsets[_J["left_knee"]]) + np.linalg.norm(SMPL.offsets[_J["left_ankle"]])
    )
    scale /= leg_length(pos)
    n = take.n_frames
    world = np.zeros((n, 24, 3, 3))
    fitted: dict[int, np.ndarray] = {}  # joint -> constant A with SMPL world = source world @ A
    for j in range(24):
        target, primary, weight = _targets(pos, j, world)
        r_src = src_rot[:, j]
        has_src = not np.isnan(r_src).any()
        if target is None:
            parent = SMPL.parents[j]
            if has_src and parent in fitted:
                # no position says where this bone points: keep the source's own local rotation,
                # expressed in the parent's SMPL frame (BVH rest frames of parent and child coincide;
                # a take with rest orientations, FBX or glTF, counts its rotation from its rest)
                a = fitted[parent]
                source_local = np.swapaxes(src_rot[:, parent], 1, 2) @ r_src
                if rest_rot is not None:
                    rest_local = rest_rot[parent].T @ rest_rot[j]
                    source_local = source_local @ rest_local.T
                    fitted[j] = rest_local.T @ a
                else:
                    fitted[j] = a
                world[:, j] = world[:, parent] @ a.T @ source_local @ a
            else:
                world[:, j] = world[:, parent]
            continue
        if not has_src:
            g = target
        else:
            ok = np.isfinite(target).all(axis=(1, 2)) & np.isfinite(weight)
            m = np.einsum("f,fba,fbc->ac", weight[ok], r_src[ok], target[ok])
            fitted[j] = _project_so3(m)
            g = r_src @ fitted[j]
        if primary is not None:
            children = SMPL.children(j)
            child = children[0] if j != 0 else _J["left_hip"]
            rest_dir = SMPL.offsets[child] if j != 0 else _REST[_J["left_hip"]] - _REST[_J["right_hip"]]
            g = _swing(np.einsum("fab,b->fa", g, rest_dir), primary) @ g
        world[:, j] = g
    local = np.empty_like(world)
    local[:, 0] = world[:, 0]
    for j in range(1, 24):
        local[:, j] = np.swapaxes(world[:, SMPL.parents[j]], 1, 2) @ world[:, j]
    root = pos[:, 0] * scale
    motion = Motion(fps=take.fps, root_translation=root, rotations=mat_to_aa(local))
    return _place_on_floor(face_forward(motion))


def _rot_y(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def face_forward(motion: Motion) -> Motion:
    """``motion`` turned about the vertical axis through the origin so that its first frame faces +Z."""
    turn = _rot_y(-float(facing_angle(motion)[0]))
    root_rot = mat_to_aa(turn @ aa_to_mat(motion.rotations[:, 0]))
    rotations = motion.rotations.copy()
    rotations[:, 0] = root_rot
    return motion.replace(rotations=rotations, root_translation=motion.root_translation @ turn.T)


def _place_on_floor(motion: Motion) -> Motion:
    """Shift the clip up or down so the feet stand on y = 0, and centre it on the floor space.

    The floor is where the feet are in their lowest few per cent of frames (a
    foot joint centre then sits :data:`FLOOR_CLEARANCE_M` up). SMPL's arms are
    longer for its legs than some sources' (the breakdancer's), so hands that
    carry the body in floor work can reach below the floor: the clip is raised
    until, in 99 per cent of frames, no joint is more than ``_MAX_SINK_M`` under it.
    """
    pos = joint_positions(motion)
    feet = pos[:, _FEET, 1].min(axis=1)
    lowest = pos[..., 1].min(axis=1)
    shift = min(np.percentile(feet, 5) - FLOOR_CLEARANCE_M, np.percentile(lowest, 1) + _MAX_SINK_M)
    root = motion.root_translation.copy()
    root[:, 1] -= shift
    root[:, [0, 2]] -= root[:, [0, 2]].mean(axis=0)
    return motion.replace(root_translation=root)
