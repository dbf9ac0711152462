"""The dance as FBX animation: one stack, one layer, curve nodes and curves.

Every joint gets a rotation curve node (``R``, connected to its Model's
``Lcl Rotation``) with three curves, X, Y and Z in degrees; the root also gets
a translation curve node (``T``). Keys sit on every frame, linearly
interpolated. All key times are one shared int64 array (FBX ticks), so the
encoder compresses it once however many curves use it.
"""

from __future__ import annotations

import numpy as np

from choreo.motion.motion import Motion
from exporters.fbx.nodes import FbxNode, i32, i64
from exporters.fbx.properties import p_ktime, p_number, properties70
from exporters.fbx.scene import FbxScene, object_name
from exporters.fbx.skeleton import fbx_euler_degrees
from exporters.fbx.timing import frame_ticks
from exporters.rigs import Rig

__all__ = ["KEY_FLAGS_LINEAR", "add_animation"]

KEY_FLAGS_LINEAR = 0x0004 | 0x0100 | 0x2000 | 0x4000
"""Key attribute flags: linear interpolation (0x4), with the automatic, time-independent,
progressive-clamp tangent bits (0x100, 0x2000, 0x4000) that FBX writers set by default."""

_KEY_VERSION = 4008
# Default tangent weights (0.3333 right and next-left, as two int16 in thousandths
# of a percent) packed into one float32 slot of the key attribute data.
_DEFAULT_WEIGHTS = np.array([3333 | (3333 << 16)], dtype=np.int32).view(np.float32)[0]


def _curve(scene: FbxScene, key_ticks: np.ndarray, values: np.ndarray) -> int:
    curve_id = scene.new_id()
    node = FbxNode.make("AnimationCurve", i64(curve_id), object_name("", "AnimCurve"), "")
    node.add("Default", float(values[0]))
    node.add("KeyVer", i32(_KEY_VERSION))
    node.add("KeyTime", key_ticks)
    node.add("KeyValueFloat", np.ascontiguousarray(values, dtype=np.float32))
    node.add("KeyAttrFlags", np.array([KEY_FLAGS_LINEAR], dtype=np.int32))
    node.add("KeyAttrDataFloat", np.array([0.0, 0.0, _DEFAULT_WEIGHTS, 0.0], dtype=np.float32))
    node.add("KeyAttrRefCount", np.array([values.shape[0]], dtype=np.int32))
    scene.add("AnimationCurve", node)
    return curve_id


def _curve_node(
    scene: FbxScene,
    layer_id: int,
    model_id: int,
    kind: str,
    prop: str,
    key_ticks: np.ndarray,
    xyz: np.ndarray,
) -> None:
    node_id = scene.new_id()
    node = FbxNode.make("AnimationCurveNode", i64(node_id), object_name(kind, "AnimCurveNode"), "")
    node.children.append(properties70(*(p_number(f"d|{a}", float(xyz[0, i])) for i, a in enumerate("XYZ"))))
    scene.add("AnimationCurveNode", node)
    scene.connect(node_id, layer_id)
    scene.connect(node_id, model_id, prop)
    for i, axis in enumerate("XYZ"):
        scene.connect(_curve(scene, key_ticks, xyz[:, i]), node_id, f"d|{axis}")


def add_animation(
    scene: FbxScene, rig: Rig, motion: Motion, model_ids: list[int], scale: float, take_name: str
) -> tuple[int, int]:
    """Add the motion's animation for the rig's Models; returns its ``(start, stop)`` in ticks.

    Parameters
    ----------
    scene : the scene being built
    rig : how the motion maps onto the Models
    motion : the dance
    model_ids : each joint's Model id, from :func:`~exporters.fbx.skeleton.add_skeleton`
    scale : file units per metre
    take_name : name of the animation stack (the take)
    """
    key_ticks = frame_ticks(motion.n_frames, motion.fps)
    start, stop = int(key_ticks[0]), int(key_ticks[-1])
    stack_id, layer_id = scene.new_id(), scene.new_id()
    stack = FbxNode.make("AnimationStack", i64(stack_id), object_name(take_name, "AnimStack"), "")
    stack.children.append(
        properties70(
            p_ktime("LocalStart", start),
            p_ktime("LocalStop", stop),
            p_ktime("ReferenceStart", start),
            p_ktime("ReferenceStop", stop),
        )
    )
    scene.add("AnimationStack", stack)
    layer_name = object_name("BaseLayer", "AnimLayer")
    layer = FbxNode.make("AnimationLayer", i64(layer_id), layer_name, "", block=True)
    scene.add("AnimationLayer", layer)
    scene.connect(layer_id, stack_id)

    degrees = fbx_euler_degrees(rig.local_quaternions(motion)).astype(np.float32)  # [frames, joints, 3]
    root = next(j for j, p in enumerate(rig.parents) if p < 0)
    translation = (rig.root_positions_m(motion) * scale).astype(np.float32)
    _curve_node(scene, layer_id, model_ids[root], "T", "Lcl Translation", key_ticks, translation)
    for j, model_id in enumerate(model_ids):
        _curve_node(scene, layer_id, model_id, "R", "Lcl Rotation", key_ticks, degrees[:, j])
    return start, stop
