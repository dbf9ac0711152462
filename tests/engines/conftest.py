"""Fixtures for the engine tests: the tiny styled model, the shipped guided model, one engine per backend."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_testkit import BACKEND_FACTORIES, SHIPPED_MODEL, backend_skip_reason
from tiny_engine_model import build_tiny_model


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny.onnx")


@pytest.fixture(scope="session", params=["tiny", "shipped"])
def model_path(request: pytest.FixtureRequest, tiny_model: Path) -> Path:
    return tiny_model if request.param == "tiny" else SHIPPED_MODEL


@pytest.fixture(scope="session", params=list(BACKEND_FACTORIES))
def backend(request: pytest.FixtureRequest) -> str:
    reason = backend_skip_reason(request.param)
    if reason is not None:
        pytest.skip(f"backend {request.param} unavailable: {reason}")
    return request.param


@pytest.fixture(scope="session")
def _engines() -> dict:
    return {}


@pytest.fixture
def engine(backend: str, model_path: Path, _engines: dict):
    """One engine per (backend, model), loaded once for the session."""
    key = (backend, model_path)
    if key not in _engines:
        _engines[key] = BACKEND_FACTORIES[backend][1](model_path)
    return _engines[key]


@pytest.fixture
def tolerance(backend: str) -> float:
    return BACKEND_FACTORIES[backend][2]
