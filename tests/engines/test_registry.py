"""Backend choice: the fastest available, or the one the settings name."""

from __future__ import annotations

import numpy as np
import pytest
from engine_testkit import make_inputs
from pydantic import ValidationError

from choreo.errors import EngineError
from engines.registry import BACKENDS, backend_status, choose_backend, load_engine
from engines.settings import EngineSettings


def test_backends_are_ordered_fastest_first():
    assert list(BACKENDS) == ["tensorrt", "torch-cuda", "onnxruntime"]


def test_auto_takes_the_first_backend_that_can_run():
    status = backend_status()
    first = next(name for name, reason in status.items() if reason is None)
    assert choose_backend(EngineSettings(backend="auto")) == first


def test_backend_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("CHOREO_ENGINE_BACKEND", "onnxruntime")
    settings = EngineSettings()
    assert settings.backend == "onnxruntime"
    assert choose_backend(settings) == "onnxruntime"


def test_unknown_backend_name_is_refused(monkeypatch):
    monkeypatch.setenv("CHOREO_ENGINE_BACKEND", "cuda-magic")
    with pytest.raises(ValidationError, match="backend"):
        EngineSettings()


@pytest.mark.parametrize("name", ["tensorrt", "torch-cuda"])
def test_asking_for_a_backend_that_cannot_run_says_why(name):
    reason = BACKENDS[name].probe()
    if reason is None:
        pytest.skip(f"{name} can run on this machine")
    with pytest.raises(EngineError, match=f"{name}.*cannot run"):
        choose_backend(EngineSettings(backend=name))


def test_unknown_profile_is_refused():
    with pytest.raises(ValidationError, match="unknown engine profile"):
        EngineSettings(profile="huge")


def test_load_engine_runs_the_model(tiny_model, rng):
    engine = load_engine(tiny_model, EngineSettings(backend="onnxruntime"))
    poses, _ = engine.run(make_inputs(engine.spec, 2, 16, rng), engine.initial_state(2))
    assert poses.shape == (2, 16, 75) and np.isfinite(poses).all()


def test_load_engine_names_a_missing_model(tmp_path):
    with pytest.raises(EngineError, match="not found"):
        load_engine(tmp_path / "nope.onnx", EngineSettings(backend="onnxruntime"))
