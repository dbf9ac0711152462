"""The BVH's frame lines, written a character column at a time, are Python's ``%.{d}f`` text to the byte."""

from __future__ import annotations

import numpy as np
import pytest

from exporters.bvh import _fixed_point_rows


def _python_rows(table: np.ndarray, decimals: np.ndarray) -> str:
    row_format = " ".join(f"%.{d}f" for d in decimals)
    return "".join(row_format % tuple(row) + "\n" for row in table.tolist())


def _hard_numbers(rng: np.random.Generator, rows: int, cols: int) -> np.ndarray:
    """Ordinary numbers over many decades, and the ones rounding gets wrong most easily."""
    table = rng.uniform(-200, 200, size=(rows, cols)) * 10.0 ** rng.integers(-6, 4, size=(rows, cols))
    k = rng.integers(-(10**7), 10**7, size=(rows, cols))
    table[:40] = (k[:40] + 0.5) / 1e4  # halves at 4 decimals (the nearest double rounds either way)
    table[40:80] = (k[40:80] + 0.5) / 1e6  # and at 6
    table[80:100] = np.nextafter((k[80:100] + 0.5) / 1e4, np.inf)
    table[100:110] = -rng.uniform(0, 5e-5, size=(10, cols))  # Python writes -0.0000
    table[110:115] = 0.0
    table[115:120] = 179.99995 + rng.uniform(-1e-9, 1e-9, size=(5, cols))  # carries into the whole part
    table[120:122] = rng.uniform(-1, 1, size=(2, cols)) * 1e9  # beyond the integer rounding's bound
    return table + 0.0


@pytest.mark.parametrize(
    "decimals", [[6, 6, 6] + [4] * 12, [4] * 15, [0, 1, 2] + [3] * 12], ids=["metres", "centimetres", "few"]
)
def test_rows_are_pythons_formatting(decimals: list[int]) -> None:
    places = np.array(decimals)
    for seed in range(4):
        table = _hard_numbers(np.random.default_rng(seed), 400, places.size)
        assert _fixed_point_rows(table, places) == _python_rows(table, places)


def test_one_row_and_one_column() -> None:
    for table in (np.array([[-1.25, 3.0, 1e-7]]), np.array([[2.5], [-0.00004], [999.99996]])):
        places = np.full(table.shape[1], 4)
        assert _fixed_point_rows(table, places) == _python_rows(table, places)
