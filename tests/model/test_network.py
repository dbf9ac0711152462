"""The torch network, the exported graph and the trainer (skipped where torch is not installed)."""

from __future__ import annotations

import json

import numpy as np
import onnxruntime as ort
import pytest

torch = pytest.importorskip("torch", reason="torch not installed: the train extra ('.[train]') is needed")

from choreo.model.config import ModelConfig  # noqa: E402
from choreo.model.data import random_split  # noqa: E402
from choreo.model.export import export_onnx, export_run, rest_pose_stats  # noqa: E402
from choreo.model.network import DanceNet  # noqa: E402
from choreo.model.training import TrainConfig, train  # noqa: E402
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
