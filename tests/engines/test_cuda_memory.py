"""Device-resident state rows through cuda-python (the TensorRT backend's memory); needs a GPU."""

from __future__ import annotations

import numpy as np
import pytest

from engines.registry import cuda_gpu

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module", autouse=True)
def _needs_gpu():
    gpu = cuda_gpu()
    if isinstance(gpu, str):
        pytest.skip(f"no GPU for cuda-python: {gpu}")


def test_rows_round_trip_and_row_operations(rng):
    from engines.cuda_memory import DeviceRows
    from engines.state import put_rows, take_rows, zero_rows

    host = rng.standard_normal((10, 3, 4)).astype(np.float32)
    rows = DeviceRows.from_host(host)
    assert rows.shape == (10, 3, 4)
    np.testing.assert_array_equal(rows.to_host(), host)
    for pick in ([2, 3, 4], [7, 1, 8, 9]):
        np.testing.assert_array_equal(rows.take_rows(pick).to_host(), host[pick])
    pool = {"h": rows}
    new = {"h": DeviceRows.from_host(np.full((2, 3, 4), 5.0, np.float32))}
    put_rows(pool, [6, 0], new)
    host[[6, 0]] = 5.0
    np.testing.assert_array_equal(rows.to_host(), host)
    zero_rows(pool, [3, 4])
    host[[3, 4]] = 0.0
    np.testing.assert_array_equal(take_rows(pool, list(range(10)))["h"].to_host(), host)
    both = DeviceRows.concat([rows.take_rows([1]), rows.take_rows([9])])
    np.testing.assert_array_equal(both.to_host(), host[[1, 9]])


def test_pinned_buffer_and_gpu_name():
    from engines.cuda_memory import PinnedBuffer, gpu_name

    buf = PinnedBuffer(16)
    buf.array[:] = np.arange(16)
    assert buf.array.sum() == 120
    assert gpu_name()
