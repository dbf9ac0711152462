"""Training windows and losses of the guided model: learned inertialization.

The guided model (``ModelConfig(guided=True)``) performs a choreography plan:
its guide jumps at every junction between two phrases, and the network must
carry the dance smoothly across the jump and then follow the new phrase. Real
junctions with a known right answer do not exist, so each training window
makes one: a real clip window ``X`` with a junction at frame ``j``, whose
guide before ``j`` is a perturbed past (another window of the data, or the
same clip ``k`` frames later, turned and moved to meet ``X`` at the junction,
or ``X`` itself so that a junction need not be a jump) and after ``j`` is
``X``. Before the junction the network is fed the guide as its own past (it
"has danced" the perturbed phrase); from ``j`` it runs on its own output.

With ``halflife_s`` the guide after the junction is what the blend
synthesizer's guide is there: ``X`` plus the junction's offset in pose and
velocity decaying like :func:`choreo.choreography.inertialize.decay` (on the
6D rotations, the height and the root), so that the network learns on the
guides it is given at generation time; without it the guide jumps to ``X``.

The reconstruction loss is only against the real motion ``X`` after the
junction, never against the other phrase, so the network cannot learn to
ignore its guide. Positions are weighted in over ``ramp_frames`` after the
junction while velocities, accelerations and jerks count from the first frame,
so the right answer is a smooth transition from the perturbed past into ``X``.
Needs torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from choreo.model.losses import FOOT_JOINTS, ForwardKinematics, contact_mask, rotate_heading, world_joints
from engines.network.config import GUIDE_FEATURES
from engines.network.dance_net import DanceNet

__all__ = ["JunctionWindows", "heading_yaw", "inertialization_losses", "make_junctions"]

MODES = ("other", "later", "none")
"""Kinds of perturbed past: another window, the same clip later, no perturbation."""


@dataclass
class JunctionWindows:
    """One batch of training windows with their made junction (all ``[B, W, ·]`` unless said).

    ``target_feats`` / ``target_root``: the real motion ``X`` (raw pose features,
    root x, z); ``guide``: the normalised guide features the network reads,
    ``guide_xz`` its root; ``teacher``: the normalised past fed back before the
    junction; ``junction``: the junction features; ``weight``: per-frame loss
    weight of positions ``[B, W]`` (zero before the junction); ``after``: frames
    at or after the junction ``[B, W]``; ``past_feats`` / ``past_root``: the
    guide's two frames before the junction ``[B, 2, ·]``, what the network was
    told it danced, for the velocity and acceleration at the junction;
    ``first``: the junction frame per window ``[B]``.
    """

    target_feats: torch.Tensor
    target_root: torch.Tensor
    guide: torch.Tensor
    guide_xz: torch.Tensor
    teacher: torch.Tensor
    junction: torch.Tensor
    weight: torch.Tensor
    after: torch.Tensor
    past_feats: torch.Tensor
    past_root: torch.Tensor
    first: torch.Tensor


def heading_yaw(feats: torch.Tensor) -> torch.Tensor:
    """Yaw (radians about +Y) of the root's forward axis from raw pose features ``[..., P]``."""
    x, y = feats[..., 0:3], feats[..., 3:6]
    forward = torch.cross(x, y, dim=-1)
    return torch.atan2(forward[..., 0], forward[..., 2])


def make_junctions(
    net: DanceNet,
    feats: torch.Tensor,
    root: torch.Tensor,
    rng: np.random.Generator,
    *,
    junction_range: tuple[int, int],
    ramp_frames: int,
    start_prob: float,
    fps: int,
    halflife_s: float | None = None,
) -> JunctionWindows:
    """Make one junction per window of real motion ``feats [B, W, P]``, ``root [B, W, 2]``.

    Each window draws its junction frame in ``junction_range`` and a mode from
    :data:`MODES`; with ``start_prob`` the window is a dance's start instead
    (junction at frame 0, the zero state as the past). With ``halflife_s`` the
    guide after the junction is inertialized from the past (the module docstring).
    """
    batch, window = feats.shape[:2]
    device = feats.device
    lo, hi = junction_range
    j = rng.integers(lo, hi + 1, batch)
    mode = rng.choice(len(MODES), batch, p=[0.55, 0.3, 0.15])
    later = rng.integers(8, 40, batch)
    at_start = rng.random(batch) < start_prob
    j = np.where(at_start, 0, j)
    mode = np.where(at_start, MODES.index("none"), mode)
    later = np.minimum(later, window - 1 - j)
    src = np.arange(batch)
    other = (src + 1 + rng.integers(0, batch - 1, batch)) % batch
    t = np.arange(window)
    past_idx = np.where(
        (mode == MODES.index("later"))[:, None], np.minimum(t[None] + later[:, None], window - 1), t[None]
    )
    past_row = np.where((mode == MODES.index("other"))[:, None], other[:, None], src[:, None])
    past_row_t = torch.from_numpy(past_row).to(device)
    past_idx_t = torch.from_numpy(past_idx).to(device)
    past = feats[past_row_t, past_idx_t]
    past_root = root[past_row_t, past_idx_t]

    # Turn and move the past so that it meets X at the junction (as the guide's phrases meet).
    meet = torch.from_numpy(np.maximum(j - 1, 0)).to(device)
    rows = torch.arange(batch, device=device)
    turn = heading_yaw(feats[rows, meet]) - heading_yaw(past[rows, meet])
    turn = turn + torch.from_numpy(rng.normal(0.0, 0.2, batch).astype(np.float32)).to(device)
    turn = torch.where(torch.from_numpy(mode == MODES.index("none")).to(device), torch.zeros_like(turn), turn)
    past, past_root = rotate_heading(past, past_root, turn)
    shift = root[rows, meet] - past_root[rows, meet]
    past_root = past_root + shift[:, None]

    before = torch.from_numpy(t[None] < j[:, None]).to(device)
    after_feats, after_root = feats, root
    if halflife_s is not None:
        after_feats, after_root = _inertialized(feats, root, past, past_root, j, fps, halflife_s)
    guide_feats = torch.where(before[..., None], past, after_feats)
    guide_xz = torch.where(before[..., None], past_root, after_root)
    guide = net.guide_features(guide_feats[..., :GUIDE_FEATURES])
    teacher = torch.cat([guide[:, :1], guide[:, :-1]], dim=1)
    if at_start.any():
        teacher[torch.from_numpy(at_start).to(device), 0] = 0.0

    secs = torch.from_numpy(t / fps).float().to(device)[None]
    j_s = torch.from_numpy(j / fps).float().to(device)[:, None]
    prev_gap = torch.from_numpy(rng.uniform(0.5, 4.0, batch)).float().to(device)[:, None]
    next_at = torch.from_numpy((window + rng.integers(0, 90, batch)) / fps).float().to(device)[:, None]
    since = torch.where(before, secs + prev_gap, secs - j_s)
    until = torch.where(before, j_s - secs, next_at - secs)
    junction = net.junction_features(torch.stack([since, until], dim=-1))

    after_frames = torch.from_numpy(t[None] - j[:, None]).to(device)
    after = after_frames >= 0
    weight = torch.clamp((after_frames + 1).float() / ramp_frames, 0.0, 1.0) ** 2 * after
    return JunctionWindows(
        target_feats=feats,
        target_root=root,
        guide=guide,
        guide_xz=guide_xz,
        teacher=teacher,
        junction=junction,
        weight=weight,
        after=after,
        past_feats=guide_feats,
        past_root=guide_xz,
        first=torch.from_numpy(j).to(device),
    )


def inertialization_losses(
    fk: ForwardKinematics, net: DanceNet, w: JunctionWindows, z: torch.Tensor, root: torch.Tensor, fps: int
) -> dict[str, torch.Tensor]:
    """Losses against the real motion after the junction, unweighted, as scalars.

    ``feat``: L1 on normalised 6D and height; ``pos``: L1 on root-relative joint
    positions (m); ``root``: L1 on the root's floor position (m), all ramped in
    after the junction; ``vel``, ``acc`` and ``jerk``: L1 on world joint velocity
    (m/s), acceleration (m/s^2) and jerk (m/s^3) from the junction on, of the
    motion as shown (the guide's past before the junction, the output from it);
    ``skate``: foot speed (m/s) where the real foot is planted. ``dev_cm``: mean
    joint distance (cm) from the real motion once the ramp is done (a report,
    not a loss term).
    """
    feats = net.denormalise(z)
    joints = world_joints(fk, feats, root)
    gt_joints = world_joints(fk, w.target_feats, w.target_root)
    past_joints = world_joints(fk, w.past_feats, w.past_root)
    gt_z = (w.target_feats - net.pose_mean) / net.pose_std
    weight = w.weight
    wsum = weight.sum().clamp_min(1.0)
    rel = joints - joints[..., :1, :]
    gt_rel = gt_joints - gt_joints[..., :1, :]
    feat = ((z - gt_z)[..., :GUIDE_FEATURES].abs().mean(-1) * weight).sum() / wsum
    pos = ((rel - gt_rel).abs().mean(dim=(-1, -2)) * weight).sum() / wsum
    root_err = ((root - w.target_root).abs().mean(-1) * weight).sum() / wsum
    shown = torch.where(w.after[..., None, None], joints, past_joints)
    frames = z.shape[1]
    # each difference needs its frames from the window: velocity from frame 1, jerk from frame 3
    counted = w.after & (torch.arange(frames, device=z.device)[None] >= 3)
    csum = counted.sum().clamp_min(1)
    errors = {}
    for name, order in (("vel", 1), ("acc", 2), ("jerk", 3)):
        diff = (_difference(shown, order) - _difference(gt_joints, order)) * fps**order
        errors[name] = (diff.abs().mean(dim=(-1, -2)) * counted).sum() / csum
    vel = _difference(shown, 1) * fps
    contact = contact_mask(gt_joints) * weight[..., None]
    foot_speed = vel[..., FOOT_JOINTS, :][..., [0, 2]].norm(dim=-1)
    skate = (foot_speed * contact).sum() / contact.sum().clamp_min(1.0)
    settled = (weight >= 1.0).float()
    dev = (joints - gt_joints).norm(dim=-1).mean(-1)
    dev_cm = 100 * (dev * settled).sum() / settled.sum().clamp_min(1.0)
    return {
        "feat": feat,
        "pos": pos,
        "root": root_err,
        "vel": errors["vel"],
        "acc": errors["acc"],
        "jerk": errors["jerk"],
        "skate": skate,
        "dev_cm": dev_cm,
    }


def _difference(x: torch.Tensor, order: int) -> torch.Tensor:
    """The ``order``-th backward difference along axis 1, the first frames repeated (per frame, not per s)."""
    for _ in range(order):
        x = x - _shift(x, 1)
    return x


def _inertialized(
    feats: torch.Tensor,
    root: torch.Tensor,
    past: torch.Tensor,
    past_root: torch.Tensor,
    j: np.ndarray,
    fps: int,
    halflife_s: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``feats``/``root`` with the offset from ``past`` at each window's junction ``j`` decaying after it.

    As the blend's guide: the offset between where the past is going (its frame
    at ``j``) and ``X`` at ``j``, and between their velocities, decay by a
    critically damped spring of ``halflife_s``. Frames before ``j`` are unchanged.
    """
    batch, window = feats.shape[:2]
    device = feats.device
    rows = torch.arange(batch, device=device)
    at = torch.from_numpy(j).to(device)
    prev = torch.clamp(at - 1, min=0)
    nxt = torch.clamp(at + 1, max=window - 1)
    shown = torch.cat([feats[..., :GUIDE_FEATURES], root], dim=-1)
    was = torch.cat([past[..., :GUIDE_FEATURES], past_root], dim=-1)
    x0 = was[rows, at] - shown[rows, at]
    v0 = (was[rows, at] - was[rows, prev]) * fps - (shown[rows, nxt] - shown[rows, at]) * fps
    t_s = (torch.arange(window, device=device)[None] - at[:, None]).clamp_min(0).float() / fps
    y = 2.0 * math.log(2.0) / halflife_s
    t = t_s[..., None]
    offset = torch.exp(-y * t) * (x0[:, None] + (v0[:, None] + x0[:, None] * y) * t)
    moved = shown + offset
    out = feats.clone()
    out[..., :GUIDE_FEATURES] = moved[..., :GUIDE_FEATURES]
    return out, moved[..., GUIDE_FEATURES:]


def _shift(x: torch.Tensor, k: int) -> torch.Tensor:
    """``x`` delayed by ``k`` frames along axis 1, the first frame repeated."""
    return torch.cat([x[:, :1].expand(-1, k, *x.shape[2:]), x[:, :-k]], dim=1)
