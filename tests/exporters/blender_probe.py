"""Import dance files into Blender and report what Blender sees (runs inside .blender-venv).

This script is not a test module: the Blender tests run it with the Python of the
``.blender-venv`` (PyPI ``bpy``, which cannot share the project's venv because it pins
numpy<2) and compare its report with our own forward kinematics in the main venv.

Usage: ``python blender_probe.py REQUEST.json REPORT.json``

The request is ``{"jobs": [{"path", "format", "fps", "frames", "options"}, ...]}`` where
``format`` is ``bvh``, ``fbx`` or ``glb``, ``frames`` are the Blender frames to sample
(fractional frames are evaluated between keys) and
``options`` are extra keyword arguments for the importer. For each job, in a fresh empty
scene whose frame rate is ``fps``, the file is imported with Blender's own importer and
the report gets:

* ``armatures``: how many armature objects the import made;
* ``bones``: the armature's bone names;
* ``frame_range``: the first and last keyed frame of the armature's action;
* ``scene_fps``: the scene's frame rate after the import;
* ``scene_properties``: the scene's custom properties after the import (where the glTF
  importer puts scene extras);
* ``heads``: for each sampled frame, the world-space head of every pose bone,
  ``[frames][bones][3]`` in Blender's Z-up metres;
* ``skinned``: for each mesh the armature deforms, its vertex-group count and, for each
  sampled frame, its deformed vertices in world space, ``[frames][vertices][3]``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import bpy

IMPORTERS = {
    "bvh": lambda path, **kw: bpy.ops.import_anim.bvh(filepath=path, **kw),
    "fbx": lambda path, **kw: bpy.ops.import_scene.fbx(filepath=path, **kw),
    "glb": lambda path, **kw: bpy.ops.import_scene.gltf(filepath=path, **kw),
}


def probe(job: dict) -> dict:
    """Import one file into an empty scene and measure its armature."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = int(job["fps"])
    scene.render.fps_base = 1.0
    result = IMPORTERS[job["format"]](job["path"], **job.get("options", {}))
    if "FINISHED" not in result:
        raise RuntimeError(f"Blender could not import {job['path']}: {result}")
    armatures = [obj for obj in scene.objects if obj.type == "ARMATURE"]
    report: dict = {
        "armatures": len(armatures),
        "scene_fps": scene.render.fps / scene.render.fps_base,
        "scene_properties": {key: _plain(scene[key]) for key in scene.keys()},  # noqa: SIM118 (IDs are not iterable)
    }
    if len(armatures) != 1:
        return report
    armature = armatures[0]
    animation = armature.animation_data
    action = animation.action if animation else None
    report["bones"] = [bone.name for bone in armature.data.bones]
    report["frame_range"] = list(action.frame_range) if action else None
    heads = []
    for frame in job["frames"]:
        _go_to(scene, frame)
        world = armature.matrix_world
        heads.append([list(world @ armature.pose.bones[name].head) for name in report["bones"]])
    report["heads"] = heads
    report["skinned"] = [_deformed(mesh, job["frames"]) for mesh in _skinned_meshes(scene, armature)]
    return report


def _go_to(scene, frame: float) -> None:
    """Evaluate the scene at ``frame``, which may lie between two whole frames."""
    whole = int(frame // 1)
    scene.frame_set(whole, subframe=float(frame) - whole)


def _plain(value: object) -> object:
    """A custom property as plain JSON values (Blender wraps lists and groups)."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "to_list"):
        return value.to_list()
    return value


def _skinned_meshes(scene, armature) -> list:
    return [
        obj
        for obj in scene.objects
        if obj.type == "MESH"
        and any(mod.type == "ARMATURE" and mod.object == armature for mod in obj.modifiers)
    ]


def _deformed(mesh, frames: list[int]) -> dict:
    """World positions of ``mesh``'s vertices after the armature deforms it, per frame."""
    scene = bpy.context.scene
    vertices = []
    for frame in frames:
        _go_to(scene, frame)
        evaluated = mesh.evaluated_get(bpy.context.evaluated_depsgraph_get())
        data = evaluated.to_mesh()
        world = evaluated.matrix_world
        vertices.append([list(world @ v.co) for v in data.vertices])
        evaluated.to_mesh_clear()
    return {"vertex_groups": len(mesh.vertex_groups), "vertices": vertices}


def main(request_path: str, report_path: str) -> int:
    request = json.loads(Path(request_path).read_text())
    reports = [probe(job) for job in request["jobs"]]
    Path(report_path).write_text(json.dumps({"blender": bpy.app.version_string, "jobs": reports}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
