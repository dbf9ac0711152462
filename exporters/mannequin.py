"""A low-poly skinned mannequin built from a skeleton, for files that should show a figure.

A dance file with bones only opens as a cloud of sticks in most viewers. This module
builds a simple figure in the skeleton's bind pose, in the manner of an artist's
wooden mannequin: one capsule per bone (from a joint to each child), a small piece
beyond each end joint (head, hands, toes), and skin weights that bind each capsule to
the joint that turns it, blended with the neighbouring joint near each end so that
bends stay closed.

Everything is plain arrays, so that every writer (glTF, FBX) uses the same figure:
vertex positions and normals, triangle indices, up to four joint influences per
vertex, the joints' bind matrices and their inverses. Units and axes are the
skeleton's (metres, Y up, facing +Z for SMPL). The triangles wind counter-clockwise
seen from outside, as glTF and FBX both expect.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.errors import ParameterError
from choreo.motion.skeleton import REST_PELVIS_HEIGHT_M, SMPL, Skeleton

__all__ = ["INFLUENCES", "Capsule", "Mannequin", "build_mannequin", "mannequin_capsules"]

INFLUENCES = 4
"""Joint influences stored per vertex (glTF's JOINTS_0/WEIGHTS_0 hold four)."""

_LONGITUDES = 8  # vertices around each ring
_CAP_RINGS = 3  # rings per hemispherical cap, pole excluded
_BLEND_FRACTION = 0.2  # part of a bone's length, at each end, blended with the neighbour joint

# Capsule radius of the bone that ends at each SMPL joint, metres. Bones of other
# skeletons get _DEFAULT_RADIUS_FRACTION of their length.
_BONE_RADIUS_M = {
    "left_hip": 0.085,
    "right_hip": 0.085,
    "spine1": 0.11,
    "left_knee": 0.075,
    "right_knee": 0.075,
    "spine2": 0.115,
    "left_ankle": 0.055,
    "right_ankle": 0.055,
    "spine3": 0.125,
    "left_foot": 0.032,
    "right_foot": 0.032,
    "neck": 0.11,
    "left_collar": 0.06,
    "right_collar": 0.06,
    "head": 0.05,
    "left_shoulder": 0.055,
    "right_shoulder": 0.055,
    "left_elbow": 0.047,
    "right_elbow": 0.047,
    "left_wrist": 0.04,
    "right_wrist": 0.04,
    "left_hand": 0.035,
    "right_hand": 0.035,
}
_DEFAULT_RADIUS_FRACTION = 0.25

# The piece beyond each end joint: (length along the incoming bone, radius), metres.
# The head is a near-sphere; hands and toes are short capsules.
_TIP_SIZE_M = {
    "head": (0.08, 0.09),
    "left_hand": (0.08, 0.03),
    "right_hand": (0.08, 0.03),
    "left_foot": (0.05, 0.02),
    "right_foot": (0.05, 0.02),
}
_DEFAULT_TIP = (0.05, 0.03)


@dataclass(frozen=True)
class Mannequin:
    """A skinned triangle mesh in its bind pose.

    Parameters
    ----------
    positions : np.ndarray [shape=(vertices, 3)], float32, metres, bind pose
    normals : np.ndarray [shape=(vertices, 3)], float32, unit length, pointing out
    indices : np.ndarray [shape=(triangles, 3)], uint32, counter-clockwise from outside
    joints : np.ndarray [shape=(vertices, 4)], uint16, skeleton joint indices; unused
        slots hold joint 0 with weight 0
    weights : np.ndarray [shape=(vertices, 4)], float32, each row sums to 1, largest first
    bind_matrices : np.ndarray [shape=(joints, 4, 4)], float64, world transform of every
        joint in the bind pose (column vectors: ``world = M @ local``)
    """

    positions: np.ndarray
    normals: np.ndarray
    indices: np.ndarray
    joints: np.ndarray
    weights: np.ndarray
    bind_matrices: np.ndarray

    @property
    def n_vertices(self) -> int:
        return int(self.positions.shape[0])

    @property
    def n_triangles(self) -> int:
        return int(self.indices.shape[0])

    @property
    def inverse_bind_matrices(self) -> np.ndarray:
        """``[joints, 4, 4]``: maps bind-pose world space into each joint's local space."""
        return np.linalg.inv(self.bind_matrices)

    def cluster(self, joint: int) -> tuple[np.ndarray, np.ndarray]:
        """Vertices that ``joint`` moves and their weights (an FBX skin cluster).

        Returns
        -------
        vertex_indices : np.ndarray [shape=(n,)], int64, ascending
        weights : np.ndarray [shape=(n,)], float64, in (0, 1]
        """
        rows, slots = np.nonzero((self.joints == joint) & (self.weights > 0.0))
        order = np.argsort(rows, kind="stable")
        return rows[order].astype(np.int64), self.weights[rows[order], slots[order]].astype(np.float64)


def build_mannequin(
    skeleton: Skeleton = SMPL,
    *,
    root_position_m: tuple[float, float, float] = (0.0, REST_PELVIS_HEIGHT_M, 0.0),
    joint_orientations: np.ndarray | None = None,
) -> Mannequin:
    """Build the mannequin of ``skeleton`` in its rest pose.

    Parameters
    ----------
    skeleton : the joint tree; the figure follows its rest offsets
    root_position_m : where the root joint stands in the bind pose, metres; the
        default puts an SMPL figure's feet on the floor
    joint_orientations : np.ndarray [shape=(joints, 3, 3)], optional
        World orientation of each joint's frame in the bind pose, for rigs whose
        bones carry a rest rotation (a Mixamo-style rig). The default, identity,
        is SMPL's: every joint frame aligned with the world.

    Returns
    -------
    Mannequin
    """
    n_joints = skeleton.n_joints
    if joint_orientations is None:
        orientations = np.broadcast_to(np.eye(3), (n_joints, 3, 3))
    else:
        orientations = np.asarray(joint_orientations, dtype=np.float64)
        if orientations.shape != (n_joints, 3, 3):
            raise ParameterError(
                f"joint_orientations must be [{n_joints}, 3, 3] for this skeleton, got {orientations.shape}"
            )
    root = np.asarray(root_position_m, dtype=np.float64)
    if root.shape != (3,) or not np.all(np.isfinite(root)):
        raise ParameterError(f"root_position_m must be three finite numbers, got {root_position_m!r}")
    joint_world = skeleton.rest_positions() + root

    pieces = [_bone_piece(skeleton, joint_world, j) for j in range(1, n_joints)]
    pieces += [_tip_piece(skeleton, joint_world, j) for j in range(n_joints) if not skeleton.children(j)]

    positions, normals, indices, joints, weights = [], [], [], [], []
    offset = 0
    for pos, nrm, tri, jnt, wgt in pieces:
        positions.append(pos)
        normals.append(nrm)
        indices.append(tri + offset)
        joints.append(jnt)
        weights.append(wgt)
        offset += pos.shape[0]

    bind = np.tile(np.eye(4), (n_joints, 1, 1))
    bind[:, :3, :3] = orientations
    bind[:, :3, 3] = joint_world
    return Mannequin(
        positions=np.concatenate(positions).astype(np.float32),
        normals=np.concatenate(normals).astype(np.float32),
        indices=np.concatenate(indices).astype(np.uint32),
        joints=np.concatenate(joints).astype(np.uint16),
        weights=np.concatenate(weights).astype(np.float32),
        bind_matrices=bind,
    )


@dataclass(frozen=True)
class Capsule:
    """One piece of the figure: the bone from joint ``start`` to joint ``end``, or, with ``end`` of -1,
    the tip beyond end joint ``start`` (``tip_length_m`` along the incoming bone)."""

    start: int
    end: int
    radius_m: float
    tip_length_m: float = 0.0


def mannequin_capsules(skeleton: Skeleton = SMPL) -> list[Capsule]:
    """The mannequin as capsules between joints, for a renderer that draws it without its mesh."""
    rest = skeleton.rest_positions()
    pieces = []
    for joint in range(1, skeleton.n_joints):
        parent = skeleton.parents[joint]
        length = float(np.linalg.norm(rest[joint] - rest[parent]))
        radius = _BONE_RADIUS_M.get(skeleton.names[joint], _DEFAULT_RADIUS_FRACTION * length)
        pieces.append(Capsule(parent, joint, radius))
    for joint in range(skeleton.n_joints):
        if not skeleton.children(joint):
            length, radius = _TIP_SIZE_M.get(skeleton.names[joint], _DEFAULT_TIP)
            pieces.append(Capsule(joint, -1, radius, length))
    return pieces


def _bone_piece(skeleton: Skeleton, joint_world: np.ndarray, joint: int) -> tuple[np.ndarray, ...]:
    """Capsule of the bone from ``joint``'s parent to ``joint``, turned by the parent.

    Near the parent end it blends with the grandparent (when there is one), near
    the child end with the child joint, so that a bend at either joint deforms
    the capsule's end instead of tearing it off its neighbour.
    """
    parent = skeleton.parents[joint]
    start, end = joint_world[parent], joint_world[joint]
    length = float(np.linalg.norm(end - start))
    name = skeleton.names[joint]
    radius = _BONE_RADIUS_M.get(name, _DEFAULT_RADIUS_FRACTION * length)
    pos, nrm, tri, along = _capsule(start, end, radius)

    grandparent = skeleton.parents[parent]
    near_start = _smoothstep((_BLEND_FRACTION - along) / _BLEND_FRACTION) * 0.5
    near_end = _smoothstep((along - (1.0 - _BLEND_FRACTION)) / _BLEND_FRACTION) * 0.5
    if grandparent < 0:
        near_start = np.zeros_like(near_start)
    influences = [
        (np.full(along.shape, parent), 1.0 - near_start - near_end),
        (np.full(along.shape, joint), near_end),
        (np.full(along.shape, max(grandparent, 0)), near_start),
    ]
    jnt, wgt = _pack_influences(influences)
    return pos, nrm, tri, jnt, wgt


def _tip_piece(skeleton: Skeleton, joint_world: np.ndarray, joint: int) -> tuple[np.ndarray, ...]:
    """The piece beyond an end joint (head, hand, toes), turned by that joint alone."""
    parent = skeleton.parents[joint]
    start = joint_world[joint]
    direction = start - joint_world[parent] if parent >= 0 else np.array([0.0, 1.0, 0.0])
    direction = direction / np.linalg.norm(direction)
    length, radius = _TIP_SIZE_M.get(skeleton.names[joint], _DEFAULT_TIP)
    pos, nrm, tri, along = _capsule(start, start + direction * length, radius)
    jnt, wgt = _pack_influences([(np.full(along.shape, joint), np.ones(along.shape))])
    return pos, nrm, tri, jnt, wgt


def _capsule(start: np.ndarray, end: np.ndarray, radius: float) -> tuple[np.ndarray, ...]:
    """A closed low-poly capsule around the segment ``start``-``end``.

    Returns positions ``[V, 3]``, outward unit normals ``[V, 3]``, triangles
    ``[T, 3]`` and each vertex's position along the segment, ``[V]`` in [0, 1].
    """
    axis = end - start
    length = float(np.linalg.norm(axis))
    u = axis / length
    # Any unit vector not parallel to u gives the ring plane's basis.
    helper = np.array([1.0, 0.0, 0.0]) if abs(u[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    v = np.cross(u, helper)
    v /= np.linalg.norm(v)
    w = np.cross(u, v)

    # Polar angle from the start pole (0) to the end pole (pi); rings of the start cap
    # sit around ``start``, rings of the end cap around ``end``.
    cap = np.arange(1, _CAP_RINGS + 1) * (0.5 * np.pi / _CAP_RINGS)
    polar = np.concatenate([cap, np.pi - cap[::-1]])
    centre_is_end = np.arange(polar.size) >= _CAP_RINGS
    azimuth = np.arange(_LONGITUDES) * (2.0 * np.pi / _LONGITUDES)

    sin_p, cos_p = np.sin(polar)[:, None, None], np.cos(polar)[:, None, None]
    ring_dir = np.cos(azimuth)[None, :, None] * v + np.sin(azimuth)[None, :, None] * w
    normals = -cos_p * u + sin_p * ring_dir  # [rings, lon, 3]
    centres = np.where(centre_is_end[:, None, None], end, start)
    ring_pos = centres + radius * normals

    positions = np.concatenate([[start - radius * u], ring_pos.reshape(-1, 3), [end + radius * u]])
    normals_all = np.concatenate([[-u], normals.reshape(-1, 3), [u]])

    n_rings = polar.size
    last = 1 + n_rings * _LONGITUDES  # index of the end pole
    lon = np.arange(_LONGITUDES)
    nxt = (lon + 1) % _LONGITUDES
    # Winding: with v, w, u right-handed, increasing azimuth turns counter-clockwise
    # seen from the end pole's side.
    start_fan = np.stack([np.zeros_like(lon), 1 + nxt, 1 + lon], axis=1)
    ring0 = 1 + np.arange(n_rings - 1)[:, None] * _LONGITUDES
    a, b = ring0 + lon, ring0 + nxt  # this ring
    c, d = a + _LONGITUDES, b + _LONGITUDES  # next ring, towards the end pole
    quads = np.concatenate([np.stack([a, b, d], -1), np.stack([a, d, c], -1)], axis=1).reshape(-1, 3)
    top = 1 + (n_rings - 1) * _LONGITUDES
    end_fan = np.stack([np.full_like(lon, last), top + lon, top + nxt], axis=1)
    triangles = np.concatenate([start_fan, quads, end_fan])

    along = np.clip((positions - start) @ u / length, 0.0, 1.0)
    return positions, normals_all, triangles, along


def _smoothstep(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def _pack_influences(influences: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Up to four (joint, weight) influences per vertex, largest first, summing to one.

    Unused slots and zero weights get joint 0 and weight 0, as glTF requires.
    """
    n = influences[0][0].shape[0]
    joints = np.zeros((n, INFLUENCES), dtype=np.int64)
    weights = np.zeros((n, INFLUENCES))
    for slot, (jnt, wgt) in enumerate(influences):
        joints[:, slot] = jnt
        weights[:, slot] = wgt
    # The same joint may appear twice (an influence of weight zero); merge before sorting.
    for slot in range(1, INFLUENCES):
        for earlier in range(slot):
            same = (joints[:, slot] == joints[:, earlier]) & (weights[:, slot] > 0)
            weights[same, earlier] += weights[same, slot]
            weights[same, slot] = 0.0
    order = np.argsort(-weights, axis=1, kind="stable")
    joints = np.take_along_axis(joints, order, axis=1)
    weights = np.take_along_axis(weights, order, axis=1)
    weights /= weights.sum(axis=1, keepdims=True)
    joints[weights <= 0.0] = 0
    weights[weights <= 0.0] = 0.0
    return joints, weights
