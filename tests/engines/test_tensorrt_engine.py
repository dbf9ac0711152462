"""The TensorRT runtime path: what needs no GPU here, the rest wherever a GPU the flavour serves is present.

No machine this project has can run a TensorRT engine (CPU-only CI; the lent H200 is Hopper, which
TensorRT-RTX does not serve, and TensorRT 11 does not install here), so the GPU tests below are skipped
with the reason on every one of them.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from engine_testkit import SHIPPED_MODEL, make_inputs, to_numpy_state

from choreo.contracts.model_spec import ModelSpec
from choreo.errors import EngineError
from engines.base import POSES_OUTPUT
from engines.registry import BACKENDS
from engines.settings import EngineSettings
from engines.tensorrt_engine import RuntimeCacheFile, engine_tensor_names, slot_buffer_floats
from engines.tensorrt_flavour import choose_flavour

PROFILES = EngineSettings().profiles
needs_rtx = pytest.mark.skipif(
    choose_flavour("tensorrt-rtx") is None, reason="TensorRT-RTX is not installed (pip install '.[rtx]')"
)


@pytest.fixture(scope="module")
def spec() -> ModelSpec:
    model = onnx.load(str(SHIPPED_MODEL), load_external_data=False)
    return ModelSpec.from_metadata({p.key: p.value for p in model.metadata_props})


def test_slot_buffers_hold_the_profile_maximum(spec):
    sizes = slot_buffer_floats(spec, PROFILES["offline"])
    assert sizes["music"] == 256 * 128 * spec.feature_dim
    assert sizes["guide"] == 256 * 128 * 75
    assert sizes["junction"] == 256 * 128 * 2
    assert sizes["latent"] == 256 * 128 * spec.latent_dim
    assert sizes[POSES_OUTPUT] == 256 * 128 * 75
    assert set(sizes) == {"music", "guide", "junction", "latent", POSES_OUTPUT}
    assert not any(name.startswith("state") for name in sizes)  # the state lives in the caller's rows


@needs_rtx
def test_the_runtime_expects_exactly_the_networks_tensors(spec):
    from engines.tensorrt_flavour import load_flavour

    rtx = load_flavour("tensorrt-rtx")
    with rtx.capture():
        builder = rtx.trt.Builder(rtx.logger)
        network = builder.create_network(0)
        parser = rtx.trt.OnnxParser(network, rtx.logger)
        assert parser.parse_from_file(str(SHIPPED_MODEL))
    io = {network.get_input(i).name for i in range(network.num_inputs)}
    io |= {network.get_output(i).name for i in range(network.num_outputs)}
    assert engine_tensor_names(spec) == io


def test_runtime_cache_file_is_per_plan_and_gpu(tmp_path):
    plan = tmp_path / "choreo-rtx-fp16-offline-abc.plan"
    cache = RuntimeCacheFile(plan, "NVIDIA GeForce RTX 4090")
    assert cache.path == tmp_path / "choreo-rtx-fp16-offline-abc.nvidia_geforce_rtx_4090.runtime-cache"
    assert RuntimeCacheFile(plan, "NVIDIA RTX A6000").path != cache.path
    assert RuntimeCacheFile(tmp_path / "other.plan", "NVIDIA GeForce RTX 4090").path != cache.path


def test_runtime_cache_file_round_trip(tmp_path):
    cache = RuntimeCacheFile(tmp_path / "e.plan", "NVIDIA GeForce RTX 4090")
    assert cache.read() is None  # a first start compiles everything
    cache.write(b"kernels v1")
    assert cache.read() == b"kernels v1"
    restarted = RuntimeCacheFile(tmp_path / "e.plan", "NVIDIA GeForce RTX 4090")  # a worker restart
    assert restarted.read() == b"kernels v1"
    restarted.write(b"kernels v2, more shapes")
    assert cache.read() == b"kernels v2, more shapes"
    assert sorted(p.name for p in tmp_path.iterdir()) == [cache.path.name]  # no temporary files left
    cache.path.write_bytes(b"")
    assert cache.read() is None


@needs_rtx
def test_an_engine_that_cannot_run_here_is_refused_with_the_reason(spec, tmp_path):
    if BACKENDS["tensorrt"].probe() is None:
        pytest.skip("TensorRT runs on this machine; the GPU tests cover loading")
    from engines.tensorrt_engine import TensorRTEngine, ensure_plan
    from engines.tensorrt_flavour import load_flavour

    rtx = load_flavour("tensorrt-rtx")
    settings = EngineSettings(cache_dir=tmp_path, profile="realtime", precision="fp32")
    plan, _ = ensure_plan(SHIPPED_MODEL, settings, flavour=rtx)
    wanted = r"cannot load the engine .*\.plan: TensorRT-RTX .* cannot run here"
    with pytest.raises(EngineError, match=wanted):
        TensorRTEngine(plan, spec=spec, profile=PROFILES["realtime"], flavour=rtx)


# -- on a GPU the flavour serves -------------------------------------------------------------------


@pytest.fixture(scope="module")
def gpu_engine_settings(tmp_path_factory):
    reason = BACKENDS["tensorrt"].probe()
    if reason is not None:
        pytest.skip(f"needs a GPU TensorRT runs on: {reason}")
    return EngineSettings(cache_dir=tmp_path_factory.mktemp("engines"), profile="realtime", precision="fp32")


@pytest.mark.gpu
def test_engine_matches_onnxruntime_and_keeps_the_state_on_the_device(gpu_engine_settings, rng):
    from engines.cuda_memory import DeviceRows
    from engines.onnxruntime_engine import OnnxRuntimeEngine
    from engines.tensorrt_engine import TensorRTEngine

    engine = TensorRTEngine.from_onnx(SHIPPED_MODEL, gpu_engine_settings)
    reference = OnnxRuntimeEngine(SHIPPED_MODEL, threads=1)
    state, ref_state = engine.initial_state(3), reference.initial_state(3)
    for frames in (64, 16):
        inputs = make_inputs(engine.spec, 3, frames, rng)
        poses, state = engine.run(inputs, state)
        expected, ref_state = reference.run(inputs, ref_state)
        assert all(isinstance(v, DeviceRows) for v in state.values())
        np.testing.assert_allclose(poses, expected, atol=1e-3)
    for name, value in to_numpy_state(state).items():
        np.testing.assert_allclose(value, ref_state[name], atol=1e-3)
    engine.close()


@pytest.mark.gpu
def test_rtx_runtime_cache_is_saved_and_reused_across_restarts(gpu_engine_settings, rng):
    from engines.tensorrt_engine import TensorRTEngine

    first = TensorRTEngine.from_onnx(SHIPPED_MODEL, gpu_engine_settings)
    if not first.flavour.is_rtx:
        pytest.skip(f"{first.flavour.label} has no runtime cache")
    assert not first.runtime_cache_loaded
    first.run(make_inputs(first.spec, 2, 32, rng), first.initial_state(2))
    first.close()
    cache_files = list(gpu_engine_settings.cache_dir.glob("*.runtime-cache"))
    assert len(cache_files) == 1 and cache_files[0].stat().st_size > 0
    second = TensorRTEngine.from_onnx(SHIPPED_MODEL, gpu_engine_settings)  # a worker restart
    assert second.runtime_cache_loaded


@pytest.mark.gpu
def test_a_chunk_outside_the_profile_is_refused(gpu_engine_settings, rng):
    from engines.tensorrt_engine import TensorRTEngine

    engine = TensorRTEngine.from_onnx(SHIPPED_MODEL, gpu_engine_settings)
    with pytest.raises(EngineError, match="outside the engine's profile"):
        engine.run(make_inputs(engine.spec, 9, 16, rng), engine.initial_state(9))
