"""The skinned mannequin as FBX objects: mesh, Skin and Cluster deformers, bind pose.

A bones-only file opens as a cloud of sticks in most viewers; the mannequin
(:mod:`exporters.mannequin`, shared with the glTF writer) shows a figure. FBX
skinning is: a Mesh Model with its Geometry, a ``Skin`` deformer on the
geometry, one ``Cluster`` per bone that moves vertices (vertex indices,
weights, ``TransformLink`` = the bone's world matrix at bind time,
``Transform`` = its inverse times the mesh's world matrix), and a ``BindPose``
listing the world matrix of the mesh and of every bone at bind time.
Matrices are written as 16 doubles with the translation in elements 12-14.
"""

from __future__ import annotations

import numpy as np

from exporters.fbx.nodes import FbxNode, i32, i64
from exporters.fbx.properties import p_double, p_lcl, p_vector, properties70
from exporters.fbx.scene import FbxScene, object_name
from exporters.mannequin import build_mannequin
from exporters.rigs import Rig

__all__ = ["MESH_NAME", "add_skinned_figure"]

MESH_NAME = "Mannequin"
_GREY = (0.72, 0.72, 0.7)


def _matrix(m: np.ndarray) -> np.ndarray:
    """A 4x4 column-vector matrix as FBX's 16 doubles (translation at 12, 13, 14)."""
    return np.ascontiguousarray(np.asarray(m, dtype=np.float64).T).ravel()


def _geometry(scene: FbxScene, positions: np.ndarray, normals: np.ndarray, triangles: np.ndarray) -> int:
    geometry_id = scene.new_id()
    geo = FbxNode.make("Geometry", i64(geometry_id), object_name(MESH_NAME, "Geometry"), "Mesh")
    geo.children.append(properties70())
    geo.add("GeometryVersion", i32(124))
    geo.add("Vertices", positions.astype(np.float64).ravel())
    polygon = triangles.astype(np.int32).copy()
    polygon[:, 2] = -polygon[:, 2] - 1  # the last index of each polygon is stored as -(index + 1)
    geo.add("PolygonVertexIndex", polygon.ravel())
    layer_normals = geo.add("LayerElementNormal", i32(0))
    layer_normals.add("Version", i32(101))
    layer_normals.add("Name", "")
    layer_normals.add("MappingInformationType", "ByVertice")
    layer_normals.add("ReferenceInformationType", "Direct")
    layer_normals.add("Normals", normals.astype(np.float64).ravel())
    layer_material = geo.add("LayerElementMaterial", i32(0))
    layer_material.add("Version", i32(101))
    layer_material.add("Name", "")
    layer_material.add("MappingInformationType", "AllSame")
    layer_material.add("ReferenceInformationType", "IndexToDirect")
    layer_material.add("Materials", np.zeros(1, dtype=np.int32))
    layer = geo.add("Layer", i32(0))
    layer.add("Version", i32(100))
    for element_type in ("LayerElementNormal", "LayerElementMaterial"):
        element = layer.add("LayerElement")
        element.add("Type", element_type)
        element.add("TypedIndex", i32(0))
    scene.add("Geometry", geo)
    return geometry_id


def _material(scene: FbxScene) -> int:
    """A plain light-grey Phong material, so that viewers need not invent one."""
    material_id = scene.new_id()
    material = FbxNode.make("Material", i64(material_id), object_name(MESH_NAME, "Material"), "")
    material.add("Version", i32(102))
    material.add("ShadingModel", "phong")
    material.add("MultiLayer", i32(0))
    material.children.append(
        properties70(
            p_vector("DiffuseColor", "Color", "", _GREY),
            p_vector("AmbientColor", "Color", "", (0.05, 0.05, 0.05)),
            p_vector("SpecularColor", "Color", "", (0.2, 0.2, 0.2)),
            p_double("Shininess", 20.0),
        )
    )
    scene.add("Material", material)
    return material_id


def add_skinned_figure(scene: FbxScene, rig: Rig, model_ids: list[int], scale: float) -> int:
    """Add the mannequin bound to the rig's bones; returns the mesh Model's id.

    Parameters
    ----------
    scene : the scene being built (the skeleton already in it)
    rig : the rig whose bones the figure follows (its bone axes set the bind matrices)
    model_ids : each joint's Model id
    scale : file units per metre
    """
    figure = build_mannequin(
        rig.skeleton,
        root_position_m=tuple(rig.rest_root_position_m()),
        joint_orientations=rig.bone_frames,
    )
    bind = figure.bind_matrices.copy()
    bind[:, :3, 3] *= scale
    geometry_id = _geometry(scene, figure.positions * scale, figure.normals, figure.indices)

    mesh_id = scene.new_id()
    mesh = FbxNode.make("Model", i64(mesh_id), object_name(MESH_NAME, "Model"), "Mesh")
    mesh.add("Version", i32(232))
    mesh.children.append(
        properties70(
            p_lcl("Lcl Translation", (0.0, 0.0, 0.0)),
            p_lcl("Lcl Rotation", (0.0, 0.0, 0.0)),
            p_lcl("Lcl Scaling", (1.0, 1.0, 1.0)),
        )
    )
    mesh.add("Shading", True)
    mesh.add("Culling", "CullingOff")
    scene.add("Model", mesh)
    scene.connect(mesh_id, 0)
    scene.connect(geometry_id, mesh_id)
    scene.connect(_material(scene), mesh_id)

    skin_id = scene.new_id()
    skin = FbxNode.make("Deformer", i64(skin_id), object_name(MESH_NAME, "Deformer"), "Skin")
    skin.add("Version", i32(101))
    skin.add("Link_DeformAcuracy", 50.0)
    skin.add("SkinningType", "Linear")
    scene.add("Deformer", skin)
    scene.connect(skin_id, geometry_id)

    mesh_world = np.eye(4)
    for j, name in enumerate(rig.joint_names):
        vertices, weights = figure.cluster(j)
        if vertices.size == 0:
            continue
        cluster_id = scene.new_id()
        cluster = FbxNode.make("Deformer", i64(cluster_id), object_name(name, "SubDeformer"), "Cluster")
        cluster.add("Version", i32(100))
        cluster.add("UserData", "", "")
        cluster.add("Indexes", vertices.astype(np.int32))
        cluster.add("Weights", weights.astype(np.float64))
        cluster.add("Transform", _matrix(np.linalg.inv(bind[j]) @ mesh_world))
        cluster.add("TransformLink", _matrix(bind[j]))
        scene.add("Deformer", cluster)
        scene.connect(cluster_id, skin_id)
        scene.connect(model_ids[j], cluster_id)

    pose_id = scene.new_id()
    pose = FbxNode.make("Pose", i64(pose_id), object_name("BindPose", "Pose"), "BindPose")
    pose.add("Type", "BindPose")
    pose.add("Version", i32(100))
    pose.add("NbPoseNodes", i32(1 + len(model_ids)))
    for node_id, matrix in [(mesh_id, mesh_world), *zip(model_ids, bind, strict=True)]:
        entry = pose.add("PoseNode")
        entry.add("Node", i64(node_id))
        entry.add("Matrix", _matrix(matrix))
    scene.add("Pose", pose)
    return mesh_id
