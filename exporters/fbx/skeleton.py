"""The skeleton as FBX objects: one ``LimbNode`` Model with its NodeAttribute per joint.

Each Model carries the joint's rest transform relative to its parent
(``Lcl Translation`` in file units, ``Lcl Rotation`` in degrees, Euler order
XYZ: ``R = Rz @ Ry @ Rx``); the hierarchy is made by Model-to-Model
connections, the root hanging from the scene root (id 0).
"""

from __future__ import annotations

import numpy as np

from choreo.motion.rotations import mat_to_quat
from exporters.fbx.nodes import FbxNode, i32, i64
from exporters.fbx.properties import p_bool, p_double, p_enum, p_int, p_lcl, properties70
from exporters.fbx.scene import FbxScene, object_name
from exporters.rigs import Rig, continuous_euler

__all__ = ["FBX_EULER_ORDER", "add_skeleton", "fbx_euler_degrees"]

FBX_EULER_ORDER = "ZYX"
"""Intrinsic order whose angles, reversed, are FBX's default ``eEulerXYZ`` (X applied first)."""


def fbx_euler_degrees(quats: np.ndarray) -> np.ndarray:
    """FBX ``Lcl Rotation`` values (X, Y, Z degrees, order XYZ) of quaternions ``[frames, ..., 4]``.

    Continuous over the first axis, which is time.
    """
    return np.degrees(continuous_euler(quats, FBX_EULER_ORDER)[..., ::-1])


def add_skeleton(scene: FbxScene, rig: Rig, scale: float) -> list[int]:
    """Add the rig's joints to ``scene``; returns each joint's Model id.

    Parameters
    ----------
    scene : the scene being built
    rig : names, hierarchy and rest transforms
    scale : file units per metre
    """
    offsets = rig.rest_offsets_m() * scale
    offsets[0] = rig.rest_root_position_m() * scale
    rest_degrees = fbx_euler_degrees(mat_to_quat(rig.rest_local_rotations())[None])[0]
    lengths = np.linalg.norm(rig.skeleton.offsets, axis=1) * scale
    model_ids: list[int] = []
    for j, name in enumerate(rig.joint_names):
        attr_id, model_id = scene.new_id(), scene.new_id()
        attr = FbxNode.make("NodeAttribute", i64(attr_id), object_name(name, "NodeAttribute"), "LimbNode")
        attr.add("TypeFlags", "Skeleton")
        attr.children.append(properties70(p_double("Size", float(max(lengths[j], 0.01 * scale)))))
        scene.add("NodeAttribute", attr)

        model = FbxNode.make("Model", i64(model_id), object_name(name, "Model"), "LimbNode")
        model.add("Version", i32(232))
        model.children.append(
            properties70(
                p_lcl("Lcl Translation", offsets[j]),
                p_lcl("Lcl Rotation", rest_degrees[j] + 0.0),
                p_lcl("Lcl Scaling", (1.0, 1.0, 1.0)),
                p_enum("RotationOrder", 0),
                p_bool("RotationActive", True),
                p_enum("InheritType", 1),
                p_int("DefaultAttributeIndex", 0),
            )
        )
        model.add("Shading", True)
        model.add("Culling", "CullingOff")
        scene.add("Model", model)

        scene.connect(attr_id, model_id)
        parent = rig.parents[j]
        scene.connect(model_id, 0 if parent < 0 else model_ids[parent])
        model_ids.append(model_id)
    return model_ids
