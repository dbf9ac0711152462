"""The GPU-free parts of the TensorRT backend: profile shapes and engine-cache keys."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from tiny_engine_model import tiny_spec

from engines.settings import EngineSettings, ShapeProfile
from engines.tensorrt_build import EngineKey, profile_shapes, timing_cache_path


def test_default_profiles_are_the_documented_ones():
    profiles = EngineSettings().profiles
    assert profiles["realtime"] == ShapeProfile(min=(1, 16), opt=(4, 64), max=(8, 128))
    assert profiles["offline"].max == (256, 128)


def test_profile_shapes_cover_every_input():
    spec = tiny_spec(32)
    shapes = profile_shapes(spec, EngineSettings().profiles["realtime"])
    assert shapes["music"] == ((1, 16, 35), (4, 64, 35), (8, 128, 35))
    assert shapes["style"] == ((1, 16, 4), (4, 64, 4), (8, 128, 4))
    assert shapes["latent"] == ((1, 16, 8), (4, 64, 8), (8, 128, 8))
    assert shapes["state_in_h"] == ((1, 32), (4, 32), (8, 32))
    assert shapes["state_in_pose"] == ((1, 75), (4, 75), (8, 75))
    assert set(shapes) == {"music", "style", "latent", "state_in_h", "state_in_c", "state_in_pose"}


def test_offline_profile_reaches_256_songs():
    shapes = profile_shapes(tiny_spec(32), EngineSettings().profiles["offline"])
    assert shapes["music"][2] == (256, 128, 35)
    assert shapes["state_in_c"][2] == (256, 32)


@pytest.mark.parametrize(
    "bad", [{"min": (2, 16), "opt": (1, 64), "max": (8, 128)}, {"min": (1, 0), "opt": (1, 1), "max": (1, 1)}]
)
def test_disordered_profile_is_refused(bad):
    with pytest.raises(ValidationError, match="min <= opt <= max"):
        ShapeProfile(**bad)


def test_profile_contains():
    profile = ShapeProfile(min=(1, 16), opt=(4, 64), max=(8, 128))
    assert profile.contains(8, 128) and profile.contains(1, 16)
    assert not profile.contains(9, 64) and not profile.contains(4, 15)


def _key(**changes):
    fields = {
        "onnx_sha256": "a" * 64,
        "tensorrt_version": "11.4.0",
        "gpu": "NVIDIA H200",
        "precision": "fp16",
        "profile_name": "realtime",
        "profile": ShapeProfile(min=(1, 16), opt=(4, 64), max=(8, 128)),
    }
    fields.update(changes)
    return EngineKey(**fields)


def test_cache_key_is_stable():
    assert _key().digest() == _key().digest()
    assert _key().filename() == f"choreo-fp16-realtime-{_key().digest()}.plan"


@pytest.mark.parametrize(
    "change",
    [
        {"onnx_sha256": "b" * 64},
        {"tensorrt_version": "11.5.0"},
        {"gpu": "Tesla T4"},
        {"precision": "int8"},
        {"profile_name": "offline"},
        {"profile": ShapeProfile(min=(1, 16), opt=(4, 64), max=(16, 128))},
    ],
)
def test_cache_key_changes_with_every_field(change):
    assert _key(**change).digest() != _key().digest()


def test_timing_cache_is_per_gpu_and_version(tmp_path):
    a = timing_cache_path(tmp_path, "11.4.0", "NVIDIA H200")
    assert a.parent == tmp_path and a.name == "timing-nvidia_h200-trt11.4.0.cache"
    assert timing_cache_path(tmp_path, "11.4.0", "Tesla T4") != a
