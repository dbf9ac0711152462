"""Inertialization: hide a junction by an offset that decays while the new phrase plays.

At a junction the difference between where the body was going (the previous
phrase one frame on) and where the new phrase starts, in joint rotations
(quaternions on the same hemisphere) and root position, and the difference of
their velocities, are added to the new phrase and decay to zero with a
critically damped spring. The new phrase's timing is never mixed with the old
one's, which is why feet do not slide the way they do under a cross-fade.

The decaying offset still carries the body from where the old phrase put it to
where the new one does, and a foot planted through the junction would slide
with it: :func:`hold_planted_feet` keeps such a foot where it stood, by the
post-processing's leg IK (:func:`choreo.postprocess.leg_ik.place_ankles`),
until the new phrase lifts it, and lets it go within the window.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from choreo.motion.contacts import HORIZONTAL_AXES
from choreo.motion.kinematics import chain_kinematics
from choreo.motion.leg_ik import LEG_CHAINS, place_ankles
from choreo.motion.motion import Motion
from choreo.motion.rotations import aa_to_quat, quat_multiply, quat_to_aa

__all__ = [
    "FOOT_RELEASE_S",
    "HALFLIFE_S",
    "WINDOW_HALFLIVES",
    "decay",
    "hold_planted_feet",
    "inertialize",
    "planted_weights",
    "window_frames",
]

HALFLIFE_S = 0.15
"""Time for an offset to halve, seconds."""

WINDOW_HALFLIVES = 12
"""Frames past this many half-lives after a junction get no offset (it has decayed below 1e-3)."""

FOOT_RELEASE_S = 0.2
"""A held foot is let go over this long once the new phrase has lifted it (or before the window ends)."""


def window_frames(fps: float, halflife_s: float = HALFLIFE_S) -> int:
    """Frames after a junction (the junction's own included) that inertialization changes."""
    return int(np.ceil(WINDOW_HALFLIVES * halflife_s * fps))


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
    n = min(quats.shape[0], window_frames(fps, halflife_s))
    t = np.arange(n) / fps
    offset = decay(x0, w_prev - w_new, t, halflife_s)
    out_quats = quats.copy()
    out_quats[:n] = quat_multiply(aa_to_quat(offset), quats[:n])
    r0 = prev_root[1] - root[0]
    v0 = (prev_root[1] - prev_root[0]) * fps - (root[1] - root[0]) * fps
    out_root = root.copy()
    out_root[:n] += decay(r0, v0, t, halflife_s)
    return out_quats, out_root


def planted_weights(
    planted_before: np.ndarray, contacts_after: np.ndarray, fps: float, *, halflife_s: float = HALFLIFE_S
) -> np.ndarray:
    """How firmly each foot is held after a junction, ``[F, 2]`` from 1 (held) to 0 (free).

    Parameters
    ----------
    planted_before : [2] bool, the left and right foot on the ground at the end of the old phrase
    contacts_after : [F, 2] bool, the feet on the ground in the new phrase from the junction on
    fps : frames per second

    A foot on the ground on both sides is held while the new phrase keeps it
    down and on the first frame it is up (it lifts from where it stood), then
    let go over :data:`FOOT_RELEASE_S`; it is let go by the end of the
    inertialization window at the latest, so frames past it are never changed.
    """
    n_frames = contacts_after.shape[0]
    n = min(n_frames, window_frames(fps, halflife_s))
    release = max(1, int(round(FOOT_RELEASE_S * fps)))
    frames = np.arange(n_frames)
    out = np.zeros((n_frames, 2))
    for foot in range(2):
        if n == 0 or not (planted_before[foot] and contacts_after[0, foot]):
            continue
        lifted = np.flatnonzero(~contacts_after[:n, foot])
        down_until = int(lifted[0]) if lifted.size else n
        held = np.minimum(down_until + 1 + release - frames, n - frames) / release
        out[:, foot] = np.clip(held, 0.0, 1.0) * (frames < n)
    return out


def hold_planted_feet(motion: Motion, holds: Sequence[tuple[int, np.ndarray]]) -> Motion:
    """``motion`` with the feet held where they stood at its junctions.

    Parameters
    ----------
    motion : the joined phrases
    holds : per junction, its frame and the weights ``[k, 2]`` of the frames from it on
        (:func:`planted_weights`); the spans must not overlap

    Each held ankle's target is its floor position (x, z) and its world
    orientation at the junction (so the toes do not swing about the ankle),
    with the height the phrase gives it; the leg IK bends the leg towards it
    as far as the weight says and the leg reaches. Frames whose weights are
    all zero are left as they are. All junctions are solved in one call (the
    IK works frame by frame).
    """
    spans = [(start + np.flatnonzero(w.any(axis=1)), w[w.any(axis=1)]) for start, w in holds if w.any()]
    if not spans:
        return motion
    frames = np.concatenate([f for f, _ in spans])
    weights = np.concatenate([w for _, w in spans])
    part = motion.replace(
        root_translation=motion.root_translation[frames], rotations=motion.rotations[frames]
    )
    ankles, turns = chain_kinematics(part, [part.skeleton.index(chain[2]) for chain in LEG_CHAINS])
    # each junction's own frame (weight 1), repeated over its span
    at_junction = np.repeat(np.cumsum([0] + [f.size for f, _ in spans[:-1]]), [f.size for f, _ in spans])
    targets = ankles.copy()
    for axis in HORIZONTAL_AXES:
        targets[:, :, axis] = ankles[at_junction, :, axis]
    held = place_ankles(part, targets, weights, orientations=turns[at_junction])
    rotations = motion.rotations.copy()
    rotations[frames] = held.rotations
    return motion.replace(rotations=rotations)
