"""The contact sheet draws one panel per chosen pose, spread over the whole dance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from sheet_checks import figure_above, sheet_panels

from choreo.motion import REST_PELVIS_HEIGHT_M, Motion
from exporters.contact_sheet import contact_sheet_frames, write_contact_sheet


def _waving(n: int = 90, fps: int = 30) -> Motion:
    rotations = np.zeros((n, 24, 3))
    rotations[:, 16, 2] = np.arange(n) / fps * 0.8  # the left arm rises steadily: no two frames alike
    root = np.tile([0.0, REST_PELVIS_HEIGHT_M, 0.0], (n, 1))
    return Motion(fps=fps, root_translation=root, rotations=rotations)


@pytest.mark.parametrize(("beats", "panels"), [(4, 4), (11, 11), (40, 16), (0, 16)])
def test_contact_sheet_draws_one_panel_per_beat_up_to_sixteen(
    tmp_path: Path, beats: int, panels: int
) -> None:
    motion = _waving()
    times = np.linspace(0.1, 2.9, beats)
    path = write_contact_sheet(motion, tmp_path / "sheet.png", times_s=times)
    centres = sheet_panels(path)
    assert len(centres) == panels
    rows = sorted({r for r, _ in centres})
    assert len(rows) == int(np.ceil(panels / 8))  # rows of eight
    assert all(figure_above(path, c) for c in centres)


def test_contact_sheet_with_side_views_doubles_the_panel_rows(tmp_path: Path) -> None:
    motion = _waving()
    path = write_contact_sheet(
        motion, tmp_path / "sheet.png", times_s=np.array([0.5, 1.0, 1.5]), side_view=True, height_plot=True
    )
    centres = sheet_panels(path)
    assert len(centres) == 6
    assert len({r for r, _ in centres}) == 2  # front row above side row
    with Image.open(path) as image:
        height = image.height
    assert max(r for r, _ in centres) < 0.75 * height  # the height plot sits below the poses


def test_panel_frames_spread_over_the_whole_song() -> None:
    motion = _waving(n=300)  # 10 s
    frames = contact_sheet_frames(motion, np.arange(0.0, 10.0, 0.5), max_panels=5)
    np.testing.assert_array_equal(frames, [0, 75, 150, 210, 285])  # beats 0, 5, 10, 14 and 19 of 20
    np.testing.assert_array_equal(contact_sheet_frames(motion, np.array([]), max_panels=4), [0, 75, 150, 225])
    np.testing.assert_array_equal(contact_sheet_frames(motion, np.array([-1.0, 99.0])), [0, 299])
