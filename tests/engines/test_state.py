"""Row operations that let the batcher move state between songs without leaving the device."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from choreo.errors import EngineError
from engines.state import NUMPY_ROWS, TORCH_ROWS

BACKENDS = ["numpy", "torch"]


def _as(kind, array):
    if kind == "torch":
        if importlib.util.find_spec("torch") is None:
            pytest.skip("torch is not installed")
        import torch

        return torch.from_numpy(array.copy())
    return array.copy()


def _rows(kind):
    return TORCH_ROWS if kind == "torch" else NUMPY_ROWS


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
    taken = _rows(kind).take(pool, rows)
    for name in ref:
        np.testing.assert_array_equal(_np(taken[name]), ref[name][rows])


def test_put_rows_writes_only_those_rows(kind, rng):
    pool, ref = _pool(kind, rng)
    new = {
        "h": _as(kind, np.full((2, 4), 7.0, np.float32)),
        "c": _as(kind, np.full((2, 2, 3), 8.0, np.float32)),
    }
    _rows(kind).put(pool, [4, 1], new)
    expected_h = ref["h"].copy()
    expected_h[[4, 1]] = 7.0
    np.testing.assert_array_equal(_np(pool["h"]), expected_h)
    assert (_np(pool["c"])[[4, 1]] == 8.0).all()
    np.testing.assert_array_equal(_np(pool["c"])[[0, 2, 3, 5]], ref["c"][[0, 2, 3, 5]])


def test_zero_rows_resets_a_slot(kind, rng):
    pool, ref = _pool(kind, rng)
    _rows(kind).zero(pool, [2])
    assert (_np(pool["h"])[2] == 0).all()
    np.testing.assert_array_equal(_np(pool["h"])[[0, 1, 3, 4, 5]], ref["h"][[0, 1, 3, 4, 5]])


def test_a_contiguous_run_is_taken_as_a_view(kind, rng):
    pool, ref = _pool(kind, rng)
    taken = _rows(kind).take(pool, [2, 3, 4])
    np.testing.assert_array_equal(_np(taken["h"]), ref["h"][2:5])
    _rows(kind).zero(pool, [3])
    assert (_np(taken["h"])[1] == 0).all(), "a contiguous take should share the pool's memory"


def test_missing_state_in_engine_output_is_an_error(rng):
    pool, _ = _pool("numpy", rng)
    with pytest.raises(EngineError, match="missing"):
        NUMPY_ROWS.put(pool, [0], {"h": np.zeros((1, 4), np.float32)})
