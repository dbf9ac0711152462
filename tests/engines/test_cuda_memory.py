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
    from engines.state import DEVICE_ROWS

    host = rng.standard_normal((10, 3, 4)).astype(np.float32)
    rows = DeviceRows.from_host(host)
    assert rows.shape == (10, 3, 4)
    np.testing.assert_array_equal(rows.to_host(), host)
    for pick in ([2, 3, 4], [7, 1, 8, 9]):
        np.testing.assert_array_equal(rows.take_rows(pick).to_host(), host[pick])
    pool = {"h": rows}
    new = {"h": DeviceRows.from_host(np.full((2, 3, 4), 5.0, np.float32))}
    DEVICE_ROWS.put(pool, [6, 0], new)
    host[[6, 0]] = 5.0
    np.testing.assert_array_equal(rows.to_host(), host)
    DEVICE_ROWS.zero(pool, [3, 4])
    host[[3, 4]] = 0.0
    np.testing.assert_array_equal(DEVICE_ROWS.take(pool, list(range(10)))["h"].to_host(), host)


def test_pinned_buffer_and_gpu_name():
    from engines.cuda_memory import PinnedBuffer, gpu_name

    buf = PinnedBuffer(16)
    buf.array[:] = np.arange(16)
    assert buf.array.sum() == 120
    assert gpu_name()
