"""Inertialization: hide a junction by an offset that decays while the new phrase plays.

At a junction the difference between where the body was going (the previous
phrase one frame on) and where the new phrase starts, in joint rotations
(quaternions on the same hemisphere) and root position, and the difference of
their velocities, are added to the new phrase and decay to zero with a
critically damped spring. The new phrase's timing is never mixed with the old
one's, which is why feet do not slide the way they do under a cross-fade.
"""

from __future__ import annotations

import numpy as np

from choreo.motion.rotations import aa_to_quat, quat_multiply, quat_to_aa

__all__ = ["HALFLIFE_S", "WINDOW_HALFLIVES", "decay", "inertialize"]

HALFLIFE_S = 0.15
"""Time for an offset to halve, seconds."""

WINDOW_HALFLIVES = 12
"""Frames past this many half-lives after a junction get no offset (it has decayed below 1e-3)."""


def decay(x0: np.ndarray, v0: np.ndarray, t_s: np.ndarray, halflife_s: float = HALFLIFE_S) -> np.ndarray:
    """A critically damped spring from offset ``x0`` with velocity ``v0`` towards 0, at times ``t_s``.

    Returns ``[len(t_s), *x0.shape]``; at ``t = 0`` it is ``x0`` with slope ``v0``.
    """
    y = 2.0 * np.log(2.0) / halflife_s
    t = np.asarray(t_s, dtype=np.float64).reshape(-1, *([1] * np.ndim(x0)))
    return np.exp(-y * t) * (x0 + (v0 + x0 * y) * t)


def _conj(q: np.ndarray) -> np.ndarray:
    return q * np.array([-1.0, -1.0, -1.0, 1.0])


def _log(q: np.ndarray) -> np.ndarray:
    q = np.where(q[..., 3:4] < 0.0, -q, q)
    return quat_to_aa(q)


def inertialize(
    quats: np.ndarray,
    root: np.ndarray,
    prev_quats: np.ndarray,
    prev_root: np.ndarray,
    fps: float,
    *,
    halflife_s: float = HALFLIFE_S,
) -> tuple[np.ndarray, np.ndarray]:
    """The new phrase's frames with the junction offset added and decaying.

    Parameters
    ----------
    quats, root : the new phrase from the junction on, ``[F, J, 4]`` unit quaternions (x, y, z, w)
        and ``[F, 3]`` m; frame 0 is the junction (F >= 2)
    prev_quats, prev_root : the previous phrase's last two frames *ending at the junction*
        (its frame at the junction time, one frame past where it hands over), ``[2, J, 4]`` and ``[2, 3]``
    fps : frames per second

    Returns
    -------
    (quats, root) : new arrays of the same shapes
    """
    # hemisphere-aligned offsets and angular velocities (axis-angle, per second)
    x0 = _log(quat_multiply(prev_quats[1], _conj(quats[0])))
    w_prev = _log(quat_multiply(prev_quats[1], _conj(prev_quats[0]))) * fps
    w_new = _log(quat_multiply(quats[1], _conj(quats[0]))) * fps
    # after WINDOW_HALFLIVES half-lives the offset is below a thousandth of itself: leave the rest alone
    n = min(quats.shape[0], int(np.ceil(WINDOW_HALFLIVES * halflife_s * fps)))
    t = np.arange(n) / fps
    offset = decay(x0, w_prev - w_new, t, halflife_s)
    out_quats = quats.copy()
    out_quats[:n] = quat_multiply(aa_to_quat(offset), quats[:n])
    r0 = prev_root[1] - root[0]
    v0 = (prev_root[1] - prev_root[0]) * fps - (root[1] - root[0]) * fps
    out_root = root.copy()
    out_root[:n] += decay(r0, v0, t, halflife_s)
    return out_quats, out_root
