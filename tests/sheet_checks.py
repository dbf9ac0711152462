"""Reading contact sheets back: where their panels are, and whether each shows a figure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image
from scipy import ndimage

__all__ = ["figure_above", "sheet_panels"]

_FLOOR_RGB = np.array([0x2D, 0xA4, 0x4E])  # the sheet's floor colour, drawn once per panel


def sheet_panels(path: Path) -> list[tuple[int, int]]:
    """The (row, column) pixel centres of the floor lines in the PNG, top to bottom, left to right."""
    with Image.open(path) as image:
        assert image.format == "PNG"
        pixels = np.asarray(image.convert("RGB"), dtype=int)
    floor = np.abs(pixels - _FLOOR_RGB).max(axis=-1) < 40
    labels, count = ndimage.label(floor)
    boxes = ndimage.find_objects(labels)
    centres = [((b[0].start + b[0].stop) // 2, (b[1].start + b[1].stop) // 2) for b in boxes]
    # A floor line is long and thin; anything else of that colour would be a bug.
    assert all(b[1].stop - b[1].start > 5 * (b[0].stop - b[0].start) for b in boxes)
    return sorted(centres)


def figure_above(path: Path, centre: tuple[int, int]) -> bool:
    """Whether dark or limb-coloured pixels stand above the floor line at ``centre``."""
    with Image.open(path) as image:
        pixels = np.asarray(image.convert("RGB"), dtype=int)
    row, col = centre
    above = pixels[max(row - 120, 0) : row - 3, col - 20 : col + 20]
    return bool(np.any(above.min(axis=-1) < 120))
