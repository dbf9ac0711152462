"""Fixtures for the mocap tests: the real CMU clips, retargeted once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from choreo.mocap.retarget import retarget
from choreo.motion.bvh_reader import BvhData, read_bvh
from choreo.motion.motion import Motion

# The shortest clip of each mocap folder, so that the tests stay fast.
SHORT_CLIPS = {
    "salsa": "cmu_60_61_salsa/60_10_scaled.bvh",
    "modern": "cmu_05_modern/05_03.bvh",
    "breakdance": "cmu_85_breakdance/85_04_keijiro_neo30fps.bvh",
    "whirl": "cmu_55_whirl/55_01_isaacgym.bvh",
}


@pytest.fixture(scope="session")
def mocap_dir(shared_data: Path) -> Path:
    path = shared_data / "mocap"
    if not path.is_dir():
        pytest.skip(f"mocap not found at {path}")
    return path


@pytest.fixture(scope="session")
def source_clips(mocap_dir: Path) -> dict[str, BvhData]:
    return {style: read_bvh(mocap_dir / rel) for style, rel in SHORT_CLIPS.items()}


@pytest.fixture(scope="session")
def retargeted(source_clips: dict[str, BvhData]) -> dict[str, Motion]:
    return {style: retarget(bvh, source=style) for style, bvh in source_clips.items()}
