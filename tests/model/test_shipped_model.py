"""The shipped guided ONNX model keeps the engine contract (no torch needed)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from choreo.contracts.model_spec import ModelSpec
from choreo.models import DEFAULT_MODEL_PATH
from engines.base import STATE_IN_PREFIX, STATE_OUT_PREFIX
from engines.network.config import POSE_DIM
from engines.onnxruntime_engine import OnnxRuntimeEngine


@pytest.fixture(scope="module")
def engine() -> OnnxRuntimeEngine:
    return OnnxRuntimeEngine(DEFAULT_MODEL_PATH)


def _chunk(rng: np.random.Generator, spec: ModelSpec, batch: int, frames: int) -> dict[str, np.ndarray]:
    """Random music and latent, a guide of small rotations around a standing pelvis, junction times."""
    guide = 0.2 * rng.standard_normal((batch, frames, 75)).astype(np.float32)
    guide[..., 72:] = (0.0, 0.9, 0.0)
    return {
        "music": rng.standard_normal((batch, frames, spec.feature_dim)).astype(np.float32),
        "guide": guide,
        "junction": rng.uniform(0.0, 4.0, (batch, frames, 2)).astype(np.float32),
        "latent": rng.standard_normal((batch, frames, spec.latent_dim)).astype(np.float32),
    }


def test_model_file_is_one_self_contained_onnx_file() -> None:
    model = onnx.load(str(DEFAULT_MODEL_PATH), load_external_data=False)
    onnx.checker.check_model(model)
    assert model.opset_import[0].version >= 17
    assert not any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer)
    assert any(node.op_type == "Scan" for node in model.graph.node), "the chunk loop runs inside the graph"


def test_metadata_describes_the_contract(engine: OnnxRuntimeEngine) -> None:
    spec = engine.spec
    assert spec.styles == (), "the guided model takes no style: the plan's phrases carry it"
    assert list(spec.input_widths) == ["music", "guide", "junction", "latent"]
    assert spec.native_fps == 30
    assert spec.feature_dim == 35
    assert spec.version
    assert list(spec.state_shapes) == ["h1", "c1", "h2", "c2", "pose", "latent"]
    assert spec.state_shapes["pose"] == (POSE_DIM,)
    assert spec.state_shapes["latent"] == (spec.latent_dim,)
    assert spec.trained, "the shipped model must be the trained one"
    assert any("mocap.cs.cmu.edu" in line for line in spec.credits)


def test_graph_names_match_the_contract() -> None:
    model = onnx.load(str(DEFAULT_MODEL_PATH), load_external_data=False)
    spec = ModelSpec.from_metadata({p.key: p.value for p in model.metadata_props})
    inputs = [i.name for i in model.graph.input]
    outputs = [o.name for o in model.graph.output]
    assert inputs == [*spec.input_widths, *(STATE_IN_PREFIX + n for n in spec.state_shapes)]
    assert outputs == ["poses", *(STATE_OUT_PREFIX + n for n in spec.state_shapes)]
    music = model.graph.input[0].type.tensor_type.shape.dim
    assert music[0].dim_param and music[1].dim_param, "batch and time are dynamic"


@pytest.mark.parametrize(("batch", "frames"), [(1, 16), (3, 37), (2, 128)])
def test_chunks_of_any_allowed_size_and_batch(
    engine: OnnxRuntimeEngine, rng: np.random.Generator, batch: int, frames: int
) -> None:
    state = engine.initial_state(batch)
    poses, new_state = engine.run(_chunk(rng, engine.spec, batch, frames), state)
    assert poses.shape == (batch, frames, 75)
    assert poses.dtype == np.float32
    assert np.all(np.isfinite(poses))
    assert np.all(np.linalg.norm(poses[..., :72].reshape(batch, frames, 24, 3), axis=-1) <= np.pi + 1e-4)
    assert set(new_state) == set(state)
    for name, value in new_state.items():
        assert value.shape == (batch, *engine.spec.state_shapes[name])


def test_chunked_generation_equals_one_long_run(engine: OnnxRuntimeEngine, rng: np.random.Generator) -> None:
    inputs = _chunk(rng, engine.spec, 2, 128)
    whole, whole_state = engine.run(inputs, engine.initial_state(2))
    parts, state = [], engine.initial_state(2)
    for start, end in ((0, 16), (16, 61), (61, 128)):
        poses, state = engine.run({k: v[:, start:end] for k, v in inputs.items()}, state)
        parts.append(poses)
    np.testing.assert_allclose(np.concatenate(parts, axis=1), whole, atol=1e-4)
    for name in whole_state:
        np.testing.assert_allclose(state[name], whole_state[name], atol=1e-4)


def test_same_inputs_same_dance_and_batch_rows_are_independent(
    engine: OnnxRuntimeEngine, rng: np.random.Generator
) -> None:
    inputs = _chunk(rng, engine.spec, 3, 32)
    a, _ = engine.run(inputs, engine.initial_state(3))
    b, _ = engine.run({k: v[1:2] for k, v in inputs.items()}, engine.initial_state(1))
    np.testing.assert_allclose(a[1:2], b, atol=1e-5)
