"""The dance generator in torch: the same arithmetic as the ONNX chunk graph.

Weights are named and shaped as :func:`engines.network.config.param_shapes` says,
so :meth:`DanceNet.numpy_params` feeds :func:`choreo.model.export.export_onnx`
directly. Needs the ``train`` extra (torch).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch
from torch import nn

from engines.network.config import GUIDE_FEATURES, N_JOINTS, POSE_DIM, ModelConfig, param_shapes

__all__ = [
    "STAT_NAMES",
    "DanceNet",
    "axis_angle_to_sixd",
    "sixd_to_axis_angle",
    "sixd_to_matrix",
    "soft_clamp",
]

STAT_NAMES = ("music_mean", "music_std", "pose_mean", "pose_std")
STATE_ORDER = ("h1", "c1", "h2", "c2", "pose", "root")
SMALL_ANGLE = 1e-4


def soft_clamp(x: torch.Tensor, soft: float, hard: float) -> torch.Tensor:
    """Identity within ``soft``, a tanh knee up to ``hard`` (never reached)."""
    mag = x.abs()
    knee = hard - soft
    return torch.sign(x) * (torch.clamp(mag, max=soft) + knee * torch.tanh(torch.relu(mag - soft) / knee))


def sixd_to_matrix(sixd: torch.Tensor) -> torch.Tensor:
    """6D ``[..., 6]`` (matrix columns 0 and 1) to rotation matrices ``[..., 3, 3]`` by Gram-Schmidt."""
    a, b = sixd[..., :3], sixd[..., 3:]
    x = a / a.norm(dim=-1, keepdim=True).clamp_min(1e-8)
    b = b - (x * b).sum(-1, keepdim=True) * x
    y = b / b.norm(dim=-1, keepdim=True).clamp_min(1e-8)
    z = torch.cross(x, y, dim=-1)
    return torch.stack([x, y, z], dim=-1)


def axis_angle_to_sixd(aa: torch.Tensor) -> torch.Tensor:
    """Axis-angle ``[..., 3]`` to 6D ``[..., 6]`` (matrix columns 0 and 1) by Rodrigues, as the graph does.

    ``R = (1 - b t^2) I + a K + b v v^T`` with ``t = |v|``, ``a = sin t / t`` and
    ``b = (1 - cos t) / t^2``, both by their Taylor series below ``SMALL_ANGLE``.
    """
    t2 = (aa * aa).sum(-1, keepdim=True)
    t = t2.sqrt()
    safe = t.clamp_min(SMALL_ANGLE)
    small = t <= SMALL_ANGLE
    a = torch.where(small, 1 - t2 / 6, torch.sin(safe) / safe)
    b = torch.where(small, 0.5 - t2 / 24, 2 * torch.sin(safe / 2) ** 2 / (safe * safe))
    x, y, z = aa[..., 0:1], aa[..., 1:2], aa[..., 2:3]
    diag = 1 - b * t2
    col0 = torch.cat([diag, a * z, -a * y], dim=-1) + b * x * aa
    col1 = torch.cat([-a * z, diag, a * x], dim=-1) + b * y * aa
    return torch.cat([col0, col1], dim=-1)


@functools.lru_cache(maxsize=16)
def _quat_pick(device: torch.device, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """The quaternion pick matrices on ``device``, made once (no host copy inside a CUDA graph capture)."""
    from engines.network.quat_pick import quat_pick_matrix

    a, c = quat_pick_matrix()
    return torch.from_numpy(a).to(device, dtype), torch.from_numpy(c).to(device, dtype)


def sixd_to_axis_angle(sixd: torch.Tensor) -> torch.Tensor:
    """6D ``[..., 6]`` to axis-angle ``[..., 3]`` through Shepperd's quaternion, as the graph does."""
    mat = sixd_to_matrix(sixd)
    pick_a, pick_c = _quat_pick(sixd.device, sixd.dtype)
    kmat = mat.reshape(*mat.shape[:-2], 9) @ pick_a + pick_c
    diag = kmat[..., 0::5]  # the 4x4 diagonal: 0, 5, 10, 15
    best = diag.argmax(dim=-1)
    q = torch.gather(
        kmat.reshape(*kmat.shape[:-1], 4, 4), -2, best[..., None, None].expand(*best.shape, 1, 4)
    )
    q = q.squeeze(-2)
    q = q / q.norm(dim=-1, keepdim=True).clamp_min(1e-8)
    sign = (q[..., :1] >= 0).to(q) * 2 - 1
    w, v = q[..., :1] * sign, q[..., 1:] * sign
    s = v.norm(dim=-1, keepdim=True)
    half = torch.atan2(s, w)
    scale = torch.where(s > 1e-6, 2 * half / s.clamp_min(1e-8), 2 / w.clamp_min(1e-8))
    return v * scale


class DanceNet(nn.Module):
    """Autoregressive two-layer LSTM: music, style and slow latent in, one pose per frame out.

    Call :meth:`forward` on a chunk; ``teacher`` switches single frames to
    ground-truth feedback during training.
    """

    # Registered by name from :func:`~engines.network.config.param_shapes` (the export's names).
    music_mean: torch.Tensor
    music_std: torch.Tensor
    pose_mean: torch.Tensor
    pose_std: torch.Tensor
    enc1_w: torch.Tensor
    enc1_b: torch.Tensor
    enc2_w: torch.Tensor
    enc2_b: torch.Tensor
    l1_wx: torch.Tensor
    l1_b: torch.Tensor
    l1_wr: torch.Tensor
    l2_w: torch.Tensor
    l2_b: torch.Tensor
    out_w: torch.Tensor
    out_b: torch.Tensor

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        for name, shape in param_shapes(config).items():
            if name in STAT_NAMES:
                fill = torch.ones if name.endswith("std") else torch.zeros
                self.register_buffer(name, fill(shape))
            else:
                self.register_parameter(name, nn.Parameter(torch.empty(shape)))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Uniform in +-1/sqrt(fan_in); forget-gate biases start at 1 to remember by default."""
        h = self.config.hidden
        for p in self.parameters():
            fan_in = p.shape[0] if p.dim() == 2 else h
            nn.init.uniform_(p, -1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in))
        with torch.no_grad():
            for name in ("l1_b", "l2_b"):
                getattr(self, name)[h : 2 * h] += 1.0
            if self.config.guided:  # a guided model starts by performing its guide exactly
                self.out_w.zero_()
                self.out_b.zero_()

    def set_stats(self, stats: dict[str, np.ndarray]) -> None:
        """Store the feature normalisation (it travels inside the exported graph)."""
        for name in STAT_NAMES:
            getattr(self, name).copy_(torch.as_tensor(np.asarray(stats[name], dtype=np.float32)))

    def initial_state(self, batch: int, device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
        """Zeros: the start of ``batch`` dances."""
        return {n: torch.zeros(batch, *s, device=device) for n, s in self.config.state_shapes.items()}

    def slow_latent(self, latent: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """Unit-variance AR(1) filter of the i.i.d. latent, ``[B, T, Z]``."""
        a = self.config.latent_decay
        frames = latent.shape[1]
        idx = torch.arange(frames, device=latent.device, dtype=latent.dtype)
        diff = idx[:, None] - idx[None, :]
        filt = (diff >= 0).to(latent) * torch.exp(torch.relu(diff) * math.log(a)) * math.sqrt(1 - a * a)
        carry = torch.exp((idx + 1) * math.log(a))[:, None] * state[:, None, :]
        return filt @ latent + carry

    def encode(self, music: torch.Tensor, style: torch.Tensor, slow: torch.Tensor) -> torch.Tensor:
        """Per-frame conditioning to the first LSTM layer's input gates, ``[B, T, 4H]``.

        ``style`` is the one-hot style, or for a guided model the guide's
        normalised 6D and height and the junction features side by side.
        """
        cond = torch.cat([(music - self.music_mean) / self.music_std, style, slow], dim=-1)
        enc = torch.relu(cond @ self.enc1_w + self.enc1_b)
        enc = torch.relu(enc @ self.enc2_w + self.enc2_b)
        return enc @ self.l1_wx + self.l1_b

    def guide_inputs(
        self, guide: torch.Tensor, junction: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """A guide in the contract's layout ``[B, T, 75]`` and its junction times ``[B, T, 2]`` (s).

        Returns the guide's normalised pose features ``[B, T, P]`` (its root
        correction slots zero), its root floor position ``[B, T, 2]`` and the
        junction features ``exp(-seconds / junction_time_s)`` ``[B, T, 2]``.
        """
        sixd = axis_angle_to_sixd(guide[..., : 3 * N_JOINTS].reshape(*guide.shape[:-1], N_JOINTS, 3))
        feats = torch.cat([sixd.reshape(*guide.shape[:-1], 6 * N_JOINTS), guide[..., 73:74]], dim=-1)
        return self.guide_features(feats), guide[..., 72::2], self.junction_features(junction)  # root x, z

    def guide_features(self, feats: torch.Tensor) -> torch.Tensor:
        """Raw guide features ``[B, T, 145]`` (6D, height) to normalised ``[B, T, P]``, corrections zero."""
        norm = (feats - self.pose_mean[:GUIDE_FEATURES]) / self.pose_std[:GUIDE_FEATURES]
        return torch.cat([norm, torch.zeros_like(norm[..., : POSE_DIM - GUIDE_FEATURES])], dim=-1)

    def junction_features(self, junction: torch.Tensor) -> torch.Tensor:
        """Seconds since and to a junction to ``exp(-seconds / junction_time_s)``: 1 at a junction."""
        return torch.exp(torch.relu(junction) * (-1.0 / self.config.junction_time_s))

    def _cell(self, gates: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.config.hidden
        i, f, o = torch.sigmoid(gates[..., : 3 * h]).split(h, dim=-1)
        c_new = f * c + i * torch.tanh(gates[..., 3 * h :])
        return o * torch.tanh(c_new), c_new

    def compile_steps(self) -> None:
        """Compile the per-frame steps with ``torch.compile``: a chunk repeats its step T times, and the
        compiled step's kernels are fused (1.56x the frames a second at 64 songs on an H200, 1.16x at
        256; compiled on first call, a few seconds). Inference only."""
        # One compiled variant per batch bucket and chunk length (nine buckets up to 256 songs).
        torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, 32)
        # Rebinding the methods on this instance keeps one definition of each step's arithmetic.
        self.step = torch.compile(self.step, dynamic=False)  # type: ignore[method-assign]
        self.guided_step = torch.compile(self.guided_step, dynamic=False)  # type: ignore[method-assign]

    def step(self, g1x: torch.Tensor, state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """One frame; returns the new state (``pose`` and ``root`` are the frame's output)."""
        fb = torch.cat([state["h1"], state["pose"], state["root"]], dim=-1)
        h1, c1, h2, c2, z = self._layers(fb, g1x, state)
        vel = z[..., POSE_DIM - 2 :] * self.pose_std[POSE_DIM - 2 :] + self.pose_mean[POSE_DIM - 2 :]
        root = soft_clamp(state["root"] + vel, self.config.floor_soft_m, self.config.floor_hard_m)
        return {"h1": h1, "c1": c1, "h2": h2, "c2": c2, "pose": z, "root": root}

    def guided_step(
        self, g1x: torch.Tensor, guide: torch.Tensor, state: dict[str, torch.Tensor]
    ) -> dict[str, torch.Tensor]:
        """One frame of the guided model: the guide's normalised features plus the predicted correction."""
        fb = torch.cat([state["h1"], state["pose"]], dim=-1)
        h1, c1, h2, c2, z = self._layers(fb, g1x, state)
        return {"h1": h1, "c1": c1, "h2": h2, "c2": c2, "pose": guide + z}

    def _layers(self, fb: torch.Tensor, g1x: torch.Tensor, state: dict[str, torch.Tensor]):
        h1, c1 = self._cell(fb @ self.l1_wr + g1x, state["c1"])
        h2, c2 = self._cell(torch.cat([h1, state["h2"]], dim=-1) @ self.l2_w + self.l2_b, state["c2"])
        return h1, c1, h2, c2, h2 @ self.out_w + self.out_b

    def perform(
        self,
        music: torch.Tensor,
        guide: torch.Tensor,
        guide_xz: torch.Tensor,
        junction: torch.Tensor,
        latent: torch.Tensor,
        state: dict[str, torch.Tensor],
        teacher: tuple[torch.Tensor, list[bool] | torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
        """Run a chunk of the guided model over prepared guide inputs (see :meth:`guide_inputs`).

        Parameters
        ----------
        music, latent : ``[B, T, ·]`` raw features and i.i.d. noise
        guide, guide_xz, junction : normalised guide features ``[B, T, P]``, the
            guide's root floor position ``[B, T, 2]`` and the junction features ``[B, T, 2]``
        state : as from :meth:`initial_state` or a previous chunk
        teacher : as in :meth:`forward`, or with ``use`` a ``[B, T]`` bool tensor
            (each window its own teacher-forced frames)

        Returns
        -------
        z : ``[B, T, P]`` normalised output features; root : ``[B, T, 2]`` root x, z in
        metres (the guide's plus the correction); state : the state after the chunk
        """
        slow = self.slow_latent(latent, state["latent"])
        cond = torch.cat([guide[..., :GUIDE_FEATURES], junction], dim=-1)
        g1x = self.encode(music, cond, slow)
        cur = {n: state[n] for n in STATE_ORDER if n in state and n != "latent"}
        zs = []
        for t in range(music.shape[1]):
            if teacher is not None and isinstance(teacher[1], torch.Tensor):
                fed = torch.where(teacher[1][:, t, None], teacher[0][:, t], cur["pose"])
                cur = {**cur, "pose": fed}
            elif teacher is not None and teacher[1][t]:
                cur = {**cur, "pose": teacher[0][:, t].contiguous()}
            cur = self.guided_step(g1x[:, t], guide[:, t], cur)
            zs.append(cur["pose"])
        z = torch.stack(zs, dim=1)
        root = guide_xz + self.denormalise(z)[..., GUIDE_FEATURES:]
        return z, root, {**cur, "latent": slow[:, -1]}

    def run_chunk(
        self, inputs: dict[str, torch.Tensor], state: dict[str, torch.Tensor]
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The engine contract in torch: named per-frame inputs in, ``poses [B, T, 75]`` and state out."""
        if self.config.guided:
            guide, guide_xz, junction = self.guide_inputs(inputs["guide"], inputs["junction"])
            z, root, state = self.perform(inputs["music"], guide, guide_xz, junction, inputs["latent"], state)
        else:
            z, root, state = self(inputs["music"], inputs["style"], inputs["latent"], state)
        return self.poses(z, root), state

    def forward(
        self,
        music: torch.Tensor,
        style: torch.Tensor,
        latent: torch.Tensor,
        state: dict[str, torch.Tensor],
        teacher: tuple[torch.Tensor, list[bool] | torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
        """Run a chunk.

        Parameters
        ----------
        music, style, latent : ``[B, T, ·]`` raw features, one-hot style, i.i.d. noise
        state : as from :meth:`initial_state` or a previous chunk
        teacher : optional ``(prev_pose [B, T, P], use [T])``: where ``use[t]`` is true,
            frame ``t`` sees the given previous pose (normalised features) instead of
            its own last output; the root position is always the model's own, so
            that it stays consistent with the floor bound

        Returns
        -------
        z : ``[B, T, P]`` normalised pose features; root : ``[B, T, 2]`` root x, z in
        metres; state : the state after the chunk
        """
        slow = self.slow_latent(latent, state["latent"])
        g1x = self.encode(music, style, slow)
        cur = {n: state[n] for n in STATE_ORDER}
        zs, roots = [], []
        for t in range(music.shape[1]):
            if teacher is not None and teacher[1][t]:
                cur = {**cur, "pose": teacher[0][:, t].contiguous()}
            cur = self.step(g1x[:, t], cur)
            zs.append(cur["pose"])
            roots.append(cur["root"])
        out_state = {**cur, "latent": slow[:, -1]}
        return torch.stack(zs, dim=1), torch.stack(roots, dim=1), out_state

    def denormalise(self, z: torch.Tensor) -> torch.Tensor:
        """Normalised features back to raw pose features (6D, height, velocity)."""
        return z * self.pose_std + self.pose_mean

    def poses(self, z: torch.Tensor, root: torch.Tensor) -> torch.Tensor:
        """The contract's ``[B, T, 75]`` frames: axis-angle rotations then root x, y, z."""
        feat = self.denormalise(z)
        sixd = feat[..., : 6 * N_JOINTS].reshape(*feat.shape[:-1], N_JOINTS, 6)
        aa = sixd_to_axis_angle(sixd).reshape(*feat.shape[:-1], 3 * N_JOINTS)
        height = feat[..., 6 * N_JOINTS : 6 * N_JOINTS + 1]
        return torch.cat([aa, root[..., :1], height, root[..., 1:]], dim=-1)

    def numpy_params(self) -> dict[str, np.ndarray]:
        """Weights and constants as float32 arrays, named for :func:`~choreo.model.export.export_onnx`."""
        out = {n: p.detach().cpu().numpy().astype(np.float32) for n, p in self.named_parameters()}
        out.update({n: getattr(self, n).detach().cpu().numpy().astype(np.float32) for n in STAT_NAMES})
        return out
