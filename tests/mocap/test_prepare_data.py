"""``choreo prepare-data`` end to end on a small real subset, and its refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sheet_checks import figure_above, sheet_panels

from choreo.cli.main import main
from choreo.contracts.choices import STYLES
from choreo.mocap.dataset import CMU_CREDIT, HELD_OUT_CLIPS, HELD_OUT_SONGS
from choreo.mocap.timewarp import MAX_STRETCH, MIN_STRETCH

_TRAIN_CLIPS = (
    "cmu_05_modern/05_03.bvh",
    "cmu_60_61_salsa/60_10_scaled.bvh",
    "cmu_55_whirl/55_01_isaacgym.bvh",
)
_HELD_OUT_FILES = (
    "cmu_60_61_salsa/60_15_scaled.bvh",
    "cmu_60_61_salsa/61_15_scaled.bvh",
    "cmu_05_modern/05_20.bvh",
    "cmu_85_breakdance/85_04_keijiro_neo30fps.bvh",
)
_SONGS = (
    "cc/Kevin_MacLeod_-_Vibe_Ace.hq.ogg",
    "cc/Hungarian_Dance_number_5_-_Allegro_in_F_sharp_minor_(string_orchestra).hq.ogg",
)


@pytest.fixture(scope="module")
def small_dataset(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("prepare")
    for rel in _TRAIN_CLIPS + _HELD_OUT_FILES:
        link = root / "mocap" / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(shared_data / "mocap" / rel)
    for rel in _SONGS:
        link = root / "music" / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(shared_data / "music" / rel)
        licence = (shared_data / "music" / rel).with_suffix("").with_suffix(".txt")
        (link.parent / licence.name).write_text(licence.read_text())
    out = root / "out"
    status = main(
        [
            "prepare-data",
            "--mocap",
            str(root / "mocap"),
            "--music",
            str(root / "music"),
            "--out",
            str(out),
            "--cache",
            str(root / "cache"),
        ]
    )
    assert status == 0
    return out


def test_arrays_have_the_promised_layout(small_dataset: Path) -> None:
    with np.load(small_dataset / "train.npz") as data:
        motion, music = data["motion"], data["music"]
        assert motion.dtype == np.float16 and motion.shape[1] == 75
        assert music.dtype == np.float16 and music.shape == (motion.shape[0], 35)
        offsets, lengths = data["offsets"], data["lengths"]
        assert offsets[0] == 0 and np.all(offsets[1:] == np.cumsum(lengths)[:-1])
        assert lengths.sum() == motion.shape[0]
        assert list(data["styles"]) == list(STYLES)
        assert set(data["style"]) <= set(range(len(STYLES)))
        assert not set(data["clip"]) & set(HELD_OUT_CLIPS)
        assert not set(data["song"]) & set(HELD_OUT_SONGS)
        assert data["mirrored"].any() and not data["mirrored"].all()
        assert int(data["fps"]) == 30
        # the root stays on the floor space and above the floor
        assert np.all(np.isfinite(motion)) and 0.2 < np.median(motion[:, 73]) < 1.1


def test_meta_lists_sources_held_out_sets_and_credit(small_dataset: Path) -> None:
    meta = json.loads((small_dataset / "meta.json").read_text())
    assert meta["credit"] == CMU_CREDIT
    assert meta["held_out_clips"] == sorted(HELD_OUT_CLIPS)
    assert meta["held_out_songs"] == ["Kevin_MacLeod_-_Vibe_Ace.hq.ogg"]
    assert (
        MIN_STRETCH - 1e-6
        <= meta["train"]["stretch_min"]
        <= meta["train"]["stretch_max"]
        <= MAX_STRETCH + 1e-6
    )
    for clip in meta["sources"]["clips"]:
        assert 0.0 <= clip["foot_skate_smpl"] <= 1.0 and clip["frames_kept"][1] <= clip["frames_kept"][2]
    licences = {s["song"]: s["licence"] for s in meta["sources"]["songs"]}
    assert "Creative Commons" in licences["Kevin_MacLeod_-_Vibe_Ace.hq.ogg"]


def test_reference_motions_at_30_and_60_fps(small_dataset: Path) -> None:
    with np.load(small_dataset / "reference.npz") as ref:
        # one held-out song in this subset: each clip once (with all six, twice on different songs)
        assert sorted(ref["clip"]) == sorted(HELD_OUT_CLIPS)
        assert set(ref["song"]) == {"Kevin_MacLeod_-_Vibe_Ace.hq.ogg"}
        for k in range(len(ref["clip"])):
            n30, n60 = ref["lengths_30fps"][k], ref["lengths_60fps"][k]
            assert abs(n60 - 2 * n30) <= 2
            a30 = ref["motion_30fps"][ref["offsets_30fps"][k] : ref["offsets_30fps"][k] + n30]
            a60 = ref["motion_60fps"][ref["offsets_60fps"][k] : ref["offsets_60fps"][k] + n60]
            # the same retimed dance: every other 60 fps frame's root matches the 30 fps root
            t0 = ref["song_start_frame_60fps"][k] / 60 - ref["song_start_frame_30fps"][k] / 30
            assert abs(t0) < 1 / 30
            m = min(n30, n60 // 2) - 2
            shift = int(round(-t0 * 60))
            np.testing.assert_allclose(a60[shift : shift + 2 * m : 2, 72:], a30[:m, 72:], atol=0.02)
    sheet = small_dataset / "contact_sheets" / "05_20.png"
    panels = sheet_panels(sheet)
    assert len(panels) == 16 and len({row for row, _ in panels}) == 2  # 8 poses, front above side
    assert all(figure_above(sheet, c) for c in panels)


def test_missing_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        ["prepare-data", "--mocap", str(tmp_path / "none"), "--music", str(tmp_path), "--out", str(tmp_path)]
    )
    assert status == 2
    assert "--mocap" in capsys.readouterr().out


def test_mocap_without_style_folders_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "mocap").mkdir()
    status = main(
        [
            "prepare-data",
            "--mocap",
            str(tmp_path / "mocap"),
            "--music",
            str(tmp_path),
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert status == 2
    assert "no motion files in cmu_60_61_salsa" in capsys.readouterr().out
