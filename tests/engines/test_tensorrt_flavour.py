"""Choosing TensorRT 11 or TensorRT-RTX, and which GPUs each one's engines serve."""

from __future__ import annotations

import pytest

from choreo.errors import EngineError
from engines.settings import EngineSettings, get_engine_settings
from engines.tensorrt_flavour import (
    RTX_DEFAULT_TARGETS,
    choose_flavour,
    get_flavour,
    gpu_reason,
    load_flavour,
)


@pytest.fixture
def flavour_env(monkeypatch):
    """Set CHOREO_ENGINE_TENSORRT_FLAVOUR for one test (the settings are read once per process)."""

    def set_choice(choice: str) -> None:
        monkeypatch.setenv("CHOREO_ENGINE_TENSORRT_FLAVOUR", choice)
        get_engine_settings.cache_clear()

    yield set_choice
    get_engine_settings.cache_clear()


def test_rtx_serves_ampere_ada_and_blackwell_by_default():
    for cc in ((8, 0), (8, 6), (8, 9), (12, 0), (12, 1)):
        assert gpu_reason("tensorrt-rtx", cc) is None
    assert RTX_DEFAULT_TARGETS == ("8.0", "8.6", "8.9", "12.0", "12.1")


def test_rtx_on_hopper_says_to_install_tensorrt():
    reason = gpu_reason("tensorrt-rtx", (9, 0))
    assert "compute capability 9.0 is not supported by TensorRT-RTX" in reason
    assert "install TensorRT" in reason and "choreo[gpu]" in reason


def test_rtx_on_a_gpu_left_out_of_the_targets_names_the_setting():
    assert "CHOREO_ENGINE_RTX_TARGETS" in gpu_reason("tensorrt-rtx", (7, 5))
    assert gpu_reason("tensorrt-rtx", (7, 5), ("7.5",)) is None
    assert "not among the engine targets 8.6" in gpu_reason("tensorrt-rtx", (8, 9), ("8.6",))


def test_tensorrt_serves_turing_and_later_hopper_included():
    for cc in ((7, 5), (8, 0), (9, 0), (10, 0), (12, 0)):
        assert gpu_reason("tensorrt", cc) is None
    assert "older than Turing" in gpu_reason("tensorrt", (7, 0))


def test_unknown_flavour_is_refused():
    with pytest.raises(EngineError, match="flavour must be one of"):
        choose_flavour("tensorrt-magic")
    with pytest.raises(ValueError, match="tensorrt_flavour"):
        EngineSettings(tensorrt_flavour="tensorrt-magic")


def test_unknown_rtx_target_is_refused():
    with pytest.raises(ValueError, match="rtx_targets must be among"):
        EngineSettings(rtx_targets=("9.0",))


def test_forcing_a_flavour_that_is_not_installed_says_how_to_install_it(flavour_env):
    if choose_flavour("tensorrt") is not None:
        pytest.skip("TensorRT 11 is installed here")
    flavour_env("tensorrt")
    assert choose_flavour("tensorrt") is None
    with pytest.raises(EngineError, match=r"no TensorRT is installed: TensorRT: pip install 'choreo\[gpu\]'"):
        get_flavour()


def test_forcing_rtx_loads_it(flavour_env):
    if choose_flavour("tensorrt-rtx") is None:
        pytest.skip("TensorRT-RTX is not installed (pip install '.[rtx]')")
    flavour_env("tensorrt-rtx")
    flavour = get_flavour()
    assert flavour.is_rtx and flavour.builds_without_gpu
    assert flavour.trt.__name__ == "tensorrt_rtx" and flavour.label == f"TensorRT-RTX {flavour.version}"
    assert get_flavour() is flavour is load_flavour("tensorrt-rtx")  # one per process


def test_auto_takes_tensorrt_11_where_installed_else_rtx():
    installed = [name for name in ("tensorrt", "tensorrt-rtx") if choose_flavour(name) is not None]
    assert choose_flavour("auto") == (installed[0] if installed else None)


def test_registry_says_why_when_the_forced_flavour_is_missing(flavour_env):
    from engines.registry import BACKENDS, tensorrt_build_reason, tensorrt_flavour_line

    if choose_flavour("tensorrt") is not None:
        pytest.skip("TensorRT 11 is installed here")
    flavour_env("tensorrt")
    for reason in (BACKENDS["tensorrt"].probe(), tensorrt_build_reason()):
        assert reason.startswith("no TensorRT is installed") and "choreo[gpu]" in reason
    assert tensorrt_flavour_line().startswith("tensorrt flavour (tensorrt): none: no TensorRT is installed")


def test_registry_names_the_rtx_flavour_and_that_it_builds_here(flavour_env):
    from engines.registry import BACKENDS, tensorrt_build_reason, tensorrt_flavour_line

    if choose_flavour("tensorrt-rtx") is None:
        pytest.skip("TensorRT-RTX is not installed (pip install '.[rtx]')")
    flavour_env("tensorrt-rtx")
    label = load_flavour("tensorrt-rtx").label
    assert tensorrt_build_reason() is None  # it compiles ahead of time, GPU or not
    assert tensorrt_flavour_line().startswith(f"tensorrt flavour (tensorrt-rtx): {label} (builds engines")
    reason = BACKENDS["tensorrt"].probe()
    if reason is not None:
        assert reason.startswith(label)
