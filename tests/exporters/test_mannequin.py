"""The procedural mannequin: a closed, outward-facing, properly weighted figure on the skeleton."""

from __future__ import annotations

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.motion.kinematics import global_rotations, joint_positions
from choreo.motion.motion import Motion
from choreo.motion.skeleton import REST_PELVIS_HEIGHT_M, SMPL
from exporters.mannequin import INFLUENCES, build_mannequin


@pytest.fixture(scope="module")
def mannequin():
    return build_mannequin()


def test_arrays_have_consistent_shapes_and_types(mannequin):
    v = mannequin.n_vertices
    assert mannequin.positions.shape == (v, 3) and mannequin.positions.dtype == np.float32
    assert mannequin.normals.shape == (v, 3) and mannequin.normals.dtype == np.float32
    assert mannequin.indices.shape == (mannequin.n_triangles, 3) and mannequin.indices.dtype == np.uint32
    assert mannequin.joints.shape == (v, INFLUENCES) and mannequin.weights.shape == (v, INFLUENCES)
    assert mannequin.indices.max() == v - 1
    assert mannequin.bind_matrices.shape == (SMPL.n_joints, 4, 4)


def test_triangles_face_outwards_and_are_not_degenerate(mannequin):
    p = mannequin.positions.astype(np.float64)
    tri = mannequin.indices
    face = np.cross(p[tri[:, 1]] - p[tri[:, 0]], p[tri[:, 2]] - p[tri[:, 0]])
    area = 0.5 * np.linalg.norm(face, axis=1)
    assert area.min() > 1e-6
    outward = np.sum(face * mannequin.normals[tri].sum(axis=1), axis=1)
    assert np.all(outward > 0.0)
    np.testing.assert_allclose(np.linalg.norm(mannequin.normals, axis=1), 1.0, atol=1e-6)


def test_every_edge_is_shared_by_two_triangles(mannequin):
    """Each capsule is closed: every directed edge has its reverse in another triangle."""
    tri = mannequin.indices.astype(np.int64)
    edges = np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]])
    forward = {tuple(e) for e in edges.tolist()}
    assert len(forward) == len(edges)
    assert all((b, a) in forward for a, b in forward)


def test_weights_are_normalised_sorted_and_zero_slots_point_at_joint_zero(mannequin):
    w, j = mannequin.weights, mannequin.joints
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-6)
    assert np.all(np.diff(w, axis=1) <= 0.0)
    assert np.all(j[w == 0.0] == 0)
    used = [set(row[weights > 0].tolist()) for row, weights in zip(j, w, strict=True)]
    assert all(len(s) == int(np.count_nonzero(weights)) for s, weights in zip(used, w, strict=True))
    # Every joint moves part of the figure (the end joints move their tips).
    assert set(np.unique(j[w > 0])) == set(range(SMPL.n_joints))


def test_figure_stands_on_the_floor_at_the_rest_height(mannequin):
    low, high = mannequin.positions.min(axis=0), mannequin.positions.max(axis=0)
    assert -0.03 < low[1] < 0.02  # toes sink a little: the toe joint is 1.5 cm up
    assert 1.6 < high[1] < 1.9
    rest = SMPL.rest_positions() + [0.0, REST_PELVIS_HEIGHT_M, 0.0]
    np.testing.assert_allclose(mannequin.bind_matrices[:, :3, 3], rest)
    np.testing.assert_allclose(
        mannequin.inverse_bind_matrices @ mannequin.bind_matrices, np.tile(np.eye(4), (24, 1, 1)), atol=1e-12
    )


def test_clusters_partition_the_weights(mannequin):
    total = np.zeros(mannequin.n_vertices)
    for joint in range(SMPL.n_joints):
        vertices, weights = mannequin.cluster(joint)
        assert np.all(np.diff(vertices) > 0) and np.all(weights > 0)
        total[vertices] += weights
    np.testing.assert_allclose(total, 1.0, atol=1e-6)


def test_linear_blend_skinning_keeps_rigid_parts_on_their_bones(mannequin, rng):
    """Skinned by a random pose, every vertex bound to a single joint keeps its distance to that joint."""
    rotations = rng.normal(0.0, 0.6, (1, 24, 3))
    motion = Motion(fps=30, root_translation=np.array([[0.2, 1.0, -0.3]]), rotations=rotations)
    world_rot = global_rotations(motion)[0]
    world_pos = joint_positions(motion)[0]
    posed = np.tile(np.eye(4), (24, 1, 1))
    posed[:, :3, :3] = world_rot
    posed[:, :3, 3] = world_pos
    skinning = posed @ mannequin.inverse_bind_matrices  # [J, 4, 4]
    rest_h = np.concatenate([mannequin.positions, np.ones((mannequin.n_vertices, 1))], axis=1).astype(
        np.float64
    )
    per_joint = np.einsum("jab,vb->vja", skinning, rest_h)[..., :3]  # [V, J, 3]
    deformed = np.einsum(
        "vk,vka->va", mannequin.weights, per_joint[np.arange(mannequin.n_vertices)[:, None], mannequin.joints]
    )
    rigid = mannequin.weights[:, 0] == 1.0
    owner = mannequin.joints[rigid, 0]
    rest_joint = mannequin.bind_matrices[owner, :3, 3]
    before = np.linalg.norm(mannequin.positions[rigid] - rest_joint, axis=1)
    after = np.linalg.norm(deformed[rigid] - world_pos[owner], axis=1)
    np.testing.assert_allclose(after, before, atol=1e-5)


def test_rest_orientations_enter_the_bind_matrices():
    turn = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    figure = build_mannequin(joint_orientations=np.tile(turn, (24, 1, 1)))
    np.testing.assert_allclose(figure.bind_matrices[:, :3, :3], np.tile(turn, (24, 1, 1)))
    np.testing.assert_allclose(figure.positions, build_mannequin().positions)


def test_rejects_bad_parameters():
    with pytest.raises(ParameterError, match="joint_orientations"):
        build_mannequin(joint_orientations=np.eye(3))
    with pytest.raises(ParameterError, match="root_position_m"):
        build_mannequin(root_position_m=(0.0, np.nan, 0.0))
