"""Training losses of the dance model: rotations, joint positions, velocities, feet, energy.

Needs the ``train`` extra (torch).
"""

from __future__ import annotations

import torch

from choreo.motion.skeleton import SMPL
from engines.network.config import N_JOINTS, POSE_DIM
from engines.network.dance_net import sixd_to_matrix

__all__ = ["FOOT_JOINTS", "ForwardKinematics", "contact_mask", "dance_losses", "rotate_heading"]

FOOT_JOINTS = (7, 8, 10, 11)
"""Left and right ankle, then left and right toe (SMPL ``*_foot``)."""
_FOOT_HEIGHT_M = (0.08, 0.08, 0.05, 0.05)
_CONTACT_SPEED_M_PER_FRAME = 0.01


class ForwardKinematics(torch.nn.Module):
    """Joint positions of the SMPL skeleton from 6D local rotations, root at the origin."""

    offsets: torch.Tensor  # a buffer, so it follows the module's device

    def __init__(self) -> None:
        super().__init__()
        self.parents = list(SMPL.parents)
        self.register_buffer("offsets", torch.tensor(SMPL.offsets, dtype=torch.float32))

    def forward(self, sixd: torch.Tensor) -> torch.Tensor:
        """``[..., 24, 6]`` to positions ``[..., 24, 3]`` relative to the root joint."""
        local = sixd_to_matrix(sixd)
        world: list[torch.Tensor] = []
        pos: list[torch.Tensor] = []
        for j, p in enumerate(self.parents):
            if p < 0:
                world.append(local[..., j, :, :])
                pos.append(torch.zeros_like(local[..., j, :, 0]))
            else:
                world.append(world[p] @ local[..., j, :, :])
                pos.append(pos[p] + (world[p] @ self.offsets[j].unsqueeze(-1)).squeeze(-1))
        return torch.stack(pos, dim=-2)


def rotate_heading(feats: torch.Tensor, root_xz: torch.Tensor, angle: torch.Tensor):
    """Turn raw pose features ``[B, T, P]`` and root x, z ``[B, T, 2]`` about the vertical axis.

    ``angle [B]`` in radians. Only the root orientation (its two 6D columns), the
    horizontal velocity and the root position change.
    """
    cos, sin = torch.cos(angle)[:, None], torch.sin(angle)[:, None]

    def turn(x: torch.Tensor, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return cos * x + sin * z, -sin * x + cos * z

    out = feats.clone()
    for a, b in ((0, 2), (3, 5), (POSE_DIM - 2, POSE_DIM - 1)):
        out[..., a], out[..., b] = turn(feats[..., a], feats[..., b])
    rx, rz = turn(root_xz[..., 0], root_xz[..., 1])
    return out, torch.stack([rx, rz], dim=-1)


def world_joints(fk: ForwardKinematics, feats: torch.Tensor, root_xz: torch.Tensor) -> torch.Tensor:
    """World joint positions ``[B, T, 24, 3]`` from raw features and root x, z."""
    sixd = feats[..., : 6 * N_JOINTS].reshape(*feats.shape[:-1], N_JOINTS, 6)
    rel = fk(sixd)
    root = torch.stack([root_xz[..., 0], feats[..., 6 * N_JOINTS], root_xz[..., 1]], dim=-1)
    return rel + root.unsqueeze(-2)


def contact_mask(joints: torch.Tensor) -> torch.Tensor:
    """Frames ``[B, T, 4]`` where a foot joint is low and still (ground truth contact)."""
    feet = joints[..., FOOT_JOINTS, :]
    low = feet[..., 1] < torch.tensor(_FOOT_HEIGHT_M, device=feet.device)
    speed = torch.zeros_like(feet[..., 0])
    speed[:, 1:] = (feet[:, 1:, :, [0, 2]] - feet[:, :-1, :, [0, 2]]).norm(dim=-1)
    return (low & (speed < _CONTACT_SPEED_M_PER_FRAME)).to(feet.dtype)


def dance_losses(
    fk: ForwardKinematics,
    z: torch.Tensor,
    root: torch.Tensor,
    gt_z: torch.Tensor,
    gt_root: torch.Tensor,
    pose_mean: torch.Tensor,
    pose_std: torch.Tensor,
    fps: float,
) -> dict[str, torch.Tensor]:
    """Every reconstruction term, unweighted, as scalars.

    ``feat``: L1 on normalised features (6D rotations, height, root velocity);
    ``pos``: L1 on joint positions relative to the root, metres; ``vel``: L1 on
    joint velocities, m/s; ``root``: L1 on the root's floor position, metres;
    ``skate``: predicted horizontal foot speed (m/s) where the ground truth foot is
    planted; ``energy``: gap between predicted and true mean joint speed (m/s) per
    sequence, which punishes freezing.
    """
    feats = z * pose_std + pose_mean
    gt_feats = gt_z * pose_std + pose_mean
    joints = world_joints(fk, feats, root)
    gt_joints = world_joints(fk, gt_feats, gt_root)
    rel = joints - joints[..., :1, :]
    gt_rel = gt_joints - gt_joints[..., :1, :]
    vel = (joints[:, 1:] - joints[:, :-1]) * fps
    gt_vel = (gt_joints[:, 1:] - gt_joints[:, :-1]) * fps
    contact = contact_mask(gt_joints)[:, 1:]
    foot_speed = vel[..., FOOT_JOINTS, :][..., [0, 2]].norm(dim=-1)
    speed = vel.norm(dim=-1).mean(dim=(1, 2))
    gt_speed = gt_vel.norm(dim=-1).mean(dim=(1, 2))
    return {
        "feat": (z - gt_z).abs().mean(),
        "pos": (rel - gt_rel).abs().mean(),
        "vel": (vel - gt_vel).abs().mean(),
        "root": ((root - root[:, :1]) - (gt_root - gt_root[:, :1])).abs().mean(),
        "skate": (foot_speed * contact).sum() / contact.sum().clamp_min(1.0),
        "energy": (speed - gt_speed).abs().mean(),
    }
