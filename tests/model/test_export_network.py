"""The model file carries its network: config and weights read back from the ONNX file alone."""

from __future__ import annotations

import onnx
import pytest

from choreo.errors import ParameterError
from choreo.model.export import export_onnx, untrained_params
from choreo.models import DEFAULT_MODEL_PATH
from engines.network.config import ModelConfig, param_shapes
from engines.network.file import read_network


def test_export_then_read_gives_the_config_and_weights_back(tmp_path) -> None:
    config = ModelConfig(hidden=24, cond_hidden=16, latent_dim=4, latent_time_s=0.7, floor_hard_m=0.9)
    params = untrained_params(config, seed=3)
    path = tmp_path / "m.onnx"
    export_onnx(config, params, path, version="t-1", trained=False, credits=())
    got_config, got = read_network(path)
    assert got_config == config
    assert set(got) == set(param_shapes(config))
    for name, value in params.items():
        assert (got[name] == value).all(), name


def test_the_shipped_model_carries_its_network() -> None:
    config, params = read_network(DEFAULT_MODEL_PATH)
    assert {k: v.shape for k, v in params.items()} == param_shapes(config)


def test_a_file_without_the_network_is_named(tmp_path) -> None:
    model = onnx.load(str(DEFAULT_MODEL_PATH))
    kept = [p for p in model.metadata_props if p.key != "choreo.weights"]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    onnx.save(model, str(tmp_path / "old.onnx"))
    with pytest.raises(ParameterError, match="choreo.weights"):
        read_network(tmp_path / "old.onnx")
