"""Preview pictures: the contact sheet and the animated clip are written and readable."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from choreo.motion import REST_PELVIS_HEIGHT_M, Motion
from choreo.preview import write_animation, write_contact_sheet


def _waving(n: int = 90, fps: int = 30) -> Motion:
    rotations = np.zeros((n, 24, 3))
    rotations[:, 16, 2] = np.arange(n) / fps * 0.8  # the left arm rises steadily: no two frames alike
    root = np.tile([0.0, REST_PELVIS_HEIGHT_M, 0.0], (n, 1))
    return Motion(fps=fps, root_translation=root, rotations=rotations)


def test_contact_sheet_is_a_png_with_one_panel_per_beat(tmp_path: Path) -> None:
    path = write_contact_sheet(_waving(), np.array([0.5, 1.0, 1.5, 2.0]), tmp_path / "sheet.png")
    with Image.open(path) as image:
        assert image.format == "PNG" and image.width > image.height


def test_gif_covers_the_excerpt_at_the_preview_rate(tmp_path: Path) -> None:
    path = write_animation(_waving(), np.array([0.5, 1.0]), tmp_path / "clip.gif", preview_fps=10)
    with Image.open(path) as image:
        assert image.format == "GIF"
        assert image.n_frames == 30  # 3 s at 10 fps
