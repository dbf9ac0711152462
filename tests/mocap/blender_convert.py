"""Convert BVH mocap into the FBX and glTF files a content team gets from Blender (runs in .blender-venv).

This script is not a test module: the reader tests run it with the Python of
``.blender-venv`` (PyPI ``bpy``) to make motion files with a tool we did not write.

Usage: ``python blender_convert.py REQUEST.json``; the request is
``{"jobs": [{"bvh", "out", "format", "options"}, ...]}``: for each job, in a fresh
empty scene, Blender imports the BVH (its own importer, at the file's frame rate) and
exports the armature's animation as ``format`` (``fbx`` or ``glb``) to ``out`` with
Blender's own exporter and its default settings, changed by ``options`` (for example
``{"axis_up": "Z"}`` for a Z-up FBX, or ``{"bake_anim_simplify_factor": 1.0}``, which
leaves irregular keys).
"""

from __future__ import annotations

import json
import sys

import bpy

EXPORTERS = {
    "fbx": lambda path, **kw: bpy.ops.export_scene.fbx(filepath=path, **kw),
    "glb": lambda path, **kw: bpy.ops.export_scene.gltf(filepath=path, export_format="GLB", **kw),
}


def convert(job: dict) -> None:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    result = bpy.ops.import_anim.bvh(filepath=job["bvh"], update_scene_fps=True, update_scene_duration=True)
    if "FINISHED" not in result:
        raise RuntimeError(f"Blender could not import {job['bvh']}: {result}")
    result = EXPORTERS[job["format"]](job["out"], **job.get("options", {}))
    if "FINISHED" not in result:
        raise RuntimeError(f"Blender could not export {job['out']}: {result}")


def main() -> None:
    request = json.loads(open(sys.argv[1]).read())  # noqa: SIM115 - a script run once
    for job in request["jobs"]:
        convert(job)


if __name__ == "__main__":
    main()
