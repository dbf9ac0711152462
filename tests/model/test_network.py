"""The torch network, the exported graph and the trainer (skipped where torch is not installed)."""

from __future__ import annotations

import json

import numpy as np
import onnxruntime as ort
import pytest

torch = pytest.importorskip("torch", reason="torch not installed: the train extra ('.[train]') is needed")

from choreo.errors import ParameterError  # noqa: E402
from choreo.model.data import random_split  # noqa: E402
from choreo.model.export import export_onnx, export_run, rest_pose_stats  # noqa: E402
from choreo.model.training import TrainConfig, train  # noqa: E402
from engines.network.config import ModelConfig  # noqa: E402
from engines.network.dance_net import DanceNet  # noqa: E402
from engines.onnxruntime_engine import OnnxRuntimeEngine  # noqa: E402

SMALL = ModelConfig(hidden=48, cond_hidden=32, latent_dim=8)


def _tiny_config(steps: int) -> TrainConfig:
    return TrainConfig(
        steps=steps,
        batch=4,
        window=32,
        burn_in=8,
        warmup_steps=2,
        log_every=1,
        eval_every=2,
        checkpoint_every=2,
        eval_batch=3,
        eval_rollout_frames=64,
        device="cpu",
        model=SMALL,
    )


def test_exported_graph_matches_torch_within_1e4(tmp_path, rng: np.random.Generator) -> None:
    torch.manual_seed(0)
    net = DanceNet(SMALL)
    mean, std = rest_pose_stats()
    net.set_stats(
        {
            "music_mean": rng.standard_normal(35),
            "music_std": rng.uniform(0.5, 2.0, 35),
            "pose_mean": mean + 0.1 * rng.standard_normal(mean.shape),
            "pose_std": std * 5,
        }
    )
    path = tmp_path / "m.onnx"
    export_onnx(SMALL, net.numpy_params(), path, version="t", trained=False, credits=[])
    batch, frames = 3, 40
    music = rng.standard_normal((batch, frames, 35)).astype(np.float32)
    style = np.eye(4, dtype=np.float32)[rng.integers(0, 4, batch)][:, None].repeat(frames, 1)
    latent = rng.standard_normal((batch, frames, SMALL.latent_dim)).astype(np.float32)
    state = {
        k: (0.5 * rng.standard_normal((batch, *s))).astype(np.float32) for k, s in SMALL.state_shapes.items()
    }
    session = ort.InferenceSession(str(path))
    feeds = {
        "music": music,
        "style": style,
        "latent": latent,
        **{f"state_in_{k}": v for k, v in state.items()},
    }
    poses, *new_state = session.run(None, feeds)
    with torch.no_grad():
        z, root, t_state = net(
            torch.from_numpy(music),
            torch.from_numpy(style),
            torch.from_numpy(latent),
            {k: torch.from_numpy(v) for k, v in state.items()},
        )
        t_poses = net.poses(z, root).numpy()
    np.testing.assert_allclose(poses, t_poses, atol=1e-4)
    for name, value in zip(SMALL.state_shapes, new_state, strict=True):
        np.testing.assert_allclose(value, t_state[name].numpy(), atol=1e-4)


def test_training_is_seeded_resumable_and_exports(tmp_path) -> None:
    splits = (random_split(0, n_sequences=3, min_frames=40, max_frames=60), random_split(1, 2, 40, 60))
    a = train(tmp_path / "x", tmp_path / "a", _tiny_config(4), progress=False, splits=splits)
    train(tmp_path / "x", tmp_path / "b", _tiny_config(4), progress=False, splits=splits)
    with np.load(tmp_path / "a" / "weights.npz") as wa, np.load(tmp_path / "b" / "weights.npz") as wb:
        for name in wa.files:
            np.testing.assert_array_equal(wa[name], wb[name])
    assert a["steps"] == 4 and a["device"] and a["train_time_s"] > 0
    rows = [json.loads(line) for line in (tmp_path / "a" / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if "loss" in r] == [1, 2, 3, 4]
    saved = json.loads((tmp_path / "a" / "config.json").read_text())
    assert saved["seed"] == 0 and saved["model"]["hidden"] == SMALL.hidden

    # Stop after 2 steps, then resume to 4: the same weights as the straight run.
    train(tmp_path / "x", tmp_path / "c", _tiny_config(4), progress=False, splits=splits, stop_at_step=2)
    assert not (tmp_path / "c" / "weights.npz").exists()
    train(tmp_path / "x", tmp_path / "c", _tiny_config(4), progress=False, splits=splits)
    with np.load(tmp_path / "a" / "weights.npz") as wa, np.load(tmp_path / "c" / "weights.npz") as wc:
        for name in wa.files:
            np.testing.assert_allclose(wa[name], wc[name], atol=1e-6)

    spec = export_run(tmp_path / "a", tmp_path / "a.onnx", version="9.9.9")
    engine = OnnxRuntimeEngine(tmp_path / "a.onnx")
    assert engine.spec.trained and engine.spec.version == "9.9.9" == spec.version
    assert any("mocap.cs.cmu.edu" in c for c in engine.spec.credits)


def test_choreo_train_cli_trains_exports_and_rejects_bad_config(
    tmp_path, rng: np.random.Generator, write_split
) -> None:
    from choreo.cli.main import main

    data = tmp_path / "data"
    data.mkdir()
    write_split(data / "train.npz", rng, lengths=(40, 50, 45))
    write_split(data / "val.npz", rng, lengths=(40,))
    config = _tiny_config(2).to_dict()
    config_file = tmp_path / "config.json"
    config_file.write_text(json.dumps(config))
    model = tmp_path / "model.onnx"
    args = ["train", "--data", str(data), "--out", str(tmp_path / "run"), "--config", str(config_file)]
    assert main([*args, "--no-progress", "--export", str(model), "--version", "0.1.0"]) == 0
    assert OnnxRuntimeEngine(model).spec.version == "0.1.0"
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["steps"] == 2

    config_file.write_text(json.dumps({**config, "learning_rate": 1.0}))
    assert main([*args, "--fresh"]) == 2
    assert main(["train", "--data", str(tmp_path / "nowhere"), "--out", str(tmp_path / "r2")]) == 2


GUIDED = ModelConfig(hidden=48, cond_hidden=32, latent_dim=8, guided=True, styles=())


def _guide_song(rng: np.random.Generator, batch: int, frames: int) -> dict[str, np.ndarray]:
    """Guide inputs with a jump at frame 25: rotations up to pi, some exactly zero, a root walk."""
    aa = rng.uniform(-1.5, 1.5, (batch, frames, 24, 3))
    aa[:, :, :3] = 0.0
    aa[:, 25:] += 0.5
    root = np.cumsum(rng.normal(0, 0.02, (batch, frames, 3)), axis=1) + [0.0, 0.9, 0.0]
    guide = np.concatenate([aa.reshape(batch, frames, 72), root], axis=-1).astype(np.float32)
    t = np.arange(frames) / 30.0
    since = np.where(t < 25 / 30, t + 0.4, t - 25 / 30)
    until = np.where(t < 25 / 30, 25 / 30 - t, 3.0 - t)
    junction = np.broadcast_to(np.stack([since, until], -1), (batch, frames, 2)).astype(np.float32)
    return {
        "music": rng.standard_normal((batch, frames, 35)).astype(np.float32),
        "guide": guide,
        "junction": np.ascontiguousarray(junction),
        "latent": rng.standard_normal((batch, frames, GUIDED.latent_dim)).astype(np.float32),
    }


def _guided_net(rng: np.random.Generator, head_scale: float) -> DanceNet:
    torch.manual_seed(1)
    net = DanceNet(GUIDED)
    mean, std = rest_pose_stats()
    net.set_stats(
        {
            "music_mean": rng.standard_normal(35),
            "music_std": rng.uniform(0.5, 2.0, 35),
            "pose_mean": np.concatenate([mean[:145] + 0.1 * rng.standard_normal(145), [0.0, 0.0]]),
            "pose_std": std * 5,
        }
    )
    with torch.no_grad():
        net.out_w.uniform_(-head_scale, head_scale)
        net.out_b.uniform_(-head_scale, head_scale)
    return net


def test_guided_graph_matches_torch_within_1e4_across_chunks(tmp_path, rng: np.random.Generator) -> None:
    net = _guided_net(rng, head_scale=0.2)
    path = tmp_path / "g.onnx"
    spec = export_onnx(GUIDED, net.numpy_params(), path, version="t", trained=False, credits=[])
    assert spec.styles == ()
    assert spec.input_widths == {"music": 35, "guide": 75, "junction": 2, "latent": 8}
    engine = OnnxRuntimeEngine(path, threads=1)
    assert engine.spec == spec
    song = _guide_song(rng, 2, 64)
    state = engine.initial_state(2)
    t_state = net.initial_state(2)
    for lo in (0, 32):
        chunk = {k: v[:, lo : lo + 32] for k, v in song.items()}
        poses, state = engine.run(chunk, state)
        with torch.no_grad():
            t_poses, t_state = net.run_chunk({k: torch.from_numpy(v) for k, v in chunk.items()}, t_state)
        np.testing.assert_allclose(poses, t_poses.numpy(), atol=1e-4)
        for name in GUIDED.state_shapes:
            np.testing.assert_allclose(state[name], t_state[name].numpy(), atol=1e-4)
    assert np.abs(poses[..., :72] - song["guide"][:, 32:, :72]).max() > 0.01, "the head must change the guide"
    from engines.torch_engine import TorchEngine

    torch_backend = TorchEngine(path, device="cpu", dtype="fp32", cuda_graphs=False)
    full, _ = torch_backend.run(song, torch_backend.initial_state(2))
    np.testing.assert_allclose(full[:, 32:], poses, atol=1e-4)


def test_the_untrained_guided_model_performs_its_guide(tmp_path, rng: np.random.Generator) -> None:
    """A zero output layer: the poses are the guide's (rotations compared as matrices)."""
    from choreo.motion.rotations import aa_to_mat

    net = _guided_net(rng, head_scale=0.0)
    path = tmp_path / "g0.onnx"
    export_onnx(GUIDED, net.numpy_params(), path, version="t", trained=False, credits=[])
    engine = OnnxRuntimeEngine(path, threads=1)
    song = _guide_song(rng, 1, 48)
    poses, _ = engine.run(song, engine.initial_state(1))
    got = aa_to_mat(poses[..., :72].reshape(-1, 3).astype(np.float64))
    want = aa_to_mat(song["guide"][..., :72].reshape(-1, 3).astype(np.float64))
    np.testing.assert_allclose(got, want, atol=1e-4)
    np.testing.assert_allclose(poses[..., 72:], song["guide"][..., 72:], atol=1e-5)


def test_a_guided_model_refuses_a_style() -> None:
    with pytest.raises(ParameterError, match="no style"):
        ModelConfig(guided=True)


def test_guided_training_is_seeded_resumable_learns_and_exports(tmp_path) -> None:
    """Learned inertialization: seeded, resumable, the junction error falls, the export runs."""
    import dataclasses

    splits = (random_split(0, n_sequences=3, min_frames=80, max_frames=100), random_split(1, 2, 80, 100))
    cfg = dataclasses.replace(
        _tiny_config(6),
        window=64,
        junction_min=8,
        junction_max=20,
        lr=3e-3,
        model=GUIDED,
    )
    a = train(tmp_path / "x", tmp_path / "a", cfg, progress=False, splits=splits)
    train(tmp_path / "x", tmp_path / "c", cfg, progress=False, splits=splits, stop_at_step=3)
    train(tmp_path / "x", tmp_path / "c", cfg, progress=False, splits=splits)
    with np.load(tmp_path / "a" / "weights.npz") as wa, np.load(tmp_path / "c" / "weights.npz") as wc:
        for name in wa.files:
            np.testing.assert_allclose(wa[name], wc[name], atol=1e-6)
        assert np.abs(wa["out_w"]).max() > 0, "the correction layer starts at zero and must learn"
    rows = [json.loads(line) for line in (tmp_path / "a" / "log.jsonl").read_text().splitlines()]
    evals = [r for r in rows if "val_vel" in r]
    assert evals[-1]["val_vel"] < evals[0]["val_vel"], "the velocity error across the junctions must fall"
    assert {"val_vel", "val_acc", "val_jerk", "val_dev_cm"} <= set(a["final_eval"])
    spec = export_run(tmp_path / "a", tmp_path / "a.onnx", version="9.9.9")
    assert spec.input_widths == dict(GUIDED.inputs) and spec.trained


def test_guided_training_on_inertialized_junctions_with_a_jerk_loss_counts_it(tmp_path) -> None:
    """The blend-like junctions and the jerk term change what is learned, and the run records them."""
    import dataclasses

    splits = (random_split(0, n_sequences=3, min_frames=80, max_frames=100), random_split(1, 2, 80, 100))
    base = dataclasses.replace(_tiny_config(2), window=64, junction_min=8, junction_max=20, model=GUIDED)
    plain = train(tmp_path / "x", tmp_path / "plain", base, progress=False, splits=splits)
    smooth_cfg = dataclasses.replace(base, w_jerk=0.01, junction_halflife_s=0.15)
    smooth = train(tmp_path / "x", tmp_path / "smooth", smooth_cfg, progress=False, splits=splits)
    assert smooth["final_eval"]["val_jerk"] != plain["final_eval"]["val_jerk"], "other guides"
    with np.load(tmp_path / "plain" / "weights.npz") as a, np.load(tmp_path / "smooth" / "weights.npz") as b:
        assert not np.allclose(a["out_w"], b["out_w"]), "the jerk term and the guides must change the step"
    saved = json.loads((tmp_path / "smooth" / "config.json").read_text())
    assert saved["w_jerk"] == 0.01 and saved["junction_halflife_s"] == 0.15


def _made_junctions(halflife_s: float | None):
    from choreo.model.inertialization import make_junctions

    data = random_split(3, n_sequences=1, min_frames=200, max_frames=201)
    net = _guided_net(np.random.default_rng(0), head_scale=0.0)
    feats = torch.from_numpy(np.stack([data.features[i * 40 : i * 40 + 64] for i in range(4)]))
    root = torch.from_numpy(np.stack([data.root_xz[i * 40 : i * 40 + 64] for i in range(4)]))
    return make_junctions(
        net,
        feats,
        root,
        np.random.default_rng(7),
        junction_range=(20, 20),
        ramp_frames=10,
        start_prob=0.0,
        fps=30,
        halflife_s=halflife_s,
    )


def test_inertialized_made_junctions_continue_the_past_and_settle_on_the_real_motion() -> None:
    """With a half-life the guide keeps going where its past was going, then becomes the real motion."""
    from engines.network.config import GUIDE_FEATURES

    raw, smooth = _made_junctions(None), _made_junctions(0.15)
    j = 20
    for w in (raw, smooth):
        assert torch.equal(w.past_feats[:, :j], raw.past_feats[:, :j]), "the past is the same draw"
    step_raw = (raw.past_feats[:, j] - raw.past_feats[:, j - 1])[:, :GUIDE_FEATURES].abs().mean()
    step_smooth = (smooth.past_feats[:, j] - smooth.past_feats[:, j - 1])[:, :GUIDE_FEATURES].abs().mean()
    assert step_smooth < 0.5 * step_raw, "the inertialized guide must not jump at the junction"
    settled = j + 12 * 5  # 12 half-lives of 0.15 s at 30 fps
    np.testing.assert_allclose(smooth.past_feats[:, settled:], raw.target_feats[:, settled:], atol=2e-3)
    np.testing.assert_allclose(smooth.past_root[:, settled:], raw.target_root[:, settled:], atol=2e-3)
