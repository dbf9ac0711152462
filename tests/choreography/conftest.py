"""A small real phrase library, built once per session from three CMU clips."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from choreo.choreography.library import PhraseLibrary, build_library, load_library
from choreo.mocap.library_clips import read_clips

CLIPS = {
    "cmu_05_modern": ("05_02.bvh", "05_04.bvh", "05_12.bvh"),
    "cmu_85_breakdance": ("85_14_keijiro_neo30fps.bvh",),
}


@pytest.fixture(scope="session")
def clip_folders(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("mocap")
    folders = []
    for folder, names in CLIPS.items():
        (root / folder).mkdir()
        for name in names:
            shutil.copy(shared_data / "mocap" / folder / name, root / folder / name)
        folders.append(root / folder)
    return folders


@pytest.fixture(scope="session")
def small_library(clip_folders: list[Path], tmp_path_factory: pytest.TempPathFactory) -> PhraseLibrary:
    library = build_library(read_clips(clip_folders), version="0.0.1-test")
    path = tmp_path_factory.mktemp("library") / "library.npz"
    library.save(path)
    return load_library(path)
