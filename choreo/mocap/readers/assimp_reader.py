"""Read the animated skeletons of FBX (binary and ASCII) and glTF/GLB files through Assimp.

Assimp (the Open Asset Import Library, Debian's ``libassimp5``) parses the
file; its Python bindings, ``impasse`` (a cffi fork of Assimp's own
PyAssimp), hand us the scene: a tree of nodes with rest transforms, and per
animation (a take) channels of position, rotation and scaling keys. This
module maps that scene onto :class:`~choreo.mocap.readers.take.SourceTake`
in one place:

- **joints** are the nodes a take animates or a skinned mesh names as bones,
  and the nodes below them (end joints such as ``HeadTop_End``); Assimp's own
  FBX pivot helpers (``<bone>_$AssimpFbx$_PreRotation`` and kin) are not
  joints, but their transforms are composed in, as every other ancestor's;
- **End Sites**: a joint whose one child is an end joint (Blender's ``lFoot_end``)
  gets that child's rest offset as its End Site, as BVH has it (rigs name
  ``lFoot@end``);
- **world transforms** compose every node from the scene's root, so a
  glTF's ``Z_UP`` node or an FBX armature's scale is in them; an FBX whose
  axis settings say Z (or X) is up is turned so that Y is, and the unit the
  file states (``UnitScaleFactor``, centimetres per unit) is kept with the take;
- **frames** lie on a uniform grid: at the keys' own rate when they are
  regular (the rate the file states, or 24, 25, 30, 60 fps..., where that grid
  keeps every key within a tenth of a frame), else (irregular or sparse keys) resampled at the file's
  stated frame rate, or 30 fps; positions and scales are interpolated linearly
  and rotations by slerp, which is how Assimp itself plays keys.

Only the scene fields whose layout Assimp 5.2 (Debian 12) and 5.4 share are
read (nodes, animations and their keys, mesh bone names, scene metadata): the
bindings declare the 5.4 structs.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import numpy as np

from choreo.errors import ParameterError
from choreo.mocap.readers.take import SourceTake
from choreo.motion.rotations import quat_align_hemisphere, quat_slerp, quat_to_mat

__all__ = ["ASSIMP_SUFFIXES", "STANDARD_FPS", "read_assimp_takes"]

ASSIMP_SUFFIXES = (".fbx", ".glb", ".gltf")
"""File suffixes read through Assimp."""

STANDARD_FPS = (24.0, 25.0, 30.0, 48.0, 50.0, 60.0, 100.0, 120.0)
"""Frame rates a regular key spacing is snapped to when it is within 1 % of one."""

_HELPER = "_$AssimpFbx$_"
_IRREGULAR_FPS = 30.0
_MIN_KEY_FPS = 10.0
"""Keys sparser than this (a take keyed once a second) are resampled like irregular ones."""
# FBX GlobalSettings TimeMode -> frames per second (14 is "custom": CustomFrameRate says)
_FBX_TIME_MODES = {1: 120.0, 2: 100.0, 3: 60.0, 4: 50.0, 5: 48.0, 6: 30.0, 7: 30.0, 10: 25.0, 11: 24.0}
_KEY_DTYPE = {
    "vector": np.dtype({"names": ["t", "v"], "formats": ["<f8", ("<f4", 3)], "itemsize": 24}),
    "quat": np.dtype({"names": ["t", "q"], "formats": ["<f8", ("<f4", 4)], "itemsize": 24}),
}


def _load(path: Path) -> Any:
    """The Assimp scene of ``path`` (no post-processing), or a ``ParameterError`` saying why not."""
    try:
        import impasse
        from impasse.errors import AssimpError
    except (ImportError, OSError) as exc:  # the bindings, or libassimp under them, are missing
        raise ParameterError(
            f"{path}: reading FBX and glTF needs Assimp (Debian libassimp5 and PyPI impasse): {exc}"
        ) from None
    if not path.is_file():
        raise ParameterError(f"{path}: no such file")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return impasse.load(str(path), processing=0)
    except AssimpError:
        raise ParameterError(f"{path}: Assimp could not read it as {path.suffix.lstrip('.')}") from None


def _keys(pointer: Any, count: int, kind: str) -> np.ndarray:
    """A channel's keys as a structured array (time, value), straight from Assimp's memory."""
    from impasse.structs import ffi

    if count == 0:
        return np.zeros(0, dtype=_KEY_DTYPE[kind])
    return np.frombuffer(ffi.buffer(pointer, count * 24), dtype=_KEY_DTYPE[kind]).copy()


class _Scene:
    """The node tree of an Assimp scene, flattened: names, parents, rest transforms."""

    def __init__(self, scene: Any) -> None:
        self.names: list[str] = []
        self.parents: list[int] = []
        self.local: list[np.ndarray] = []
        self.has_mesh: list[bool] = []
        stack = [(scene.root_node, -1)]
        while stack:
            node, parent = stack.pop()
            index = len(self.names)
            self.names.append(node.name)
            self.parents.append(parent)
            self.local.append(np.array(node.transformation, dtype=np.float64))
            self.has_mesh.append(len(node.meshes) > 0)
            stack.extend((child, index) for child in reversed(list(node.children)))

    def rest_world(self) -> np.ndarray:
        world = np.zeros((len(self.names), 4, 4))
        for j, p in enumerate(self.parents):
            world[j] = self.local[j] if p < 0 else world[p] @ self.local[j]
        return world


def _base(name: str) -> str:
    return name.split(_HELPER)[0]


def _joints(tree: _Scene, core: set[str]) -> list[int]:
    """Indices of the skeleton's nodes: those named in ``core`` and every node below them (no
    meshes, no pivot helpers), in the largest of the trees they form.

    ``core`` is the skinned meshes' bones where there are any (a rig's animated controls, IK
    targets and the armature object are not the body), else the nodes the take animates."""
    inside = [False] * len(tree.names)
    for j, (name, p) in enumerate(zip(tree.names, tree.parents, strict=True)):
        inside[j] = name in core or (p >= 0 and inside[p])
    joints = [
        j
        for j in range(len(tree.names))
        if inside[j] and not tree.has_mesh[j] and _HELPER not in tree.names[j]
    ]
    root_of: dict[int, int] = {}
    for j in joints:
        p = tree.parents[j]
        while p >= 0 and p not in root_of:
            p = tree.parents[p]
        root_of[j] = root_of.get(p, j) if p >= 0 else j
    if not joints:
        return []
    counts: dict[int, int] = {}
    for r in root_of.values():
        counts[r] = counts.get(r, 0) + 1
    biggest = max(counts, key=lambda r: counts[r])
    return [j for j in joints if root_of[j] == biggest]


def _up_to_y(metadata: dict[str, Any]) -> np.ndarray:
    """The rotation (4x4) that turns the file's up axis (FBX ``UpAxis``/``UpAxisSign``) onto +Y."""
    axis, sign = int(metadata.get("UpAxis", 1)), int(metadata.get("UpAxisSign", 1))
    turn = np.eye(4)
    if axis == 2:  # Z up: (x, y, z) -> (x, z, -y)
        turn[:3, :3] = [[1, 0, 0], [0, 0, 1], [0, -1, 0]]
    elif axis == 0:  # X up: (x, y, z) -> (-y, x, z)
        turn[:3, :3] = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]
    if sign < 0:  # upside down: half a turn about the forward axis
        turn = np.diag([-1.0, -1.0, 1.0, 1.0]) @ turn
    return turn


def _stated_fps(metadata: dict[str, Any]) -> float | None:
    mode = metadata.get("FrameRate")
    if mode == 14:
        custom = float(metadata.get("CustomFrameRate", -1.0))
        return custom if custom > 0 else None
    return _FBX_TIME_MODES.get(int(mode)) if isinstance(mode, int) else None


def _grid_fps(times_s: np.ndarray, stated: float | None) -> float:
    """The frame rate of the take's grid: the keys' own where they are regular, else the resampling rate."""
    steps = np.diff(times_s)
    step = float(np.median(steps))
    if np.all(np.abs(steps / step - 1.0) < 0.05) and 1.0 / step >= _MIN_KEY_FPS:
        span_s = float(times_s[-1] - times_s[0])
        fps = (times_s.size - 1) / span_s  # the keys' own rate, to the precision of the whole span

        def keeps_keys(rate: float) -> bool:  # on this grid, the last key is off by under a tenth of a frame
            return abs(rate - fps) * span_s < 0.1

        near = min(STANDARD_FPS, key=lambda f: abs(f - fps))
        return next((r for r in (stated, near) if r is not None and keeps_keys(r)), fps)
    return stated or _IRREGULAR_FPS


def _sample_vectors(keys: np.ndarray, tick_s: float, times_s: np.ndarray) -> np.ndarray:
    t = keys["t"] * tick_s
    v = keys["v"].astype(np.float64)
    return np.stack([np.interp(times_s, t, v[:, i]) for i in range(3)], axis=-1)


def _sample_rotations(keys: np.ndarray, tick_s: float, times_s: np.ndarray) -> np.ndarray:
    t = keys["t"] * tick_s
    wxyz = keys["q"].astype(np.float64)
    q = quat_align_hemisphere(wxyz[:, [1, 2, 3, 0]], axis=0)
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    if q.shape[0] == 1:
        return quat_to_mat(np.broadcast_to(q[0], (times_s.size, 4)))
    i = np.clip(np.searchsorted(t, times_s, side="right") - 1, 0, t.size - 2)
    span = np.maximum(t[i + 1] - t[i], 1e-12)
    frac = np.clip((times_s - t[i]) / span, 0.0, 1.0)
    return quat_to_mat(quat_slerp(q[i], q[i + 1], frac))


def _channel_matrices(channel: Any, tick_s: float, times_s: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """Local transforms ``[frames, 4, 4]`` a channel gives its node (the rest's part where it has no keys)."""
    raw = channel.struct
    positions = _keys(raw.mPositionKeys, raw.mNumPositionKeys, "vector")
    rotations = _keys(raw.mRotationKeys, raw.mNumRotationKeys, "quat")
    scalings = _keys(raw.mScalingKeys, raw.mNumScalingKeys, "vector")
    n = times_s.size
    rest_scale = np.linalg.norm(rest[:3, :3], axis=0)
    out = np.zeros((n, 4, 4))
    out[:, 3, 3] = 1.0
    out[:, :3, 3] = _sample_vectors(positions, tick_s, times_s) if positions.size else rest[:3, 3]
    rot = (
        _sample_rotations(rotations, tick_s, times_s)
        if rotations.size
        else np.broadcast_to(rest[:3, :3] / rest_scale, (n, 3, 3))
    )
    scale = (
        _sample_vectors(scalings, tick_s, times_s) if scalings.size else np.broadcast_to(rest_scale, (n, 3))
    )
    out[:, :3, :3] = rot * scale[:, None, :]
    return out


def _orthonormal(mats: np.ndarray) -> np.ndarray:
    """The rotation part of transforms ``[..., 3, 3]`` that may carry scale (polar decomposition)."""
    u, _, vt = np.linalg.svd(mats)
    d = np.sign(np.linalg.det(u @ vt))
    u[..., :, 2] *= d[..., None]
    return u @ vt


def _key_times(animation: Any, tick_s: float) -> np.ndarray:
    times = []
    for channel in animation.channels:
        raw = channel.struct
        for pointer, count, kind in (
            (raw.mPositionKeys, raw.mNumPositionKeys, "vector"),
            (raw.mRotationKeys, raw.mNumRotationKeys, "quat"),
        ):
            times.append(_keys(pointer, count, kind)["t"] * tick_s)
    return np.unique(np.round(np.concatenate(times) if times else np.zeros(0), 9))


def _take(
    path: Path,
    tree: _Scene,
    joints: list[int],
    animation: Any,
    metadata: dict[str, Any],
    rest_world: np.ndarray,
) -> SourceTake:
    ticks = float(animation.ticks_per_second) or 25.0  # Assimp's default when a file states none
    tick_s = 1.0 / ticks
    label = f"{path} (take {animation.name!r})" if animation.name else str(path)
    times = _key_times(animation, tick_s)
    if times.size < 2:
        raise ParameterError(f"{label}: one key only: a pose, not a motion")
    fps = _grid_fps(times, _stated_fps(metadata))
    n = int(np.floor((times[-1] - times[0]) * fps + 0.01)) + 1  # key times carry float32 ticks
    grid = times[0] + np.arange(n) / fps
    channels = {c.node_name: c for c in animation.channels}
    needed = sorted({a for j in joints for a in _ancestry(tree, j)})
    world: dict[int, np.ndarray] = {}
    turn = _up_to_y(metadata)
    for j in needed:
        name = tree.names[j]
        local = (
            _channel_matrices(channels[name], tick_s, grid, tree.local[j])
            if name in channels
            else np.broadcast_to(tree.local[j], (n, 4, 4))
        )
        p = tree.parents[j]
        world[j] = turn @ local if p < 0 else world[p] @ local
    stacked = np.stack([world[j] for j in joints], axis=1)
    rest = np.stack([turn @ rest_world[j] for j in joints])
    index = {j: i for i, j in enumerate(joints)}
    parents = []
    for j in joints:
        p = tree.parents[j]
        while p >= 0 and p not in index:
            p = tree.parents[p]
        parents.append(index[p] if p >= 0 else -1)
    rest_rotations = _orthonormal(rest[:, :3, :3])
    unit_cm = metadata.get("UnitScaleFactor")
    return SourceTake(
        source=str(path),
        take=str(animation.name),
        names=tuple(tree.names[j] for j in joints),
        parents=tuple(parents),
        positions=stacked[..., :3, 3].copy(),
        rotations=_orthonormal(stacked[..., :3, :3]),
        end_sites=_end_sites(parents, rest[:, :3, 3], rest_rotations),
        rest_positions=rest[:, :3, 3].copy(),
        fps=fps,
        metres_per_unit=float(unit_cm) / 100.0 if isinstance(unit_cm, float | int) else 1.0,
        rest_rotations=rest_rotations,
    )


def _end_sites(parents: list[int], rest_positions: np.ndarray, rest_rotations: np.ndarray) -> np.ndarray:
    """A BVH End Site's equivalent: for a joint whose one child is an end joint (Blender's ``lFoot_end``,
    Mixamo's ``HeadTop_End``), that child's rest offset in the joint's own frame; zeros elsewhere."""
    children: dict[int, list[int]] = {}
    for j, p in enumerate(parents):
        children.setdefault(p, []).append(j)
    out = np.zeros_like(rest_positions)
    for j in range(len(parents)):
        kids = children.get(j, [])
        if len(kids) == 1 and not children.get(kids[0]):
            out[j] = rest_rotations[j].T @ (rest_positions[kids[0]] - rest_positions[j])
    return out


def _ancestry(tree: _Scene, j: int) -> list[int]:
    out = [j]
    while tree.parents[out[-1]] >= 0:
        out.append(tree.parents[out[-1]])
    return out


def read_assimp_takes(path: str | Path) -> list[SourceTake]:
    """Every animated take of the skeleton in an FBX or glTF file, as :class:`SourceTake`.

    Raises
    ------
    ParameterError
        Naming the file: Assimp cannot read it, it has no animation (a skinned
        mesh alone, or a rig in its rest pose), or no take animates a skeleton.
    """
    path = Path(path)
    scene = _load(path)
    metadata = {k: v for k, v in dict(scene.metadata or {}).items() if isinstance(v, int | float | str)}
    tree = _Scene(scene)
    bones = {b.name for mesh in scene.meshes for b in mesh.bones}
    if not scene.animations:
        what = "a skinned mesh with no animation" if bones else "no animation"
        raise ParameterError(f"{path}: {what}: nothing to dance")
    rest_world = tree.rest_world()
    takes = []
    for animation in scene.animations:
        core = bones or {_base(c.node_name) for c in animation.channels}
        joints = _joints(tree, core)
        if not joints:
            continue
        takes.append(_take(path, tree, joints, animation, metadata, rest_world))
    if not takes:
        raise ParameterError(f"{path}: its animations move no skeleton (no bones, no animated nodes)")
    return takes
