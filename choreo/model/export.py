"""Write the dance model file, and read its network back: weights to ONNX with the contract's metadata.

No torch is needed here: the weights arrive as numpy arrays (from a trained
checkpoint, or from :func:`untrained_params` for an untrained network of the same graph).

Besides the engine contract (:class:`engines.base.ModelSpec`), the metadata
carries the network itself: its config (``choreo.network``, the
:class:`~engines.network.config.ModelConfig` as JSON) and which initializer holds
each weight (``choreo.weights``), so that the file alone is enough to rebuild
:class:`engines.network.dance_net.DanceNet` (:func:`read_network`), as the
torch-cuda backend does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx

from choreo.contracts.model_spec import ModelSpec
from choreo.errors import ParameterError
from choreo.model.graph import build_model
from choreo.motion.skeleton import REST_PELVIS_HEIGHT_M
from engines.network.config import FEATURE_DIM, N_JOINTS, ModelConfig, param_shapes
from engines.network.file import NETWORK_KEY, WEIGHTS_KEY

__all__ = [
    "CMU_CREDIT",
    "export_onnx",
    "export_run",
    "model_spec",
    "rest_pose_stats",
    "untrained_params",
]


CMU_CREDIT = (
    "The data used in this project was obtained from mocap.cs.cmu.edu. "
    "The database was created with funding from NSF EIA-0196217."
)


def model_spec(config: ModelConfig, *, version: str, trained: bool, credits: Sequence[str]) -> ModelSpec:
    """The :class:`~engines.base.ModelSpec` written into the model's metadata."""
    return ModelSpec(
        version=version,
        native_fps=config.native_fps,
        feature_dim=FEATURE_DIM,
        styles=tuple(config.styles),
        latent_dim=config.latent_dim,
        state_shapes=config.state_shapes,
        trained=trained,
        credits=tuple(credits),
        inputs=config.inputs,
    )


def rest_pose_stats() -> tuple[np.ndarray, np.ndarray]:
    """Pose mean and std for an untrained model: the T-pose standing still, small spread."""
    identity = np.tile(np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0]), N_JOINTS)
    mean = np.concatenate([identity, [REST_PELVIS_HEIGHT_M], [0.0, 0.0]])
    std = np.concatenate([np.full(6 * N_JOINTS, 0.05), [0.01], [0.002, 0.002]])
    return mean.astype(np.float32), std.astype(np.float32)


def untrained_params(config: ModelConfig, seed: int = 0) -> dict[str, np.ndarray]:
    """Random weights (uniform in +-1/sqrt(fan_in), like torch's LSTM) around the T-pose."""
    rng = np.random.default_rng(seed)
    params: dict[str, np.ndarray] = {}
    for name, shape in param_shapes(config).items():
        fan_in = shape[0] if len(shape) == 2 else config.hidden
        bound = 1.0 / np.sqrt(fan_in)
        params[name] = rng.uniform(-bound, bound, size=shape).astype(np.float32)
    params["music_mean"] = np.zeros(FEATURE_DIM, np.float32)
    params["music_std"] = np.ones(FEATURE_DIM, np.float32)
    params["pose_mean"], params["pose_std"] = rest_pose_stats()
    if config.guided:  # as DanceNet starts: the untrained synthesizer performs its guide exactly
        params["out_w"][:] = 0.0
        params["out_b"][:] = 0.0
    return params


def export_onnx(
    config: ModelConfig,
    params: Mapping[str, np.ndarray],
    path: Path,
    *,
    version: str,
    trained: bool,
    credits: Sequence[str],
) -> ModelSpec:
    """Build the chunk graph from ``params`` and save it, weights inside, to ``path``."""
    spec = model_spec(config, version=version, trained=trained, credits=credits)
    model = build_model(config, params, spec.to_metadata())
    network = {NETWORK_KEY: config.to_json(), WEIGHTS_KEY: json.dumps(_weight_names(model, config))}
    onnx.helper.set_model_props(model, spec.to_metadata() | network)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save_model(model, str(path), save_as_external_data=False)
    return spec


def export_run(
    run_dir: Path, path: Path, *, version: str, credits: Sequence[str] = (CMU_CREDIT,)
) -> ModelSpec:
    """Export a finished training run (``weights.npz`` and ``config.json`` in ``run_dir``), trained=true."""
    run_dir = Path(run_dir)
    config_file, weights_file = run_dir / "config.json", run_dir / "weights.npz"
    for needed in (config_file, weights_file):
        if not needed.is_file():
            raise ParameterError(f"training run incomplete: {needed} not found")
    config = ModelConfig.from_dict(json.loads(config_file.read_text())["model"])
    with np.load(weights_file) as data:
        params = {name: data[name] for name in data.files}
    return export_onnx(config, params, path, version=version, trained=True, credits=credits)


def _weight_names(model: onnx.ModelProto, config: ModelConfig) -> dict[str, str]:
    """Which top-level initializer holds each weight (the graph names them ``<weight>_<n>``)."""
    names: dict[str, str] = {}
    for key in param_shapes(config):
        found = [i.name for i in model.graph.initializer if re.fullmatch(rf"{key}_\d+", i.name)]
        if len(found) != 1:
            raise ParameterError(f"the graph holds {len(found)} initializers for weight {key!r}, not one")
        names[key] = found[0]
    return names
