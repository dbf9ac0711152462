"""Rotation conversions between every representation Choreo uses.

Glossary (one convention each, used everywhere in the project):

* **axis-angle** (``aa``): ``[..., 3]``, the rotation axis scaled by the angle in
  radians (scipy's "rotation vector").
* **quaternion** (``quat``): ``[..., 4]`` in ``(x, y, z, w)`` order, scalar last,
  unit norm. This is scipy's and glTF's order.
* **matrix** (``mat``): ``[..., 3, 3]``, rotating column vectors: ``v' = R @ v``.
* **6D** (``sixd``): ``[..., 6]``, the first two columns of the matrix
  concatenated (column 0 then column 1), continuous for learning.
* **Euler** (``euler``): ``[..., 3]`` radians, *intrinsic* rotations about the axes
  named by an upper-case order string such as ``"ZXY"``: the first angle turns
  about Z, the second about the new X, the third about the newest Y. This is what
  a BVH channel line ``Zrotation Xrotation Yrotation`` means and equals the matrix
  product ``Rz @ Rx @ Ry``. There is one default order, :data:`DEFAULT_EULER_ORDER`,
  for every function here.

Every function accepts any number of leading batch dimensions and returns new
arrays. The arithmetic is scipy's (the matrix conversions written out in numpy: the quaternions bit for
bit, the axis-angles to the last bit of the arctangent, which numpy computes with its own SIMD routine
and scipy with the C library's).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from choreo.errors import ParameterError
from choreo.numeric.vectors import dot, norm

__all__ = [
    "DEFAULT_EULER_ORDER",
    "EULER_ORDERS",
    "aa_to_euler",
    "aa_to_mat",
    "aa_to_quat",
    "aa_to_sixd",
    "euler_to_aa",
    "euler_to_mat",
    "mat_to_aa",
    "mat_to_euler",
    "mat_to_quat",
    "mat_to_sixd",
    "quat_align_hemisphere",
    "quat_conjugate",
    "quat_multiply",
    "quat_slerp",
    "quat_to_aa",
    "quat_to_euler",
    "quat_to_mat",
    "sixd_to_aa",
    "sixd_to_mat",
]

DEFAULT_EULER_ORDER = "ZXY"
EULER_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")


def _check_last(x: np.ndarray, shape: tuple[int, ...], name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.shape[arr.ndim - len(shape) :] != shape:
        raise ParameterError(f"{name} must end in shape {shape}, got {arr.shape}")
    return arr


def _check_order(order: str) -> str:
    if order not in EULER_ORDERS:
        raise ParameterError(f"Euler order must be one of {EULER_ORDERS}, got {order!r}")
    return order


def _flat(arr: np.ndarray, tail: int) -> tuple[np.ndarray, tuple[int, ...]]:
    lead = arr.shape[: arr.ndim - tail]
    return arr.reshape((-1,) + arr.shape[arr.ndim - tail :]), lead


def aa_to_quat(aa: np.ndarray) -> np.ndarray:
    """Axis-angle ``[..., 3]`` to unit quaternion ``[..., 4]`` (x, y, z, w)."""
    flat, lead = _flat(_check_last(aa, (3,), "axis-angle"), 1)
    return Rotation.from_rotvec(flat).as_quat().reshape(lead + (4,))


def quat_to_aa(quat: np.ndarray) -> np.ndarray:
    """Quaternion ``[..., 4]`` (x, y, z, w) to axis-angle ``[..., 3]``, angle in [0, pi].

    Written out in numpy (scipy's ``as_rotvec`` costs microseconds per rotation,
    which a song's worth of frames and joints turns into most of a render): the
    quaternion is normalised and put on the ``w >= 0`` hemisphere, and the
    vector part scaled by ``angle / sin(angle / 2)``, with its limit ``2 / w``
    for tiny angles.
    """
    q = np.asarray(_check_last(quat, (4,), "quaternion"), dtype=np.float64)
    length = norm(q, keepdims=True)
    # Onto w >= 0 in the division itself: q / -n is -(q / n) exactly, and (q / n)'s w is w / n.
    q = q / np.where(q[..., 3:4] / length < 0.0, -length, length)
    vec, w = q[..., :3], q[..., 3]
    s = norm(vec)
    angle = 2.0 * np.arctan2(s, w)
    small = s < 1e-8
    scale = np.where(small, 2.0 / np.where(small, w, 1.0), angle / np.where(small, 1.0, s))
    return vec * scale[..., None]


def aa_to_mat(aa: np.ndarray) -> np.ndarray:
    """Axis-angle ``[..., 3]`` to rotation matrix ``[..., 3, 3]``."""
    flat, lead = _flat(_check_last(aa, (3,), "axis-angle"), 1)
    return Rotation.from_rotvec(flat).as_matrix().reshape(lead + (3, 3))


def mat_to_aa(mat: np.ndarray) -> np.ndarray:
    """Rotation matrix ``[..., 3, 3]`` to axis-angle ``[..., 3]``.

    scipy's ``as_rotvec`` of its ``from_matrix``, written out in numpy with the
    same arithmetic (``tests/motion/test_rotations.py``: bit for bit up to numpy's ``arctan2``, which
    since numpy 2.4.6 can differ from the C library's ``atan2`` in the last bit), because
    scipy's conversion of a matrix costs about 2 microseconds each: the legs' IK
    and the foot locks convert every frame's leg joints several times a render.
    """
    flat, lead = _flat(_check_last(mat, (3, 3), "matrix"), 2)
    quat = _canonical(_matrix_quat(flat))
    sine = norm(quat[:, :3])  # sin(angle / 2) of the unit quaternion
    angle = 2 * np.arctan2(sine, quat[:, 3])
    small = angle <= 1e-3
    squared = angle * angle
    scale = np.where(
        small,
        2 + squared / 12 + 7 * squared * squared / 2880,  # angle / sin(angle / 2), its Taylor series
        angle / np.where(small, 1.0, np.sin(angle / 2)),
    )
    return (scale[:, None] * quat[:, :3]).reshape(lead + (3,))


def quat_to_mat(quat: np.ndarray) -> np.ndarray:
    """Quaternion ``[..., 4]`` (x, y, z, w) to rotation matrix ``[..., 3, 3]``."""
    flat, lead = _flat(_check_last(quat, (4,), "quaternion"), 1)
    return Rotation.from_quat(flat).as_matrix().reshape(lead + (3, 3))


def mat_to_quat(mat: np.ndarray) -> np.ndarray:
    """Rotation matrix ``[..., 3, 3]`` to unit quaternion ``[..., 4]`` (x, y, z, w): scipy's
    ``from_matrix(...).as_quat()``, bit for bit, in numpy (see :func:`mat_to_aa`)."""
    flat, lead = _flat(_check_last(mat, (3, 3), "matrix"), 2)
    return _matrix_quat(flat).reshape(lead + (4,))


def _matrix_quat(flat: np.ndarray) -> np.ndarray:
    """Unit quaternions ``[n, 4]`` of matrices ``[n, 3, 3]`` as scipy's ``from_matrix`` stores them.

    A rotation (within scipy's tolerance: ``M M^T`` within 1e-12 of the identity, determinant
    positive) takes the largest of the diagonal and the trace (Markley's method) in scipy's
    arithmetic; any other matrix is left to scipy, which orthogonalises it (SVD) or refuses it.
    Every case is computed for every matrix, column by column, and the right one picked:
    cheaper than gathering each case's matrices.
    """
    m = np.asarray(flat, dtype=np.float64)
    rows = m[:, 0], m[:, 1], m[:, 2]
    rotation = np.ones(m.shape[0], dtype=bool)
    for i in range(3):
        for j in range(i, 3):
            rotation &= np.abs(dot(rows[i], rows[j]) - float(i == j)) <= 1e-12 + 1e-5 * (i == j)
    (m00, m01, m02), (m10, m11, m12), (m20, m21, m22) = ((r[:, 0], r[:, 1], r[:, 2]) for r in rows)
    cross = (m01 * m12 - m02 * m11, m02 * m10 - m00 * m12, m00 * m11 - m01 * m10)  # row 0 x row 1
    rotation &= cross[0] * m20 + cross[1] * m21 + cross[2] * m22 > 0  # not a reflection
    trace = m00 + m11 + m22
    # The first largest of m00, m11, m22 and the trace, as np.argmax picks it.
    first = (m00 >= m11) & (m00 >= m22) & (m00 >= trace)
    second = ~first & (m11 >= m22) & (m11 >= trace)
    third = ~first & ~second & (m22 >= trace)
    one_minus = 1 - trace
    s01, s02, s12 = m01 + m10, m02 + m20, m12 + m21
    d21, d02, d10 = m21 - m12, m02 - m20, m10 - m01
    quat = np.empty((m.shape[0], 4))
    quat[:, 0] = np.where(first, one_minus + 2 * m00, np.where(second, s01, np.where(third, s02, d21)))
    quat[:, 1] = np.where(first, s01, np.where(second, one_minus + 2 * m11, np.where(third, s12, d02)))
    quat[:, 2] = np.where(first, s02, np.where(second, s12, np.where(third, one_minus + 2 * m22, d10)))
    quat[:, 3] = np.where(first, d21, np.where(second, d02, np.where(third, d10, 1 + trace)))
    quat /= norm(quat, keepdims=True)
    if not rotation.all():
        quat[~rotation] = Rotation.from_matrix(m[~rotation]).as_quat()
    return quat


def _canonical(quat: np.ndarray) -> np.ndarray:
    """Quaternions ``[n, 4]`` on scipy's hemisphere: w > 0, or the first non-zero of w, x, y, z positive."""
    w, x, y, z = quat[:, 3], quat[:, 0], quat[:, 1], quat[:, 2]
    flip = (w < 0) | ((w == 0) & ((x < 0) | ((x == 0) & ((y < 0) | ((y == 0) & (z < 0))))))
    return np.where(flip[:, None], -quat, quat)


def mat_to_sixd(mat: np.ndarray) -> np.ndarray:
    """Rotation matrix ``[..., 3, 3]`` to 6D ``[..., 6]`` (first two columns)."""
    arr = _check_last(mat, (3, 3), "matrix")
    return np.concatenate([arr[..., :, 0], arr[..., :, 1]], axis=-1)


def sixd_to_mat(sixd: np.ndarray) -> np.ndarray:
    """6D ``[..., 6]`` to rotation matrix ``[..., 3, 3]`` by Gram-Schmidt.

    Any 6 numbers whose two 3-vectors are not parallel give a valid rotation,
    which is why networks predict this form.
    """
    arr = _check_last(sixd, (6,), "6D rotation")
    a, b = arr[..., :3], arr[..., 3:]
    x = a / np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), 1e-12)
    b = b - np.sum(x * b, axis=-1, keepdims=True) * x
    y = b / np.maximum(np.linalg.norm(b, axis=-1, keepdims=True), 1e-12)
    z = np.cross(x, y)
    return np.stack([x, y, z], axis=-1)


def aa_to_sixd(aa: np.ndarray) -> np.ndarray:
    """Axis-angle ``[..., 3]`` to 6D ``[..., 6]``."""
    return mat_to_sixd(aa_to_mat(aa))


def sixd_to_aa(sixd: np.ndarray) -> np.ndarray:
    """6D ``[..., 6]`` to axis-angle ``[..., 3]``."""
    return mat_to_aa(sixd_to_mat(sixd))


def euler_to_mat(euler: np.ndarray, order: str = DEFAULT_EULER_ORDER) -> np.ndarray:
    """Intrinsic Euler angles ``[..., 3]`` in radians to matrix ``[..., 3, 3]``."""
    flat, lead = _flat(_check_last(euler, (3,), "Euler angles"), 1)
    return Rotation.from_euler(_check_order(order), flat).as_matrix().reshape(lead + (3, 3))


def mat_to_euler(mat: np.ndarray, order: str = DEFAULT_EULER_ORDER) -> np.ndarray:
    """Matrix ``[..., 3, 3]`` to intrinsic Euler angles ``[..., 3]`` in radians."""
    flat, lead = _flat(_check_last(mat, (3, 3), "matrix"), 2)
    rot = Rotation.from_matrix(flat)
    return rot.as_euler(_check_order(order)).reshape(lead + (3,))


def quat_to_euler(quat: np.ndarray, order: str = DEFAULT_EULER_ORDER) -> np.ndarray:
    """Quaternion ``[..., 4]`` (x, y, z, w) to intrinsic Euler angles ``[..., 3]`` in radians.

    The middle angle lies within +-90 degrees (+-pi/2), the outer two within +-pi.
    """
    flat, lead = _flat(_check_last(quat, (4,), "quaternion"), 1)
    return Rotation.from_quat(flat).as_euler(_check_order(order)).reshape(lead + (3,))


def aa_to_euler(aa: np.ndarray, order: str = DEFAULT_EULER_ORDER) -> np.ndarray:
    """Axis-angle ``[..., 3]`` to intrinsic Euler angles ``[..., 3]`` in radians."""
    return mat_to_euler(aa_to_mat(aa), order)


def euler_to_aa(euler: np.ndarray, order: str = DEFAULT_EULER_ORDER) -> np.ndarray:
    """Intrinsic Euler angles ``[..., 3]`` in radians to axis-angle ``[..., 3]``."""
    return mat_to_aa(euler_to_mat(euler, order))


def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a * b`` of quaternions ``[..., 4]`` (x, y, z, w): apply b, then a."""
    a = _check_last(a, (4,), "quaternion")
    b = _check_last(b, (4,), "quaternion")
    ax, ay, az, aw = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bx, by, bz, bw = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = aw * bx + ax * bw + ay * bz - az * by
    out[..., 1] = aw * by - ax * bz + ay * bw + az * bx
    out[..., 2] = aw * bz + ax * by - ay * bx + az * bw
    out[..., 3] = aw * bw - ax * bx - ay * by - az * bz
    return out


def quat_conjugate(quat: np.ndarray) -> np.ndarray:
    """Conjugate of quaternions ``[..., 4]`` (x, y, z, w): the inverse rotation of a unit quaternion."""
    return _check_last(quat, (4,), "quaternion") * np.array([-1.0, -1.0, -1.0, 1.0])


def quat_align_hemisphere(quat: np.ndarray, axis: int = 0) -> np.ndarray:
    """Flip signs along ``axis`` (time) so neighbouring quaternions have dot >= 0.

    ``q`` and ``-q`` are the same rotation; a continuous sequence is what
    filtering and interpolation need.
    """
    q = np.moveaxis(_check_last(quat, (4,), "quaternion").copy(), axis, 0)
    if q.shape[0] < 2:
        return np.moveaxis(q, 0, axis)
    # flipping q[i] flips its dot with q[i + 1] too, so each sign is the running product of the raw ones
    dot = np.sum(q[1:] * q[:-1], axis=-1, keepdims=True)
    flips = np.cumprod(np.where(dot < 0.0, -1.0, 1.0), axis=0)
    q[1:] *= flips
    return np.moveaxis(q, 0, axis)


def quat_slerp(q0: np.ndarray, q1: np.ndarray, t: np.ndarray | float) -> np.ndarray:
    """Spherical linear interpolation between unit quaternions ``[..., 4]``.

    ``t`` broadcasts against the leading dimensions; 0 gives ``q0``, 1 gives ``q1``
    (or its negation, the same rotation), along the shorter arc.
    """
    q0 = _check_last(q0, (4,), "quaternion")
    q1 = _check_last(q1, (4,), "quaternion")
    t = np.asarray(t, dtype=np.float64)[..., None]
    dot = np.sum(q0 * q1, axis=-1, keepdims=True)
    q1 = np.where(dot < 0.0, -q1, q1)
    dot = np.clip(np.abs(dot), -1.0, 1.0)
    theta = np.arccos(dot)
    sin_theta = np.sin(theta)
    near = sin_theta < 1e-6
    safe = np.where(near, 1.0, sin_theta)
    w0 = np.where(near, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    w1 = np.where(near, t, np.sin(t * theta) / safe)
    out = w0 * q0 + w1 * q1
    return out / norm(out, keepdims=True)
