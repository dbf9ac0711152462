"""Binary glTF 2.0 (``.glb``) writer: a skinned mannequin dancing one animation.

The file holds:

* a node per joint, named by the rig, with its rest translation (and the rig's rest
  rotation, where it has one) under its parent;
* the mannequin of :mod:`exporters.mannequin` as a mesh with ``JOINTS_0``/``WEIGHTS_0``,
  bound by a skin whose ``inverseBindMatrices`` are the rest pose's;
* one animation with a rotation sampler (unit quaternions) for every joint and a
  translation sampler for the root, all LINEAR, keyed at ``k / fps`` seconds;
* the dance's provenance (model version, seed, style, song SHA-256, data credits) in
  ``asset.extras``, and a copy in the scene's ``extras``, which Blender and three.js show.

glTF is Y up, metres, figures facing +Z: the SMPL skeleton's own frame, so nothing is
converted. Every array is built for all frames at once, so a ten-minute dance at 60 fps
is written in well under a second.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from choreo.contracts.choices import RIGS
from choreo.contracts.provenance import Provenance, generator_name
from choreo.errors import ExportError, ParameterError
from choreo.files import write_atomically
from choreo.motion.motion import Motion
from choreo.motion.rotations import mat_to_quat
from exporters.mannequin import Mannequin, build_mannequin
from exporters.rigs import Rig, get_rig

__all__ = ["GLB_RIGS", "write_glb"]

GLB_RIGS = RIGS
"""Rig names :func:`write_glb` accepts (those of :mod:`exporters.rigs`)."""

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


def write_glb(
    motion: Motion,
    path: str | Path,
    *,
    rig: str | Rig = "smpl",
    provenance: Provenance | Mapping[str, Any] | None = None,
) -> Path:
    """Write ``motion`` as a binary glTF 2.0 file with a skinned, animated mannequin.

    Parameters
    ----------
    motion : the dance, on the SMPL skeleton, at least one frame
    path : where to write the ``.glb`` (replaced atomically); its folder must exist
    rig : ``"smpl"`` (SMPL joint names, joint axes aligned with the world),
        ``"mixamo"`` (Mixamo bone names and bone axes, for retargeting) or a
        :class:`~exporters.rigs.Rig`. glTF is always in metres, whatever the
        rig's default units.
    provenance : a :class:`~choreo.contracts.provenance.Provenance` or a mapping of
        JSON-serialisable facts about the dance, stored in ``asset.extras``

    Returns
    -------
    Path
        ``path``, written.

    Raises
    ------
    ParameterError
        Unknown rig, a rig built for another skeleton, or provenance that JSON
        cannot hold.
    ExportError
        A motion with no frames or with NaN/infinite values (as the BVH and FBX
        writers), or a file that cannot be written.
    """
    path = Path(path)
    rig = rig if isinstance(rig, Rig) else get_rig(rig, motion.skeleton)
    _check_motion(motion)
    extras = _provenance_extras(provenance)

    mannequin = build_mannequin(
        rig.skeleton,
        root_position_m=tuple(rig.rest_root_position_m()),
        joint_orientations=rig.bone_frames,
    )
    builder = _GlbBuilder()
    document = _document(motion, rig, mannequin, builder, extras)
    data = builder.glb(document)
    write_atomically(path, data, what="glTF file", error=ExportError)
    return path


def _check_motion(motion: Motion) -> None:
    if motion.n_frames < 1:
        raise ExportError("cannot write a glTF animation of a motion with no frames")
    if not (np.all(np.isfinite(motion.rotations)) and np.all(np.isfinite(motion.root_translation))):
        raise ExportError("motion has non-finite rotations or root translations; cannot write glTF")


def _provenance_extras(provenance: Provenance | Mapping[str, Any] | None) -> dict[str, Any]:
    if provenance is None:
        return {}
    if isinstance(provenance, Provenance):
        return provenance.to_dict()
    if not isinstance(provenance, Mapping):
        raise ParameterError(f"provenance must be a mapping, got {type(provenance).__name__}")
    try:
        return json.loads(json.dumps(dict(provenance), allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"provenance cannot be stored as glTF extras (JSON): {exc}") from exc


def _local_quaternions(motion: Motion, rig: Rig) -> np.ndarray:
    """Local rotations of the rig's nodes, ``[frames, joints, 4]`` (x, y, z, w), float64.

    Signs are chosen so that neighbouring frames have a positive dot product:
    LINEAR interpolation (slerp) then follows the short arc in every reader.
    """
    quat = rig.local_quaternions(motion)
    if quat.shape[0] > 1:
        flips = np.cumprod(np.where(np.sum(quat[1:] * quat[:-1], axis=-1) < 0.0, -1.0, 1.0), axis=0)
        quat[1:] *= flips[..., None]
    return quat


def _document(
    motion: Motion,
    rig: Rig,
    mannequin: Mannequin,
    builder: _GlbBuilder,
    extras: dict[str, Any],
) -> dict[str, Any]:
    skeleton = rig.skeleton
    n_joints = skeleton.n_joints

    # Nodes: the joints (index = joint index), then the mesh node. The root hangs in
    # the scene, whose axes are the world's, so its rest translation is in world axes.
    nodes: list[dict[str, Any]] = []
    offsets = rig.rest_offsets_m()
    offsets[0] = rig.rest_root_position_m()
    rest_rotations = rig.rest_local_rotations()
    for j in range(n_joints):
        node: dict[str, Any] = {"name": rig.joint_names[j], "translation": _floats(offsets[j])}
        rest_rotation = rest_rotations[j]
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
    quats = _local_quaternions(motion, rig).astype(np.float32)
    rotation_accessors = builder.accessor_series(np.ascontiguousarray(np.swapaxes(quats, 0, 1)), "VEC4")
    translation = rig.root_positions_m(motion).astype(np.float32)
    translation_accessor = builder.accessor(translation, "VEC3")
    samplers = [
        {"input": time_accessor, "output": acc, "interpolation": "LINEAR"} for acc in rotation_accessors
    ]
    samplers.append({"input": time_accessor, "output": translation_accessor, "interpolation": "LINEAR"})
    channels = [{"sampler": j, "target": {"node": j, "path": "rotation"}} for j in range(n_joints)]
    channels.append({"sampler": n_joints, "target": {"node": 0, "path": "translation"}})

    asset: dict[str, Any] = {"version": "2.0", "generator": generator_name()}
    scene: dict[str, Any] = {"name": "dance", "nodes": [0, mesh_node]}
    if extras:
        # asset.extras is the file's own record; a copy on the scene is what Blender (scene
        # custom properties) and three.js (``scene.userData``) show to a user.
        asset["extras"] = extras
        scene["extras"] = extras
    return {
        "asset": asset,
        "scene": 0,
        "scenes": [scene],
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
