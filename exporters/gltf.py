"""Binary glTF 2.0 (``.glb``) writer: a skinned mannequin dancing one animation.

The file holds:

* a node per joint, named by the rig, with its rest translation (and the rig's rest
  rotation, where it has one) under its parent;
* the mannequin of :mod:`exporters.mannequin` as a mesh with ``JOINTS_0``/``WEIGHTS_0``,
  bound by a skin whose ``inverseBindMatrices`` are the rest pose's;
* one animation with a rotation sampler (unit quaternions) for every joint and a
  translation sampler for the root, all LINEAR, keyed at ``k / fps`` seconds;
* the dance's provenance (model version, seed, style, song SHA-256, data credits) in
  ``asset.extras``.

glTF is Y up, metres, figures facing +Z: the SMPL skeleton's own frame, so nothing is
converted. Every array is built for all frames at once, so a ten-minute dance at 60 fps
is written in well under a second.
"""

from __future__ import annotations

import dataclasses
import json
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from choreo import __version__
from choreo.errors import ExportError, ParameterError
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_mat, mat_to_quat
from choreo.motion.skeleton import REST_PELVIS_HEIGHT_M
from exporters.mannequin import Mannequin, build_mannequin

__all__ = ["GLB_RIGS", "write_glb"]

GLB_RIGS = ("smpl", "mixamo")
"""Rig names :func:`write_glb` accepts."""

_GLB_MAGIC = 0x46546C67  # "glTF"
_CHUNK_JSON = 0x4E4F534A  # "JSON"
_CHUNK_BIN = 0x004E4942  # "BIN\0"

_FLOAT = 5126
_UNSIGNED_BYTE = 5121
_UNSIGNED_SHORT = 5123
_UNSIGNED_INT = 5125
_ARRAY_BUFFER = 34962
_ELEMENT_ARRAY_BUFFER = 34963
_TRIANGLES = 4

_MANNEQUIN_COLOUR = [0.72, 0.6, 0.48, 1.0]  # linear RGBA, a light wood
_REST_ROOT_M = (0.0, REST_PELVIS_HEIGHT_M, 0.0)  # the root in the rest (bind) pose: feet on the floor


@dataclasses.dataclass(frozen=True)
class _RigLayout:
    """How the SMPL joints appear in the file: names and rest frame orientations.

    ``orientations[j]`` is joint j's world frame in the rest pose (identity for SMPL).
    """

    names: tuple[str, ...]
    orientations: np.ndarray


def write_glb(
    motion: Motion,
    path: str | Path,
    *,
    rig: str = "smpl",
    provenance: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``motion`` as a binary glTF 2.0 file with a skinned, animated mannequin.

    Parameters
    ----------
    motion : the dance, on the SMPL skeleton, at least one frame
    path : where to write the ``.glb``; its folder must exist
    rig : ``"smpl"`` (SMPL joint names, frames aligned with the world) or
        ``"mixamo"`` (Mixamo bone names and rest orientations, for retargeting)
    provenance : JSON-serialisable facts about the dance, stored in ``asset.extras``

    Returns
    -------
    Path
        ``path``, written.

    Raises
    ------
    ParameterError
        Unknown rig, a motion that is empty, not on the SMPL skeleton or not
        finite, or provenance that JSON cannot hold.
    ExportError
        The file cannot be written.
    """
    path = Path(path)
    layout = _rig_layout(rig, motion)
    _check_motion(motion)
    extras = _provenance_extras(provenance)

    mannequin = build_mannequin(
        motion.skeleton, root_position_m=_REST_ROOT_M, joint_orientations=layout.orientations
    )
    builder = _GlbBuilder()
    document = _document(motion, layout, mannequin, builder, extras)
    data = builder.glb(document)
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise ExportError(f"cannot write glTF file {path}: {exc.strerror or exc}") from exc
    return path


def _rig_layout(rig: str, motion: Motion) -> _RigLayout:
    if rig not in GLB_RIGS:
        raise ParameterError(f"unknown rig {rig!r} for glTF; choose one of {', '.join(GLB_RIGS)}")
    n = motion.skeleton.n_joints
    return _RigLayout(names=tuple(motion.skeleton.names), orientations=np.tile(np.eye(3), (n, 1, 1)))


def _check_motion(motion: Motion) -> None:
    if motion.n_frames < 1:
        raise ParameterError("cannot write a glTF animation of a motion with no frames")
    if not (np.all(np.isfinite(motion.rotations)) and np.all(np.isfinite(motion.root_translation))):
        raise ParameterError("motion has non-finite rotations or root translations; cannot write glTF")


def _provenance_extras(provenance: Mapping[str, Any] | None) -> dict[str, Any]:
    if provenance is None:
        return {}
    if not isinstance(provenance, Mapping):
        raise ParameterError(f"provenance must be a mapping, got {type(provenance).__name__}")
    try:
        return json.loads(json.dumps(dict(provenance), allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"provenance cannot be stored as glTF extras (JSON): {exc}") from exc


def _local_quaternions(motion: Motion, orientations: np.ndarray) -> np.ndarray:
    """Local rotations of the rig's nodes, ``[frames, joints, 4]`` (x, y, z, w), float64.

    A rig joint's world frame is the SMPL world rotation applied to its rest frame
    ``O_j``, so its rotation relative to its parent node is ``O_p^T R_j O_j`` (the root:
    ``R_0 O_0``). Signs are chosen so that neighbouring frames have a positive dot
    product: LINEAR interpolation then follows the short arc in every reader.
    """
    local = aa_to_mat(motion.rotations)
    parent_frames = np.stack([np.eye(3) if p < 0 else orientations[p] for p in motion.skeleton.parents])
    rig_local = np.swapaxes(parent_frames, -1, -2)[None] @ local @ orientations[None]
    quat = mat_to_quat(rig_local)
    if quat.shape[0] > 1:
        flips = np.cumprod(np.where(np.sum(quat[1:] * quat[:-1], axis=-1) < 0.0, -1.0, 1.0), axis=0)
        quat[1:] *= flips[..., None]
    return quat


def _document(
    motion: Motion,
    layout: _RigLayout,
    mannequin: Mannequin,
    builder: _GlbBuilder,
    extras: dict[str, Any],
) -> dict[str, Any]:
    skeleton = motion.skeleton
    n_joints = skeleton.n_joints
    parents = skeleton.parents
    orientations = layout.orientations

    # Nodes: the joints (index = joint index), then the mesh node.
    nodes: list[dict[str, Any]] = []
    rest_root = np.asarray(_REST_ROOT_M)
    for j in range(n_joints):
        p = parents[j]
        parent_frame = np.eye(3) if p < 0 else orientations[p]
        offset = rest_root if p < 0 else skeleton.offsets[j]
        rest_rotation = parent_frame.T @ orientations[j]
        node: dict[str, Any] = {"name": layout.names[j], "translation": _floats(parent_frame.T @ offset)}
        if not np.allclose(rest_rotation, np.eye(3), atol=1e-12):
            node["rotation"] = _floats(mat_to_quat(rest_rotation))
        children = skeleton.children(j)
        if children:
            node["children"] = children
        nodes.append(node)
    mesh_node = n_joints
    nodes.append({"name": "mannequin", "mesh": 0, "skin": 0})

    # Mesh.
    attributes = {
        "POSITION": builder.accessor(mannequin.positions, "VEC3", target=_ARRAY_BUFFER, bounds=True),
        "NORMAL": builder.accessor(mannequin.normals, "VEC3", target=_ARRAY_BUFFER),
        "JOINTS_0": builder.accessor(
            mannequin.joints.astype(np.uint8 if n_joints <= 256 else np.uint16), "VEC4", target=_ARRAY_BUFFER
        ),
        "WEIGHTS_0": builder.accessor(mannequin.weights, "VEC4", target=_ARRAY_BUFFER),
    }
    index_type = np.uint16 if mannequin.n_vertices < 65535 else np.uint32
    indices = builder.accessor(
        mannequin.indices.reshape(-1).astype(index_type), "SCALAR", target=_ELEMENT_ARRAY_BUFFER
    )
    mesh = {
        "name": "mannequin",
        "primitives": [{"attributes": attributes, "indices": indices, "material": 0, "mode": _TRIANGLES}],
    }
    inverse_bind = np.swapaxes(mannequin.inverse_bind_matrices, -1, -2)  # glTF stores column-major
    skin = {
        "name": "dancer",
        "inverseBindMatrices": builder.accessor(
            inverse_bind.reshape(n_joints, 16).astype(np.float32), "MAT4"
        ),
        "joints": list(range(n_joints)),
        "skeleton": 0,
    }

    # Animation: one shared time input; a rotation sampler per joint, a translation for the root.
    times = (np.arange(motion.n_frames, dtype=np.float64) / motion.fps).astype(np.float32)
    time_accessor = builder.accessor(times, "SCALAR", bounds=True)
    quats = _local_quaternions(motion, orientations).astype(np.float32)
    rotation_accessors = builder.accessor_series(np.ascontiguousarray(np.swapaxes(quats, 0, 1)), "VEC4")
    root_parent = np.eye(3)  # the root node sits in the scene, whose frame is the world
    translation = (motion.root_translation @ root_parent).astype(np.float32)
    translation_accessor = builder.accessor(translation, "VEC3")
    samplers = [
        {"input": time_accessor, "output": acc, "interpolation": "LINEAR"} for acc in rotation_accessors
    ]
    samplers.append({"input": time_accessor, "output": translation_accessor, "interpolation": "LINEAR"})
    channels = [{"sampler": j, "target": {"node": j, "path": "rotation"}} for j in range(n_joints)]
    channels.append({"sampler": n_joints, "target": {"node": 0, "path": "translation"}})

    asset: dict[str, Any] = {"version": "2.0", "generator": f"choreo {__version__}"}
    if extras:
        asset["extras"] = extras
    return {
        "asset": asset,
        "scene": 0,
        "scenes": [{"name": "dance", "nodes": [0, mesh_node]}],
        "nodes": nodes,
        "meshes": [mesh],
        "materials": [
            {
                "name": "mannequin",
                "pbrMetallicRoughness": {
                    "baseColorFactor": _MANNEQUIN_COLOUR,
                    "metallicFactor": 0.0,
                    "roughnessFactor": 0.8,
                },
            }
        ],
        "skins": [skin],
        "animations": [{"name": "dance", "samplers": samplers, "channels": channels}],
        **builder.tables(),
    }


def _floats(values: np.ndarray) -> list[float]:
    return [float(v) for v in np.asarray(values, dtype=np.float64).reshape(-1)]


_COMPONENT_TYPES = {
    np.dtype(np.float32): _FLOAT,
    np.dtype(np.uint8): _UNSIGNED_BYTE,
    np.dtype(np.uint16): _UNSIGNED_SHORT,
    np.dtype(np.uint32): _UNSIGNED_INT,
}
_TYPE_WIDTH = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}


class _GlbBuilder:
    """Collects binary arrays into one buffer and describes them as views and accessors."""

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._length = 0
        self.buffer_views: list[dict[str, Any]] = []
        self.accessors: list[dict[str, Any]] = []

    def _view(self, data: bytes, target: int | None) -> int:
        view: dict[str, Any] = {"buffer": 0, "byteOffset": self._length, "byteLength": len(data)}
        if target is not None:
            view["target"] = target
        padding = (-len(data)) % 4  # every view starts 4-byte aligned
        self._chunks.append(data + b"\0" * padding)
        self._length += len(data) + padding
        self.buffer_views.append(view)
        return len(self.buffer_views) - 1

    def _describe(self, view: int, offset: int, array: np.ndarray, kind: str, bounds: bool) -> int:
        width = _TYPE_WIDTH[kind]
        rows = array.reshape(-1, width)
        accessor: dict[str, Any] = {
            "bufferView": view,
            "componentType": _COMPONENT_TYPES[array.dtype],
            "count": int(rows.shape[0]),
            "type": kind,
        }
        if offset:
            accessor["byteOffset"] = offset
        if bounds:
            accessor["min"] = [float(v) for v in rows.min(axis=0)]
            accessor["max"] = [float(v) for v in rows.max(axis=0)]
        self.accessors.append(accessor)
        return len(self.accessors) - 1

    def accessor(
        self, array: np.ndarray, kind: str, *, target: int | None = None, bounds: bool = False
    ) -> int:
        """Store ``array`` in its own buffer view; returns the new accessor's index."""
        array = np.ascontiguousarray(array)
        view = self._view(array.tobytes(), target)
        return self._describe(view, 0, array, kind, bounds)

    def accessor_series(self, arrays: np.ndarray, kind: str) -> list[int]:
        """Store ``arrays[i]`` for every i in one buffer view, one accessor each."""
        arrays = np.ascontiguousarray(arrays)
        view = self._view(arrays.tobytes(), None)
        step = arrays[0].nbytes
        return [self._describe(view, i * step, arrays[i], kind, False) for i in range(arrays.shape[0])]

    def tables(self) -> dict[str, Any]:
        """The ``buffers``, ``bufferViews`` and ``accessors`` entries of the document."""
        return {
            "buffers": [{"byteLength": self._length}],
            "bufferViews": self.buffer_views,
            "accessors": self.accessors,
        }

    def glb(self, document: dict[str, Any]) -> bytes:
        """The whole file: 12-byte header, JSON chunk (space-padded), BIN chunk (zero-padded)."""
        text = json.dumps(document, separators=(",", ":"), allow_nan=False).encode("utf-8")
        text += b" " * ((-len(text)) % 4)
        binary = b"".join(self._chunks)
        total = 12 + 8 + len(text) + 8 + len(binary)
        header = struct.pack("<III", _GLB_MAGIC, 2, total)
        return b"".join(
            [
                header,
                struct.pack("<II", len(text), _CHUNK_JSON),
                text,
                struct.pack("<II", len(binary), _CHUNK_BIN),
                binary,
            ]
        )
