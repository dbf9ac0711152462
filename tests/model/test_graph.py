"""Pieces of the hand-built ONNX graph against references (no torch needed)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from scipy.spatial.transform import Rotation

from choreo.model.export import export_onnx, untrained_params
from choreo.model.graph import sixd_to_axis_angle_model
from choreo.motion.rotations import aa_to_sixd
from engines.network.config import POSE_DIM, ModelConfig, soft_clamp_np
from engines.onnxruntime_engine import OnnxRuntimeEngine


def test_sixd_to_axis_angle_matches_scipy_including_edge_angles(rng: np.random.Generator) -> None:
    aa = rng.standard_normal((2, 60, 24, 3))
    aa *= rng.uniform(0.0, np.pi, (2, 60, 24, 1)) / np.linalg.norm(aa, axis=-1, keepdims=True)
    aa[0, 0] = 0.0
    aa[0, 1] = [0.0, 0.0, np.pi - 1e-4]
    aa[0, 2] = [1e-7, 0.0, 0.0]
    aa[0, 3] = [np.pi - 1e-3, 0.0, 0.0]
    sixd = aa_to_sixd(aa) * rng.uniform(0.5, 2.0, (2, 60, 24, 1))  # the graph renormalises
    session = ort.InferenceSession(sixd_to_axis_angle_model().SerializeToString())
    out = session.run(None, {"x": sixd.astype(np.float32)})[0]
    error = (
        Rotation.from_rotvec(out.reshape(-1, 3)).inv() * Rotation.from_rotvec(aa.reshape(-1, 3))
    ).magnitude()
    assert error.max() < 1e-5
    assert np.linalg.norm(out, axis=-1).max() <= np.pi + 1e-5


def test_soft_clamp_is_identity_inside_and_bounded_outside() -> None:
    x = np.linspace(-5.0, 5.0, 1001)
    y = soft_clamp_np(x, 0.6, 0.95)
    inside = np.abs(x) <= 0.6
    np.testing.assert_allclose(y[inside], x[inside])
    assert np.abs(y).max() < 0.95
    assert np.all(np.diff(y) >= 0)


def test_a_dancer_running_away_is_kept_inside_the_floor(tmp_path, rng: np.random.Generator) -> None:
    config = ModelConfig(hidden=32, cond_hidden=32)
    params = untrained_params(config, seed=3)
    params["pose_mean"][POSE_DIM - 2 :] = [0.05, -0.03]  # 1.5 m/s and 0.9 m/s, always
    path = tmp_path / "runaway.onnx"
    export_onnx(config, params, path, version="test", trained=False, credits=[])
    engine = OnnxRuntimeEngine(path)
    state = engine.initial_state(1)
    inputs = {
        "music": rng.standard_normal((1, 128, 35)).astype(np.float32),
        "style": np.tile(np.eye(4, dtype=np.float32)[0], (1, 128, 1)),
        "latent": rng.standard_normal((1, 128, config.latent_dim)).astype(np.float32),
    }
    for _ in range(10):
        poses, state = engine.run(inputs, state)
    assert np.abs(poses[..., [72, 74]]).max() < config.floor_hard_m
    assert np.abs(poses[0, -1, [72, 74]]).min() > config.floor_soft_m  # it did try to run away
