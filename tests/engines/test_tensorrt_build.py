"""Building TensorRT engines: profile shapes and cache keys everywhere; real builds of the shipped model
with TensorRT-RTX, which compiles ahead of time without a GPU (``make test`` installs it)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from engine_testkit import SHIPPED_MODEL, make_inputs
from pydantic import ValidationError
from tiny_engine_model import tiny_spec

from choreo.contracts.model_spec import ModelSpec
from engines.base import STATE_IN_PREFIX, STATE_OUT_PREFIX
from engines.settings import EngineSettings, ShapeProfile
from engines.tensorrt_build import (
    EngineBuildError,
    EngineKey,
    build_plan,
    profile_shapes,
    timing_cache_path,
)
from engines.tensorrt_flavour import RTX_DEFAULT_TARGETS, build_target, choose_flavour

PROFILES = EngineSettings().profiles


def test_default_profiles_are_the_documented_ones():
    assert PROFILES["realtime"] == ShapeProfile(min=(1, 16), opt=(4, 64), max=(8, 128))
    assert PROFILES["offline"].max == (256, 128)


def test_profile_shapes_cover_every_input():
    spec = tiny_spec(32)
    shapes = profile_shapes(spec, PROFILES["realtime"])
    assert shapes["music"] == ((1, 16, 35), (4, 64, 35), (8, 128, 35))
    assert shapes["style"] == ((1, 16, 4), (4, 64, 4), (8, 128, 4))
    assert shapes["latent"] == ((1, 16, 8), (4, 64, 8), (8, 128, 8))
    assert shapes["state_in_h"] == ((1, 32), (4, 32), (8, 32))
    assert shapes["state_in_pose"] == ((1, 75), (4, 75), (8, 75))
    assert set(shapes) == {"music", "style", "latent", "state_in_h", "state_in_c", "state_in_pose"}


def test_offline_profile_reaches_256_songs():
    shapes = profile_shapes(tiny_spec(32), PROFILES["offline"])
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
        "flavour": "tensorrt",
        "version": "11.4.0",
        "target": "NVIDIA H200",
        "precision": "fp16",
        "profile_name": "realtime",
        "profile": ShapeProfile(min=(1, 16), opt=(4, 64), max=(8, 128)),
    }
    fields.update(changes)
    return EngineKey(**fields)


def test_cache_key_is_stable():
    assert _key().digest() == _key().digest()
    assert _key().filename() == f"choreo-trt-fp16-realtime-{_key().digest()}.plan"
    rtx = _key(flavour="tensorrt-rtx", version="1.7.1.116", target="cc 8.6")
    assert rtx.filename().startswith("choreo-rtx-fp16-realtime-")


@pytest.mark.parametrize(
    "change",
    [
        {"onnx_sha256": "b" * 64},
        {"flavour": "tensorrt-rtx"},
        {"version": "11.5.0"},
        {"target": "Tesla T4"},
        {"precision": "int8"},
        {"profile_name": "offline"},
        {"profile": ShapeProfile(min=(1, 16), opt=(4, 64), max=(16, 128))},
    ],
)
def test_cache_key_changes_with_every_field(change):
    assert _key(**change).digest() != _key().digest()


def test_cache_target_is_the_gpu_for_tensorrt_and_the_compute_capabilities_for_rtx():
    assert build_target("tensorrt", gpu="NVIDIA H200", targets=RTX_DEFAULT_TARGETS) == "NVIDIA H200"
    rtx = build_target("tensorrt-rtx", gpu=None, targets=("12.0", "8.6", "8.9"))
    assert rtx == "cc 8.6,8.9,12.0"  # sorted numerically, the GPU plays no part
    assert build_target("tensorrt-rtx", gpu="NVIDIA H200", targets=("8.6",)) == "cc 8.6"


def test_timing_cache_is_per_gpu_and_version(tmp_path):
    a = timing_cache_path(tmp_path, "11.4.0", "NVIDIA H200")
    assert a.parent == tmp_path and a.name == "timing-nvidia_h200-trt11.4.0.cache"
    assert timing_cache_path(tmp_path, "11.4.0", "Tesla T4") != a


# -- real builds with TensorRT-RTX ------------------------------------------------------------------

needs_rtx = pytest.mark.skipif(
    choose_flavour("tensorrt-rtx") is None, reason="TensorRT-RTX is not installed (pip install '.[rtx]')"
)


@pytest.fixture(scope="module")
def rtx():
    from engines.tensorrt_flavour import load_flavour

    return load_flavour("tensorrt-rtx")


@pytest.fixture(scope="module")
def shipped() -> tuple[Path, ModelSpec]:
    model = onnx.load(str(SHIPPED_MODEL), load_external_data=False)
    return SHIPPED_MODEL, ModelSpec.from_metadata({p.key: p.value for p in model.metadata_props})


@pytest.fixture(scope="module")
def precision_files(shipped, tmp_path_factory) -> dict[str, Path]:
    """The shipped model in fp32, fp16 and int8, converted as ``precision_model`` converts them.

    int8 is calibrated here on one chunk of random conditioning instead of real songs: what is
    tested is whether TensorRT-RTX takes the Q/DQ graph, which the calibration values do not change.
    """
    from engines.onnxruntime_engine import OnnxRuntimeEngine
    from engines.precision import quantize_int8, to_mixed_fp16

    path, spec = shipped
    out = tmp_path_factory.mktemp("precisions")
    reference = OnnxRuntimeEngine(path, threads=1)
    feed = make_inputs(spec, 2, 64, np.random.default_rng(0))
    feed.update({STATE_IN_PREFIX + k: np.asarray(v) for k, v in reference.initial_state(2).items()})
    files = {"fp32": path, "fp16": out / "fp16.onnx", "int8": out / "int8.onnx"}
    onnx.save(to_mixed_fp16(onnx.load(str(path))), str(files["fp16"]))
    onnx.save(to_mixed_fp16(quantize_int8(onnx.load(str(path)), [feed])), str(files["int8"]))
    return files


@needs_rtx
@pytest.mark.parametrize("precision", ["fp32", "fp16", "int8"])
@pytest.mark.parametrize("profile_name", ["realtime", "offline"])
def test_rtx_builds_the_shipped_model(rtx, shipped, precision_files, precision, profile_name, tmp_path):
    _, spec = shipped
    plan = tmp_path / "engine.plan"
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # no timing-cache calls: they are no-ops in RTX
        result = build_plan(
            precision_files[precision],
            plan,
            flavour=rtx,
            spec=spec,
            profile=PROFILES[profile_name],
            profile_name=profile_name,
            target="cc 8.6",
            workspace_mib=512,
            rtx_targets=("8.6",),
        )
    assert plan.is_file() and plan.stat().st_size == result.plan_bytes > 1_000_000
    # Every input and state tensor of the parsed network has the profile's shapes, read back from it.
    expected = profile_shapes(spec, PROFILES[profile_name])
    assert result.input_shapes == expected
    states = {n for n in expected if n.startswith(STATE_IN_PREFIX)}
    assert states == {STATE_IN_PREFIX + s for s in spec.state_shapes}
    assert set(result.outputs) == {"poses"} | {STATE_OUT_PREFIX + s for s in spec.state_shapes}
    # RTX takes our Q/DQ int8 graph as it is: the quantize layers reach the builder and it builds.
    assert (result.quantize_layers > 0) == (precision == "int8")
    assert result.flavour.startswith("TensorRT-RTX ")
    assert list(tmp_path.iterdir()) == [plan]  # no timing cache or leftovers


@needs_rtx
def test_a_second_build_is_a_cache_hit(rtx, shipped, tmp_path):
    from engines.tensorrt_engine import ensure_plan

    path, _ = shipped
    settings = EngineSettings(cache_dir=tmp_path, profile="realtime", precision="fp32")
    plan, built = ensure_plan(path, settings, flavour=rtx)
    assert built is not None and built.target == "cc " + ",".join(RTX_DEFAULT_TARGETS)
    mtime = plan.stat().st_mtime_ns
    again, rebuilt = ensure_plan(path, settings, flavour=rtx)
    assert again == plan and rebuilt is None and plan.stat().st_mtime_ns == mtime
    # Other target compute capabilities are another engine.
    other = EngineSettings(cache_dir=tmp_path, profile="realtime", precision="fp32", rtx_targets=("8.9",))
    plan_89, built_89 = ensure_plan(path, other, flavour=rtx)
    assert plan_89 != plan and built_89 is not None and built_89.target == "cc 8.9"
    assert sorted(p.name for p in tmp_path.glob("*.plan")) == sorted([plan.name, plan_89.name])
    assert not list(tmp_path.glob("timing-*"))  # TensorRT-RTX keeps no timing cache


@needs_rtx
def test_garbage_onnx_file_is_refused_with_the_parser_errors(rtx, shipped, tmp_path):
    _, spec = shipped
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(SHIPPED_MODEL.read_bytes()[:5000])
    with pytest.raises(EngineBuildError, match=r"could not parse .*broken\.onnx:\n  \S"):
        _build(rtx, broken, spec, tmp_path)


@needs_rtx
def test_unknown_operator_is_listed_with_its_node(rtx, shipped, tmp_path):
    path, spec = shipped
    model = onnx.load(str(path))
    node = next(n for n in model.graph.node if n.op_type not in ("Scan", "Loop"))
    node.op_type = "NoSuchOperator"
    node.name = node.name or "renamed_node"
    broken = tmp_path / "unknown_op.onnx"
    onnx.save(model, str(broken))
    with pytest.raises(EngineBuildError, match="could not parse") as info:
        _build(rtx, broken, spec, tmp_path)
    assert "NoSuchOperator" in str(info.value) and node.name in str(info.value)


@needs_rtx
def test_errors_of_every_build_are_reported(rtx, shipped, tmp_path):
    """TensorRT keeps the first logger it is given; a logger per build would lose the later errors."""
    path, spec = shipped
    model = onnx.load(str(path))
    model.graph.node[0].op_type = "NoSuchOperator"
    broken = tmp_path / "unknown_op.onnx"
    onnx.save(model, str(broken))
    for _ in range(2):
        with pytest.raises(EngineBuildError, match="NoSuchOperator"):
            _build(rtx, broken, spec, tmp_path)


@needs_rtx
def test_a_profile_beyond_the_model_chunks_is_refused(rtx, shipped, tmp_path):
    path, spec = shipped
    long_chunks = ShapeProfile(min=(1, 16), opt=(4, 128), max=(8, 512))
    wanted = r"(?s)profile 'long' does not fit.*16 to 128 frames.*16\.\.512"
    with pytest.raises(EngineBuildError, match=wanted):
        _build(rtx, path, spec, tmp_path, profile=long_chunks, name="long")


@needs_rtx
def test_a_profile_against_a_fixed_batch_is_refused(rtx, shipped, tmp_path):
    path, spec = shipped
    model = onnx.load(str(path))
    for value in model.graph.input:
        value.type.tensor_type.shape.dim[0].dim_value = 1  # a model exported for one song at a time
    fixed = tmp_path / "batch1.onnx"
    onnx.save(model, str(fixed))
    with pytest.raises(EngineBuildError, match=r"(?s)input 'music' has dimension 0 fixed at 1.*1\.\.8"):
        _build(rtx, fixed, spec, tmp_path)
    assert not (tmp_path / "engine.plan").exists()


@needs_rtx
def test_a_profile_for_another_model_names_the_missing_tensors(rtx, shipped, tmp_path):
    path, _ = shipped
    with pytest.raises(EngineBuildError, match=r"input 'state_in_h1' is not in the profile") as info:
        _build(rtx, path, tiny_spec(32), tmp_path)
    assert "the profile sets 'state_in_pose'" not in str(info.value)  # both models have that one
    assert "the profile sets 'state_in_h', which the model does not have" in str(info.value)


def _build(flavour, onnx_path, spec, tmp_path, *, profile=None, name="realtime"):
    return build_plan(
        onnx_path,
        tmp_path / "engine.plan",
        flavour=flavour,
        spec=spec,
        profile=profile or PROFILES["realtime"],
        profile_name=name,
        target="cc 8.6",
        workspace_mib=512,
        rtx_targets=("8.6",),
    )
