"""Row helpers that let the batcher move state between songs without leaving the device."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from choreo.errors import EngineError
from engines.state import concat_states, put_rows, state_batch, take_rows, zero_rows

BACKENDS = ["numpy", "torch"]


def _as(kind, array):
    if kind == "torch":
        if importlib.util.find_spec("torch") is None:
            pytest.skip("torch is not installed")
        import torch

        return torch.from_numpy(array.copy())
    return array.copy()


def _np(value):
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


@pytest.fixture(params=BACKENDS)
def kind(request):
    return request.param


def _pool(kind, rng):
    h = rng.standard_normal((6, 4)).astype(np.float32)
    c = rng.standard_normal((6, 2, 3)).astype(np.float32)
    return {"h": _as(kind, h), "c": _as(kind, c)}, {"h": h, "c": c}


@pytest.mark.parametrize("rows", [[1, 2, 3], [4, 0, 2], [5]])
def test_take_rows_picks_rows_in_order(kind, rng, rows):
    pool, ref = _pool(kind, rng)
    taken = take_rows(pool, rows)
    for name in ref:
        np.testing.assert_array_equal(_np(taken[name]), ref[name][rows])


def test_put_rows_writes_only_those_rows(kind, rng):
    pool, ref = _pool(kind, rng)
    new = {
        "h": _as(kind, np.full((2, 4), 7.0, np.float32)),
        "c": _as(kind, np.full((2, 2, 3), 8.0, np.float32)),
    }
    put_rows(pool, [4, 1], new)
    expected_h = ref["h"].copy()
    expected_h[[4, 1]] = 7.0
    np.testing.assert_array_equal(_np(pool["h"]), expected_h)
    assert (_np(pool["c"])[[4, 1]] == 8.0).all()
    np.testing.assert_array_equal(_np(pool["c"])[[0, 2, 3, 5]], ref["c"][[0, 2, 3, 5]])


def test_zero_rows_resets_a_slot(kind, rng):
    pool, ref = _pool(kind, rng)
    zero_rows(pool, [2])
    assert (_np(pool["h"])[2] == 0).all()
    np.testing.assert_array_equal(_np(pool["h"])[[0, 1, 3, 4, 5]], ref["h"][[0, 1, 3, 4, 5]])


def test_concat_and_batch_size(kind, rng):
    pool, ref = _pool(kind, rng)
    both = concat_states([take_rows(pool, [0]), take_rows(pool, [3, 5])])
    assert state_batch(both) == 3
    np.testing.assert_array_equal(_np(both["h"]), ref["h"][[0, 3, 5]])


def test_mismatched_batch_is_an_error():
    with pytest.raises(EngineError, match="batch size"):
        state_batch({"h": np.zeros((2, 3)), "c": np.zeros((3, 3))})


def test_missing_state_in_engine_output_is_an_error(rng):
    pool, _ = _pool("numpy", rng)
    with pytest.raises(EngineError, match="missing"):
        put_rows(pool, [0], {"h": np.zeros((1, 4), np.float32)})
