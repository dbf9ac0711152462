"""Backend choice: the fastest available, or the one the settings name."""

from __future__ import annotations

import numpy as np
import pytest
from engine_testkit import make_inputs
from pydantic import ValidationError

from choreo.errors import EngineError
from engines.registry import BACKENDS, Backend, choose_backend, load_engine
from engines.settings import EngineSettings


def test_backends_are_ordered_fastest_first():
    assert list(BACKENDS) == ["tensorrt", "torch-cuda", "onnxruntime"]


def _with_probes(monkeypatch: pytest.MonkeyPatch, reasons: dict[str, str | None]) -> None:
    """Make each backend's probe answer ``reasons[name]`` (None: it can run), keeping its loader."""
    for name, reason in reasons.items():
        backend = BACKENDS[name]
        monkeypatch.setitem(BACKENDS, name, Backend(name, lambda reason=reason: reason, backend.load))


@pytest.mark.parametrize(
    ("tensorrt", "torch_cuda", "expected"),
    [
        (None, None, "tensorrt"),
        ("no CUDA device found", None, "torch-cuda"),
        (None, "torch sees no CUDA device", "tensorrt"),
        ("no CUDA device found", "torch sees no CUDA device", "onnxruntime"),
    ],
)
def test_auto_takes_the_fastest_backend_that_can_run(monkeypatch, tensorrt, torch_cuda, expected):
    _with_probes(monkeypatch, {"tensorrt": tensorrt, "torch-cuda": torch_cuda, "onnxruntime": None})
    assert choose_backend(EngineSettings(backend="auto")) == expected


def test_auto_with_no_backend_names_every_reason(monkeypatch):
    reasons = {"tensorrt": "no TensorRT", "torch-cuda": "no torch", "onnxruntime": "no onnxruntime"}
    _with_probes(monkeypatch, reasons)
    with pytest.raises(EngineError, match="no engine backend can run here") as caught:
        choose_backend(EngineSettings(backend="auto"))
    assert all(reason in str(caught.value) for reason in reasons.values())


def test_auto_on_a_host_without_a_gpu_is_onnxruntime():
    if BACKENDS["tensorrt"].probe() is None or BACKENDS["torch-cuda"].probe() is None:
        pytest.skip("this host has a GPU backend")
    assert choose_backend(EngineSettings(backend="auto")) == "onnxruntime"


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
    with pytest.raises(EngineError, match=f"{name}.*cannot run") as caught:
        choose_backend(EngineSettings(backend=name))
    assert reason in str(caught.value)


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


def test_model_spec_reads_the_metadata_without_an_engine(tiny_model, tmp_path):
    from engines.onnxruntime_engine import OnnxRuntimeEngine
    from engines.registry import model_spec

    assert model_spec(tiny_model) == OnnxRuntimeEngine(tiny_model, threads=1).spec
    with pytest.raises(EngineError, match="not found"):
        model_spec(tmp_path / "nope.onnx")
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    with pytest.raises(EngineError, match="junk.onnx"):
        model_spec(tmp_path / "junk.onnx")
