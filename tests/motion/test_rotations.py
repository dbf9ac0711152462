"""Every conversion agrees with scipy.spatial.transform.Rotation on random inputs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from choreo.errors import ParameterError
from choreo.motion import rotations as rot


@pytest.fixture
def random_rotations(rng: np.random.Generator) -> Rotation:
    return Rotation.random(200, random_state=np.random.RandomState(7))


def _same_rotation(a: np.ndarray, b: np.ndarray, atol: float = 1e-9) -> bool:
    return np.allclose(rot.aa_to_mat(a), rot.aa_to_mat(b), atol=atol)


def test_aa_quat_mat_match_scipy(random_rotations: Rotation) -> None:
    aa = random_rotations.as_rotvec()
    np.testing.assert_allclose(rot.aa_to_mat(aa), random_rotations.as_matrix(), atol=1e-12)
    quat = rot.aa_to_quat(aa)
    np.testing.assert_allclose(np.abs(np.sum(quat * random_rotations.as_quat(), axis=-1)), 1.0, atol=1e-12)
    np.testing.assert_allclose(rot.quat_to_mat(quat), random_rotations.as_matrix(), atol=1e-12)
    assert _same_rotation(rot.quat_to_aa(quat), aa)
    assert _same_rotation(rot.mat_to_aa(random_rotations.as_matrix()), aa)
    np.testing.assert_allclose(
        rot.quat_to_mat(rot.mat_to_quat(random_rotations.as_matrix())),
        random_rotations.as_matrix(),
        atol=1e-12,
    )


ATAN2_ULPS = 4
"""How far numpy's arctan2 may carry an axis-angle from scipy's (see the test below)."""


def test_matrix_conversions_are_scipys(rng: np.random.Generator) -> None:
    # Every branch of the conversion: each of the four largest terms, tiny angles (the Taylor
    # series), angles near pi, w = 0 (the hemisphere's tie-breaks), the identity.
    scales = rng.choice([1e-9, 1e-4, 1e-2, 0.5, 2.0, np.pi - 1e-6], size=(4000, 1))
    aa = rng.normal(size=(4000, 3))
    aa *= scales / np.linalg.norm(aa, axis=1, keepdims=True)
    half_turns = np.array([[np.pi, 0, 0], [0, np.pi, 0], [0, 0, np.pi], [np.pi / 2**0.5, -np.pi / 2**0.5, 0]])
    mats = np.concatenate(
        [Rotation.from_rotvec(aa).as_matrix(), Rotation.from_rotvec(half_turns).as_matrix()]
    )
    mats = np.concatenate([mats, np.eye(3)[None], mats[:100] @ mats[100:200]])
    expected = Rotation.from_matrix(mats)
    assert np.array_equal(rot.mat_to_quat(mats), expected.as_quat())
    # The angle is numpy's arctan2 here and the C library's atan2 in scipy: since numpy 2.4.6 they can
    # differ in the last bit (a SIMD routine), so the axis-angles agree to a few units in the last place.
    np.testing.assert_array_max_ulp(rot.mat_to_aa(mats), expected.as_rotvec(), maxulp=ATAN2_ULPS)
    # Off a rotation by more than scipy's tolerance: scipy's own orthogonalisation.
    skewed = mats[:50] + 1e-6 * rng.normal(size=(50, 3, 3))
    both = np.concatenate([skewed, mats[:50]])
    assert np.array_equal(rot.mat_to_quat(both), Rotation.from_matrix(both).as_quat())
    np.testing.assert_array_max_ulp(
        rot.mat_to_aa(both), Rotation.from_matrix(both).as_rotvec(), maxulp=ATAN2_ULPS
    )
    with pytest.raises(ValueError, match="determinant"):
        rot.mat_to_aa(np.diag([1.0, 1.0, -1.0])[None])


def test_sixd_round_trip_and_gram_schmidt(random_rotations: Rotation, rng: np.random.Generator) -> None:
    mats = random_rotations.as_matrix()
    sixd = rot.mat_to_sixd(mats)
    np.testing.assert_allclose(sixd[:, :3], mats[:, :, 0])
    np.testing.assert_allclose(rot.sixd_to_mat(sixd), mats, atol=1e-12)
    noisy = sixd + rng.normal(scale=0.05, size=sixd.shape)
    fixed = rot.sixd_to_mat(noisy)
    np.testing.assert_allclose(
        fixed @ np.swapaxes(fixed, -1, -2), np.broadcast_to(np.eye(3), fixed.shape), atol=1e-12
    )
    np.testing.assert_allclose(np.linalg.det(fixed), 1.0, atol=1e-12)
    assert _same_rotation(
        rot.sixd_to_aa(rot.aa_to_sixd(random_rotations.as_rotvec())), random_rotations.as_rotvec()
    )


@pytest.mark.parametrize("order", rot.EULER_ORDERS)
def test_euler_every_order_matches_scipy_intrinsic(random_rotations: Rotation, order: str) -> None:
    euler = random_rotations.as_euler(order)
    np.testing.assert_allclose(rot.euler_to_mat(euler, order), random_rotations.as_matrix(), atol=1e-12)
    back = rot.mat_to_euler(random_rotations.as_matrix(), order)
    np.testing.assert_allclose(rot.euler_to_mat(back, order), random_rotations.as_matrix(), atol=1e-12)
    aa = random_rotations.as_rotvec()
    assert _same_rotation(rot.euler_to_aa(rot.aa_to_euler(aa, order), order), aa)
    quat = random_rotations.as_quat().reshape(20, 10, 4)
    from_quat = rot.quat_to_euler(quat, order)
    assert from_quat.shape == (20, 10, 3)
    np.testing.assert_allclose(
        rot.euler_to_mat(from_quat, order).reshape(200, 3, 3), random_rotations.as_matrix(), atol=1e-12
    )
    assert np.abs(from_quat[..., 1]).max() <= np.pi / 2 + 1e-12


def test_quat_conjugate_is_the_inverse(random_rotations: Rotation) -> None:
    quat = random_rotations.as_quat()
    identity = rot.quat_multiply(quat, rot.quat_conjugate(quat))
    np.testing.assert_allclose(np.abs(identity[:, 3]), 1.0, atol=1e-12)
    np.testing.assert_allclose(identity[:, :3], 0.0, atol=1e-12)


def test_intrinsic_order_is_the_matrix_product() -> None:
    angles = np.array([0.3, -0.7, 1.1])
    rz, rx, ry = (Rotation.from_euler(axis, a).as_matrix() for axis, a in zip("zxy", angles, strict=True))
    np.testing.assert_allclose(rot.euler_to_mat(angles, "ZXY"), rz @ rx @ ry, atol=1e-12)


def test_leading_batch_dimensions_are_kept(rng: np.random.Generator) -> None:
    aa = rng.normal(size=(4, 5, 24, 3))
    assert rot.aa_to_quat(aa).shape == (4, 5, 24, 4)
    assert rot.aa_to_mat(aa).shape == (4, 5, 24, 3, 3)
    assert rot.aa_to_sixd(aa).shape == (4, 5, 24, 6)
    assert rot.aa_to_euler(aa).shape == (4, 5, 24, 3)


def test_quat_multiply_matches_scipy_composition(random_rotations: Rotation) -> None:
    a, b = random_rotations[:100], random_rotations[100:]
    product = rot.quat_multiply(a.as_quat(), b.as_quat())
    np.testing.assert_allclose(rot.quat_to_mat(product), (a * b).as_matrix(), atol=1e-12)


def test_slerp_endpoints_midpoint_and_shorter_arc() -> None:
    q0 = rot.aa_to_quat(np.array([0.0, 0.0, 0.0]))
    q1 = rot.aa_to_quat(np.array([0.0, 1.0, 0.0]))
    np.testing.assert_allclose(rot.quat_slerp(q0, q1, 0.0), q0, atol=1e-12)
    assert _same_rotation(rot.quat_to_aa(rot.quat_slerp(q0, q1, 1.0)), np.array([0.0, 1.0, 0.0]))
    assert _same_rotation(rot.quat_to_aa(rot.quat_slerp(q0, q1, 0.5)), np.array([0.0, 0.5, 0.0]))
    assert _same_rotation(rot.quat_to_aa(rot.quat_slerp(q0, -q1, 0.5)), np.array([0.0, 0.5, 0.0]))


def test_hemisphere_alignment_removes_sign_flips(rng: np.random.Generator) -> None:
    angles = np.linspace(0, 1.5, 50)
    quat = rot.aa_to_quat(np.stack([angles, np.zeros(50), np.zeros(50)], axis=1))
    flipped = quat * rng.choice([-1.0, 1.0], size=(50, 1))
    aligned = rot.quat_align_hemisphere(flipped)
    assert np.all(np.sum(aligned[1:] * aligned[:-1], axis=-1) > 0)
    np.testing.assert_allclose(np.abs(aligned), np.abs(quat))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: rot.aa_to_mat(np.zeros((4, 4))), "axis-angle"),
        (lambda: rot.quat_to_aa(np.zeros((2, 3))), "quaternion"),
        (lambda: rot.euler_to_mat(np.zeros(3), "XYX"), "Euler order"),
    ],
)
def test_bad_shapes_and_orders_raise_parameter_error(call, message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        call()
