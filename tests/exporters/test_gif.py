"""The gif: stick figures of the excerpt at the preview rate, the floor flashing red on the beats."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageSequence
from test_bvh_fbx_support import random_dance

from exporters.gif import write_gif

_BEAT_RED = np.array([0xCF, 0x22, 0x2E])


def test_gif_covers_the_excerpt_at_the_preview_rate_and_flashes_on_the_beats(
    rng: np.random.Generator, tmp_path: Path
) -> None:
    path = write_gif(
        random_dance(rng, 3.0, 30), tmp_path / "clip.gif", beat_times=np.array([0.5, 1.0]), preview_fps=10
    )
    with Image.open(path) as image:
        assert image.format == "GIF"
        assert image.n_frames == 30  # 3 s at 10 fps
        red = [
            bool((np.abs(np.asarray(frame.convert("RGB"), dtype=int) - _BEAT_RED).max(axis=-1) < 40).any())
            for frame in ImageSequence.Iterator(image)
        ]
    assert [i for i, flashed in enumerate(red) if flashed] == [5, 10]  # the frames at 0.5 s and 1.0 s
