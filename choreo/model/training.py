"""Train the dance model: seeded, resumable, logged, on a GPU where there is one.

Recipe (see ``docs/model.md``): conditional VAE around the autoregressive
LSTM. A training-only posterior encoder infers the per-frame latent noise that
explains each ground-truth window (KL to the standard normal that a seed
supplies at generation time). Feedback follows a curriculum in the spirit of
auto-conditioned LSTMs: after a teacher-forced burn-in, the model is fed its
own output for stretches that grow from a few frames to whole windows, with
short ground-truth stretches between them (noisy, to teach recovery).

A guided model (``model.guided``) is trained instead as learned
inertialization over made junctions (:mod:`choreo.model.inertialization`):
no posterior (the latent comes from the prior), one junction per window,
losses only against the real motion after it.

Outputs in ``out_dir``: ``checkpoint.pt`` (resumable), ``weights.npz`` and
``config.json`` (what :func:`choreo.model.export.export_onnx` needs, no torch),
``log.jsonl`` (one row per logged step and per evaluation) and
``summary.json`` (time, device, steps, final metrics). Needs torch.
"""

from __future__ import annotations

import json
import math
import operator
import os
import platform
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import reduce
from pathlib import Path
from typing import Any

import numpy as np
import torch

from choreo.errors import ParameterError
from choreo.files import atomic_path
from choreo.model.data import DanceSet, load_split, normalisation_stats
from choreo.model.inertialization import inertialization_losses, make_junctions
from choreo.model.losses import ForwardKinematics, dance_losses, rotate_heading, world_joints
from choreo.model.posterior import PosteriorEncoder
from engines.network.config import GUIDE_FEATURES, ModelConfig
from engines.network.dance_net import DanceNet, soft_clamp

__all__ = ["TrainConfig", "train"]


@dataclass
class TrainConfig:
    """Everything that decides a training run; saved with the weights.

    ``prior_prob``: share of windows whose latent is drawn from the prior instead of
    the posterior, so that the decoder must also dance from music and style alone
    (as it does at generation time) rather than read everything from the latent.
    ``init_from``: a checkpoint whose network (and posterior) weights start the run.
    ``compile_step``: on a GPU, compile the one-frame step with ``torch.compile``
    (falls back to eager execution if compiling fails).
    ``junction_min``/``junction_max``/``ramp_frames``/``correction_std_m``/``w_acc``/``w_jerk``:
    the guided model's made junctions (frame range in the window), how many frames
    after a junction its positions are weighted in over, the scale of its root
    correction, and the weights of its acceleration and jerk losses.
    ``junction_halflife_s``: if set, the guide after a made junction is inertialized
    from the past with this half-life, as the blend's guide is (else it jumps).
    ``time_budget_s``: if set, the number of steps is fitted to this budget after
    timing steps 10 to 40 (the fitted number is what the saved config records,
    so a rerun with that config repeats the run).
    """

    seed: int = 0
    steps: int = 3000
    batch: int = 128
    window: int = 180
    burn_in: int = 20
    lr: float = 1e-3
    lr_final: float = 5e-5
    warmup_steps: int = 100
    grad_clip: float = 1.0
    teacher_noise: float = 0.1
    music_noise: float = 0.05
    seq_start_prob: float = 0.2
    free_run_prob: float = 0.25
    kl_weight: float = 0.01
    prior_prob: float = 0.0
    free_bits: float = 0.02
    w_feat: float = 1.0
    w_pos: float = 4.0
    w_vel: float = 0.5
    w_root: float = 0.5
    w_skate: float = 1.0
    w_energy: float = 1.0
    log_every: int = 25
    eval_every: int = 250
    checkpoint_every: int = 250
    eval_batch: int = 64
    eval_rollout_frames: int = 1800
    junction_min: int = 12
    junction_max: int = 48
    ramp_frames: int = 10
    correction_std_m: float = 0.02
    w_acc: float = 0.02
    w_jerk: float = 0.0
    junction_halflife_s: float | None = None
    time_budget_s: float | None = None
    device: str = "auto"
    compile_step: bool = True
    init_from: str | None = None
    model: ModelConfig = field(default_factory=ModelConfig)

    @classmethod
    def from_dict(cls, values: dict) -> TrainConfig:
        """From parsed JSON; unknown keys are an error that names them."""
        values = dict(values)
        unknown = set(values) - set(cls.__dataclass_fields__)
        if unknown:
            raise ParameterError(f"unknown training config keys: {sorted(unknown)}")
        model = ModelConfig.from_dict(values.pop("model", {}))
        return cls(**values, model=model)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["model"] = json.loads(self.model.to_json())
        return out


class _Split:
    """One split on the training device, with window sampling."""

    def __init__(
        self, data: DanceSet, stats: dict[str, np.ndarray], window: int, device: torch.device
    ) -> None:
        self.window = window
        self.device = device
        self.feats = torch.from_numpy(data.features).to(device)
        self.root = torch.from_numpy(data.root_xz).to(device)
        self.music = torch.from_numpy(data.music).to(device)
        style_frame = np.repeat(data.styles, data.lengths)
        self.style = torch.from_numpy(style_frame).to(device)
        self.seq_start = torch.from_numpy(np.repeat(data.offsets, data.lengths)).to(device)
        starts, first = [], []
        for off, length in zip(data.offsets, data.lengths, strict=True):
            if length >= window:
                starts.append(np.arange(off, off + length - window + 1))
                first.append(off)
        if not starts:
            raise ParameterError(f"no sequence is as long as the training window ({window} frames)")
        self.starts = torch.from_numpy(np.concatenate(starts)).to(device)
        self.firsts = torch.from_numpy(np.array(first)).to(device)
        self.n_styles = 4

    def batch(self, size: int, gen: torch.Generator, seq_start_prob: float) -> dict[str, torch.Tensor]:
        """Windows ``[B, W]`` with their previous frame, headings turned at random."""
        pick = torch.randint(len(self.starts), (size,), generator=gen).to(self.device)
        first = torch.randint(len(self.firsts), (size,), generator=gen).to(self.device)
        at_start = (torch.rand(size, generator=gen) < seq_start_prob).to(self.device)
        start = torch.where(at_start, self.firsts[first], self.starts[pick])
        angle = (torch.rand(size, generator=gen) * 2 * math.pi).to(self.device)
        return self.windows(start, angle)

    def windows(self, start: torch.Tensor, angle: torch.Tensor) -> dict[str, torch.Tensor]:
        idx = start[:, None] + torch.arange(self.window, device=self.device)[None]
        is_first = start == self.seq_start[start]
        prev = torch.where(is_first, start, start - 1)
        feats, root = rotate_heading(self.feats[idx], self.root[idx], angle)
        prev_feats, prev_root = rotate_heading(self.feats[prev][:, None], self.root[prev][:, None], angle)
        style = torch.nn.functional.one_hot(self.style[idx], self.n_styles).float()
        return {
            "feats": feats,
            "root": root,
            "prev_feats": prev_feats[:, 0],
            "prev_root": prev_root[:, 0],
            "is_first": is_first,
            "music": self.music[idx],
            "style": style,
        }


def _feedback_schedule(
    window: int, burn_in: int, progress: float, rng: np.random.Generator, free: bool
) -> list[bool]:
    """Which frames see ground truth (True) rather than the model's own last output."""
    use = [False] * window
    use[0] = True
    for t in range(min(burn_in, window)):
        use[t] = True
    if free:
        return use
    self_len = 4 + progress * 80.0
    gt_len = max(1.0, 8.0 * (1.0 - progress))
    t = burn_in
    while t < window:
        t += int(rng.integers(max(1, int(self_len * 0.5)), int(self_len * 1.5) + 2))
        g = int(rng.integers(1, int(gt_len) + 2))
        for k in range(t, min(window, t + g)):
            use[k] = True
        t += g
    return use


def _lr_at(step: int, cfg: TrainConfig) -> float:
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    frac = min(1.0, (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps))
    return cfg.lr_final + 0.5 * (cfg.lr - cfg.lr_final) * (1 + math.cos(math.pi * frac))


def _resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def _device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"CPU ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)"


class _Run:
    """The model, its optimiser and the step function of one training run.

    The styled model's run: a posterior encoder infers the latent, the network's
    per-frame ``step`` is what runs (compiled on a GPU). :class:`_GuidedRun` changes
    what a training step computes and which losses it weighs; the optimiser step,
    the compiling and the evaluations' eager step are these.
    """

    step_name = "step"
    """The network's per-frame method that ``torch.compile`` wraps."""

    def __init__(self, cfg: TrainConfig, stats: dict[str, np.ndarray], device: torch.device) -> None:
        self.cfg = cfg
        self.device = device
        torch.manual_seed(cfg.seed)
        self.net = DanceNet(cfg.model).to(device)
        self.net.set_stats(stats)
        self.posterior = self.new_posterior()
        self.fk = ForwardKinematics().to(device)
        self.params = list(self.net.parameters()) + list(self.posterior.parameters())
        self.opt = torch.optim.Adam(self.params, lr=cfg.lr)
        self.eager_step: Callable[..., dict[str, torch.Tensor]] = getattr(self.net, self.step_name)
        self.compiled = False
        if cfg.compile_step and device.type == "cuda":
            _use_step(self.net, self.step_name, torch.compile(self.eager_step, dynamic=False))
            self.compiled = True

    def new_posterior(self) -> torch.nn.Module:
        """The encoder that infers each window's latent (trained beside the network)."""
        return PosteriorEncoder(self.cfg.model).to(self.device)

    def uncompile(self, reason: BaseException) -> None:
        """Give up on the compiled step (it failed); training goes on eagerly."""
        print(f"torch.compile failed, training without it: {type(reason).__name__}: {reason}", flush=True)
        _use_step(self.net, self.step_name, self.eager_step)
        self.compiled = False

    @contextmanager
    def eager(self) -> Iterator[None]:
        """The eager per-frame step for an evaluation, then the compiled one again."""
        compiled_step = getattr(self.net, self.step_name)
        _use_step(self.net, self.step_name, self.eager_step)
        try:
            yield
        finally:
            _use_step(self.net, self.step_name, compiled_step)

    def normalise(self, feats: torch.Tensor) -> torch.Tensor:
        return (feats - self.net.pose_mean) / self.net.pose_std

    def rollout(self, b: dict[str, torch.Tensor], use: list[bool], latent: torch.Tensor, noise: float):
        """Run the window with the given feedback schedule; returns ``(z, root, gt_z)``."""
        gt_z = self.normalise(b["feats"])
        prev_z = torch.cat([self.normalise(b["prev_feats"])[:, None], gt_z[:, :-1]], dim=1)
        prev_z[:, 0] = torch.where(b["is_first"][:, None], torch.zeros_like(prev_z[:, 0]), prev_z[:, 0])
        if noise > 0:
            prev_z = prev_z + noise * torch.randn_like(prev_z)
        state = self.net.initial_state(gt_z.shape[0], self.device)
        model_cfg = self.cfg.model
        state["root"] = soft_clamp(b["prev_root"], model_cfg.floor_soft_m, model_cfg.floor_hard_m)
        z, root, _ = self.net(b["music"], b["style"], latent, state, teacher=(prev_z, use))
        return z, root, gt_z

    def losses(self, b, z, root, gt_z) -> dict[str, torch.Tensor]:
        return dance_losses(
            self.fk,
            z,
            root,
            gt_z,
            b["root"],
            self.net.pose_mean,
            self.net.pose_std,
            self.cfg.model.native_fps,
        )

    def loss_weights(self) -> dict[str, float]:
        """Each loss term's weight in the total, in the order they are added."""
        c = self.cfg
        return {
            "feat": c.w_feat,
            "pos": c.w_pos,
            "vel": c.w_vel,
            "root": c.w_root,
            "skate": c.w_skate,
            "energy": c.w_energy,
            "kl": c.kl_weight,
        }

    def optimise(self, parts: dict[str, torch.Tensor], step: int) -> dict[str, float]:
        """One optimiser step on the weighted loss terms at the step's learning rate; the row to log."""
        cfg = self.cfg
        loss = reduce(operator.add, (w * parts[k] for k, w in self.loss_weights().items()))
        for group in self.opt.param_groups:
            group["lr"] = _lr_at(step, cfg)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        grad = torch.nn.utils.clip_grad_norm_(self.params, cfg.grad_clip)
        self.opt.step()
        out = {k: float(v.detach()) for k, v in parts.items()}
        out.update(loss=float(loss.detach()), grad_norm=float(grad), lr=_lr_at(step, cfg))
        return out

    def train_step(self, b, step: int, rng: np.random.Generator) -> dict[str, float]:
        cfg = self.cfg
        progress = step / max(1, cfg.steps)
        free = bool(rng.random() < cfg.free_run_prob * progress)
        use = _feedback_schedule(cfg.window, cfg.burn_in, progress, rng, free)
        music = b["music"] + cfg.music_noise * torch.randn_like(b["music"]) * self.net.music_std
        b = {**b, "music": music}
        mean, logvar = self.posterior(
            self.normalise(b["feats"]), (b["music"] - self.net.music_mean) / self.net.music_std
        )
        latent = mean + torch.exp(0.5 * logvar) * torch.randn_like(mean)
        if cfg.prior_prob > 0:
            from_prior = torch.rand(latent.shape[0], 1, 1, device=latent.device) < cfg.prior_prob
            latent = torch.where(from_prior, torch.randn_like(latent), latent)
        z, root, gt_z = self.rollout(b, use, latent, cfg.teacher_noise)
        parts = self.losses(b, z, root, gt_z)
        kl = 0.5 * (mean**2 + logvar.exp() - 1 - logvar)
        parts["kl"] = torch.clamp(kl.mean(dim=(0, 1)), min=cfg.free_bits).sum()
        out = self.optimise(parts, step)
        out["self_fed"] = 1 - sum(use) / len(use)
        return out

    @torch.no_grad()
    def evaluate(self, val: _Split) -> dict[str, float]:
        """Teacher-forced and free-running losses on fixed validation windows, and a long rollout."""
        cfg = self.cfg
        with self.eager():
            gen = torch.Generator().manual_seed(12345)
            n = min(cfg.eval_batch, len(val.starts))
            pick = torch.linspace(0, len(val.starts) - 1, n).long().to(val.device)
            b = val.windows(val.starts[pick], torch.rand(n, generator=gen).to(val.device) * 2 * math.pi)
            prior = torch.randn(n, cfg.window, cfg.model.latent_dim, generator=gen).to(val.device)
            out: dict[str, float] = {}
            for mode, use in (
                ("teacher", [True] * cfg.window),
                ("free", [True] + [False] * (cfg.window - 1)),
            ):
                z, root, gt_z = self.rollout(b, use, prior, 0.0)
                parts = self.losses(b, z, root, gt_z)
                out.update({f"val_{mode}_{k}": float(v) for k, v in parts.items()})
            out.update(self.long_rollout(val, gen))
            return out

    @torch.no_grad()
    def long_rollout(self, val: _Split, gen: torch.Generator) -> dict[str, float]:
        """Generate ``eval_rollout_frames`` from a zero state on looped validation music.

        Four dances: a base one, another seed, another style, other music (the
        same music shifted by half its length). Reports the joint speed of the
        last tenth over the first tenth (``freeze``), the largest root distance
        from the centre, and the mean distance between the base dance's
        root-relative joint positions and each variant's (``seed_spread_m``,
        ``style_spread_m``, ``music_spread_m``): how much each input matters.
        """
        frames = self.cfg.eval_rollout_frames
        n_music = val.music.shape[0]
        idx = torch.arange(frames, device=val.device) % n_music
        shifted = (idx + n_music // 2) % n_music
        music = torch.stack([val.music[idx], val.music[idx], val.music[idx], val.music[shifted]])
        style_idx = val.style[idx]
        other_style = (style_idx + 2) % 4
        style = torch.nn.functional.one_hot(
            torch.stack([style_idx, style_idx, other_style, style_idx]), 4
        ).float()
        base_latent = torch.randn(1, frames, self.cfg.model.latent_dim, generator=gen)
        other_latent = torch.randn(1, frames, self.cfg.model.latent_dim, generator=gen)
        latent = torch.cat([base_latent, other_latent, base_latent, base_latent]).to(val.device)
        state = self.net.initial_state(4, self.device)
        zs, roots = [], []
        for s in range(0, frames, 128):
            z, root, state = self.net(
                music[:, s : s + 128], style[:, s : s + 128], latent[:, s : s + 128], state
            )
            zs.append(z)
            roots.append(root)
        z, root = torch.cat(zs, 1), torch.cat(roots, 1)
        joints = world_joints(self.fk, self.net.denormalise(z), root)
        speed = (joints[:, 1:] - joints[:, :-1]).norm(dim=-1).mean(dim=(0, 2)) * self.cfg.model.native_fps
        tenth = max(1, frames // 10)
        rel = joints - joints[..., :1, :]

        def spread(k: int) -> float:
            return float((rel[0] - rel[k]).norm(dim=-1).mean())

        return {
            "rollout_speed_first": float(speed[:tenth].mean()),
            "rollout_speed_last": float(speed[-tenth:].mean()),
            "rollout_freeze": float(speed[-tenth:].mean() / speed[:tenth].mean().clamp_min(1e-6)),
            "rollout_root_max_m": float(root.abs().max()),
            "seed_spread_m": spread(1),
            "style_spread_m": spread(2),
            "music_spread_m": spread(3),
        }


class _GuidedRun(_Run):
    """The guided model's run: learned inertialization over made junctions, latent from the prior."""

    step_name = "guided_step"

    def new_posterior(self) -> torch.nn.Module:
        """None to train (the latent comes from the prior): an empty module, for the checkpoint's key."""
        return torch.nn.Module()

    def guided_rollout(
        self,
        b: dict[str, torch.Tensor],
        rng: np.random.Generator,
        music_noise: float,
        gen: torch.Generator | None = None,
    ):
        cfg = self.cfg
        w = make_junctions(
            self.net,
            b["feats"],
            b["root"],
            rng,
            junction_range=(cfg.junction_min, min(cfg.junction_max, cfg.window - 2 * cfg.ramp_frames)),
            ramp_frames=cfg.ramp_frames,
            start_prob=cfg.seq_start_prob,
            fps=cfg.model.native_fps,
            halflife_s=cfg.junction_halflife_s,
        )
        music = b["music"] + music_noise * torch.randn_like(b["music"]) * self.net.music_std
        batch, frames = music.shape[:2]
        if gen is None:
            latent = torch.randn(batch, frames, cfg.model.latent_dim, device=self.device)
        else:
            latent = torch.randn(batch, frames, cfg.model.latent_dim, generator=gen).to(self.device)
        use = torch.arange(frames, device=self.device)[None] <= w.first[:, None]
        state = self.net.initial_state(batch, self.device)
        z, root, _ = self.net.perform(music, w.guide, w.guide_xz, w.junction, latent, state, (w.teacher, use))
        return w, z, root

    def loss_weights(self) -> dict[str, float]:
        """Each loss term's weight in the total, in the order they are added."""
        c = self.cfg
        return {
            "feat": c.w_feat,
            "pos": c.w_pos,
            "root": c.w_root,
            "vel": c.w_vel,
            "acc": c.w_acc,
            "jerk": c.w_jerk,
            "skate": c.w_skate,
        }

    def train_step(self, b, step: int, rng: np.random.Generator) -> dict[str, float]:
        cfg = self.cfg
        w, z, root = self.guided_rollout(b, rng, cfg.music_noise)
        parts = inertialization_losses(self.fk, self.net, w, z, root, cfg.model.native_fps)
        return self.optimise(parts, step)

    @torch.no_grad()
    def evaluate(self, val: _Split) -> dict[str, float]:
        """Losses on fixed validation windows with fixed junctions."""
        with self.eager():
            gen = torch.Generator().manual_seed(12345)
            n = min(self.cfg.eval_batch, len(val.starts))
            pick = torch.linspace(0, len(val.starts) - 1, n).long().to(val.device)
            b = val.windows(val.starts[pick], torch.rand(n, generator=gen).to(val.device) * 2 * math.pi)
            w, z, root = self.guided_rollout(b, np.random.default_rng(12345), 0.0, gen)
            parts = inertialization_losses(self.fk, self.net, w, z, root, self.cfg.model.native_fps)
            return {f"val_{k}": float(v) for k, v in parts.items()}


def _use_step(net: DanceNet, name: str, fn: Callable[..., dict[str, torch.Tensor]]) -> None:
    """Route the network's per-frame ``step`` or ``guided_step`` through ``fn`` (compiled, or eager again)."""
    setattr(net, name, fn)


def _save_checkpoint(
    path: Path, run: _Run, step: int, gen: torch.Generator, rng, elapsed_s: float, stats
) -> None:
    with atomic_path(path) as tmp:
        torch.save(
            {
                "step": step,
                "net": run.net.state_dict(),
                "posterior": run.posterior.state_dict(),
                "opt": run.opt.state_dict(),
                "gen": gen.get_state(),
                "rng": rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(),
                "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
                "elapsed_s": elapsed_s,
                "config": run.cfg.to_dict(),
                "stats": stats,
            },
            tmp,
        )


def _write_outputs(out_dir: Path, run: _Run, summary: dict) -> None:
    # savez takes any array-like; its stubs refuse a typed **dict
    weights: dict[str, Any] = run.net.numpy_params()
    np.savez(out_dir / "weights.npz", **weights)
    (out_dir / "config.json").write_text(json.dumps(run.cfg.to_dict(), indent=2))
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2))


def train(
    data_dir: Path,
    out_dir: Path,
    cfg: TrainConfig,
    *,
    resume: bool = True,
    progress: bool = True,
    splits: tuple[DanceSet, DanceSet] | None = None,
    stop_at_step: int | None = None,
) -> dict:
    """Train, checkpointing into ``out_dir``; resumes from ``out_dir/checkpoint.pt`` if present.

    Parameters
    ----------
    data_dir : folder with ``train.npz`` and ``val.npz``
    out_dir : where checkpoints, weights, config and logs go
    cfg : the run's configuration (saved with the weights)
    resume : continue from an existing checkpoint rather than start over
    progress : show a progress bar
    splits : already loaded ``(train, val)`` in place of ``data_dir`` (tests)
    stop_at_step : checkpoint and return early at this step, as an interrupted run would

    Returns
    -------
    The summary written to ``summary.json``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if splits is None:
        splits = (load_split(Path(data_dir) / "train.npz"), load_split(Path(data_dir) / "val.npz"))
    train_set, val_set = splits
    device = _resolve_device(cfg.device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    ckpt_path = out_dir / "checkpoint.pt"
    state = (
        torch.load(ckpt_path, map_location=device, weights_only=False)
        if resume and ckpt_path.is_file()
        else None
    )
    if state is not None:
        cfg = TrainConfig.from_dict(state["config"])
        stats = state["stats"]
    else:
        stats = normalisation_stats(train_set)
        if cfg.model.guided:  # the last two pose features are the root correction, not a velocity
            stats["pose_mean"][GUIDE_FEATURES:] = 0.0
            stats["pose_std"][GUIDE_FEATURES:] = cfg.correction_std_m
    run = (_GuidedRun if cfg.model.guided else _Run)(cfg, stats, device)
    if state is None and cfg.init_from:
        init = torch.load(cfg.init_from, map_location=device, weights_only=False)
        run.net.load_state_dict(init["net"])
        if "posterior" in init:
            run.posterior.load_state_dict(init["posterior"])
    tr = _Split(train_set, stats, cfg.window, device)
    va = _Split(val_set, stats, min(cfg.window, int(val_set.lengths.max())), device)
    gen = torch.Generator().manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    step, elapsed_before = 0, 0.0
    if state is not None:
        run.net.load_state_dict(state["net"])
        run.posterior.load_state_dict(state["posterior"])
        run.opt.load_state_dict(state["opt"])
        gen.set_state(state["gen"])
        rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
        if state["cuda_rng"] and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        step, elapsed_before = int(state["step"]), float(state["elapsed_s"])
    log = (out_dir / "log.jsonl").open("a")
    t0 = time.perf_counter()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=cfg.steps, initial=step, desc="train", unit="step", dynamic_ncols=True)
    probe_from, probe_to = 10, 40
    probe_t = t0
    start_step = step
    while step < cfg.steps and (stop_at_step is None or step < stop_at_step):
        batch = tr.batch(cfg.batch, gen, cfg.seq_start_prob)
        if run.compiled and step == start_step:
            trial = np.random.default_rng()
            trial.bit_generator.state = rng.bit_generator.state
            try:
                row = run.train_step(batch, step, trial)
                rng.bit_generator.state = trial.bit_generator.state
            except Exception as exc:  # compiler errors share no base class
                run.uncompile(exc)
                row = run.train_step(batch, step, rng)
        else:
            row = run.train_step(batch, step, rng)
        step += 1
        if cfg.time_budget_s and state is None and step == probe_from:
            probe_t = time.perf_counter()
        if cfg.time_budget_s and state is None and step == probe_to:
            now = time.perf_counter()
            per_step = (now - probe_t) / (probe_to - probe_from) * 1.03  # evaluations take a little more
            fitted = step + int((cfg.time_budget_s - (now - t0)) / per_step)
            cfg.steps = max(probe_to + 1, min(cfg.steps, fitted))
            if bar is not None:
                bar.total = cfg.steps
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{row['loss']:.3f}", feat=f"{row['feat']:.3f}")
        if step % cfg.log_every == 0 or step == cfg.steps:
            row.update(step=step, elapsed_s=elapsed_before + time.perf_counter() - t0)
            log.write(json.dumps(row) + "\n")
            log.flush()
        if step % cfg.eval_every == 0 or step == cfg.steps:
            ev = run.evaluate(va)
            ev.update(step=step, elapsed_s=elapsed_before + time.perf_counter() - t0)
            log.write(json.dumps(ev) + "\n")
            log.flush()
            line = json.dumps({k: round(v, 4) for k, v in ev.items()})
            if bar is not None:
                bar.write(line)
            else:
                print(line, flush=True)
        if step % cfg.checkpoint_every == 0 or step == cfg.steps or step == stop_at_step:
            _save_checkpoint(ckpt_path, run, step, gen, rng, elapsed_before + time.perf_counter() - t0, stats)
    if bar is not None:
        bar.close()
    log.close()
    train_time_s = elapsed_before + time.perf_counter() - t0
    if step < cfg.steps:
        return {"steps": step, "stopped_early": True, "train_time_s": train_time_s}
    final = run.evaluate(va)
    n_params = sum(p.numel() for p in run.net.parameters())
    summary = {
        "steps": step,
        "train_time_s": train_time_s,
        "device": _device_name(device),
        "torch": torch.__version__,
        "parameters": n_params,
        "train_frames": train_set.n_frames,
        "val_frames": val_set.n_frames,
        "final_eval": final,
        "config": cfg.to_dict(),
    }
    _write_outputs(out_dir, run, summary)
    return summary
