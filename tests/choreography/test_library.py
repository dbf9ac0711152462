"""The phrase library built from real CMU clips: phrases, transitions, merging, the file, the CLI."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from choreo.choreography.library import (
    LIBRARY_FPS,
    LibraryClip,
    PhraseLibrary,
    build_library,
    load_library,
    shipped_library,
)
from choreo.choreography.phrases import PHRASE_BEATS
from choreo.choreography.warp import STOP_STRETCH_TOLERANCE
from choreo.cli.main import main
from choreo.errors import ParameterError
from choreo.mocap.dataset import CMU_CREDIT, retargeted_dance
from choreo.mocap.library_clips import read_clips
from choreo.models import SHIPPED_LIBRARY
from choreo.motion.contacts import airborne_frames
from choreo.motion.kinematics import joint_positions
from choreo.motion.resample import resample
from exporters.bvh import write_bvh
from exporters.fbx import write_fbx


def test_phrases_stay_inside_their_clip_and_have_mirror_twins(small_library: PhraseLibrary) -> None:
    lib = small_library
    end = lib.phrase_key + lib.phrase_beats
    assert np.array_equal(lib.key_clip[lib.phrase_key], lib.key_clip[end])
    assert set(np.unique(lib.phrase_beats)) == set(PHRASE_BEATS)
    assert lib.phrase_mirrored.sum() * 2 == lib.phrase_key.size
    first, last = lib.phrase_frames
    assert np.all(last > first)
    # a phrase of n beats spans about n pulse periods of its clip
    period = lib.pulse_period_s[lib.key_clip[lib.phrase_key]]
    ratio = (last - first) / lib.fps / (lib.phrase_beats * period)
    assert 0.7 < np.median(ratio) < 1.3


def test_continuing_the_same_clip_is_the_cheapest_transition(small_library: PhraseLibrary) -> None:
    lib = small_library
    ends = np.unique(lib.phrase_key + lib.phrase_beats)
    starts = set(lib.phrase_key.tolist())
    continuing = [k for k in ends if k in starts]
    assert continuing
    for k in continuing:
        style = lib.clip_styles[lib.key_clip[k]]
        assert lib.next_key[k, style, 0] == k
        assert float(lib.next_cost[k, style, 0]) == 0.0
    cost = lib.next_cost.astype(np.float32)
    both = np.isfinite(cost[..., 1:]) & np.isfinite(cost[..., :-1])
    assert np.all((cost[..., 1:] - np.where(both, cost[..., :-1], 0.0))[both] >= 0)


def test_no_transition_joins_floor_work_and_standing(small_library: PhraseLibrary) -> None:
    lib = small_library
    assert lib.key_floor.any(), "the breakdance clip has floor work"
    valid = lib.next_key >= 0
    src = np.broadcast_to(np.arange(lib.key_frame.size)[:, None, None], lib.next_key.shape)
    assert np.array_equal(lib.key_floor[src[valid]], lib.key_floor[lib.next_key[valid]])


def test_stops_count_for_a_phrase_where_they_land_on_song_beats(small_library: PhraseLibrary) -> None:
    lib = small_library
    two = np.flatnonzero(lib.phrase_beats == 2)  # 3 keys: start, one interior beat, end
    key = lib.phrase_key[two]
    ends = lib.key_stop[key].astype(float) + lib.key_stop[key + 2]
    frames = lib.key_frame.astype(float)
    middle = (frames[key + 1] - frames[key]) / (frames[key + 2] - frames[key])  # 0.5 when even
    regular = (
        lib.key_stop[key + 1]
        & (np.abs(np.log(0.5 / middle)) <= np.log(STOP_STRETCH_TOLERANCE))
        & (np.abs(np.log(0.5 / (1 - middle))) <= np.log(STOP_STRETCH_TOLERANCE))
    )
    share = lib.phrase_pinned_share[:, two]
    np.testing.assert_allclose(share[0], (ends + regular) / 3)
    # in double time the interior beat falls between two song beats: a stop there counts against
    np.testing.assert_allclose(share[1], (ends - lib.key_stop[key + 1]) / 3)
    assert regular.any() and (lib.key_stop[key + 1] & ~regular).any()


def test_held_poses_are_the_phrases_under_a_fifth_of_their_styles_median_energy(
    small_library: PhraseLibrary,
) -> None:
    lib = small_library
    for s in range(len(lib.styles)):
        mask = lib.phrase_style == s
        median = np.median(lib.phrase_energy[mask])
        np.testing.assert_array_equal(lib.phrase_still[mask], lib.phrase_energy[mask] < 0.2 * median)


def test_file_round_trip_and_hash(small_library: PhraseLibrary, tmp_path: Path) -> None:
    path = tmp_path / "again.npz"
    digest = small_library.save(path)
    again = load_library(path)
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest() == again.sha256
    assert again.rotations.dtype == np.float16
    np.testing.assert_array_equal(again.next_key, small_library.next_key)
    assert again.coverage() == small_library.coverage()
    assert again.credits == (CMU_CREDIT,)


def test_a_style_with_too_little_material_is_merged(clip_folders: list[Path]) -> None:
    clips = read_clips(clip_folders)
    modern = clips[0]
    short = modern.motion.replace(
        rotations=modern.motion.rotations[: 10 * 60],
        root_translation=modern.motion.root_translation[: 10 * 60],
    )
    tiny = LibraryClip("tiny", "whirl", "cmu_55_whirl/tiny.bvh", modern.credit, short)
    library = build_library([*clips, tiny], version="t", min_style_s=15.0)
    assert "whirl" not in library.styles
    assert library.merged_styles["whirl"] in ("modern", "breakdance")
    assert library.style_index("whirl") == library.styles.index(library.merged_styles["whirl"])
    with pytest.raises(ParameterError, match="unknown style 'tango'"):
        library.style_index("tango")


def test_load_names_the_file_that_is_not_a_library(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ParameterError, match="bad.npz: not a phrase library"):
        load_library(bad)


def test_the_shipped_library_covers_every_style_with_the_cmu_credit() -> None:
    lib = shipped_library()
    assert lib.styles == ("breakdance", "modern", "salsa")
    assert lib.merged_styles == {"whirl": lib.merged_styles["whirl"]}
    assert CMU_CREDIT in lib.credits
    coverage = lib.coverage()
    assert sum(c["minutes"] for c in coverage.values()) > 11.0
    assert SHIPPED_LIBRARY.stat().st_size < 8 * 2**20
    assert (SHIPPED_LIBRARY.parent / "PHRASE_LIBRARY.md").exists()


def test_cli_build_writes_a_library_and_names_a_bad_folder(
    clip_folders: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "lib.npz"
    assert main(["library", "build", str(clip_folders[0]), "-o", str(out), "--exclude", "05_12"]) == 0
    assert "modern" in capsys.readouterr().out
    assert load_library(out).clip_names == ("05_02", "05_04")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["library", "build", str(empty), "-o", str(tmp_path / "x.npz")]) == 1
    assert f"{empty}: no motion files (.bvh, .fbx, .glb, .gltf) there" in capsys.readouterr().err


def test_the_library_marks_the_frames_in_the_air(small_library: PhraseLibrary) -> None:
    lib = small_library
    flying = 0
    for c in range(len(lib.clip_names)):
        first, stop = int(lib.clip_start[c]), int(lib.clip_stop[c])
        pos = joint_positions(lib.frames_motion(first, stop - 1))
        expected = airborne_frames(pos)
        np.testing.assert_array_equal(lib.airborne[first:stop], expected)
        assert np.all(pos[lib.airborne[first:stop], :, 1].min(axis=1) > 0.05)
        flying += int(expected.sum())
    assert flying > 10  # the modern clips leap


@pytest.mark.parametrize("rig", ["smpl", "mixamo", "mixamo-unprefixed"])
def test_a_library_builds_from_bvh_named_like_our_exporter_names_it(
    rig: str, clip_folders: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, _ = retargeted_dance(clip_folders[0] / "05_02.bvh")  # a real clip, retargeted: the known motion
    folder = tmp_path / f"team_{rig}"
    folder.mkdir()
    path = write_bvh(source, folder / "take1.bvh", rig=rig.removesuffix("-unprefixed"))
    if rig.endswith("unprefixed"):
        path.write_text(path.read_text().replace("mixamorig:", ""))
        assert "mixamorig:" not in path.read_text() and "LeftUpLeg" in path.read_text()
    out = tmp_path / "team.npz"
    assert main(["library", "build", str(folder), "-o", str(out)]) == 0
    capsys.readouterr()
    lib = load_library(out)
    assert lib.clip_names == ("take1",) and lib.phrase_key.size > 0
    # every frame of the library's phrases is the source's, retargeted back: the same pose and path
    first, last = lib.phrase_frames
    frames = np.arange(int(first.min()), int(last.max()) + 1)
    got = joint_positions(lib.frames_motion(int(frames[0]), int(frames[-1])))
    want = joint_positions(resample(source, LIBRARY_FPS))[frames - int(lib.clip_start[0])]
    pose_error = np.linalg.norm((got - got[:, :1]) - (want - want[:, :1]), axis=-1)
    assert np.percentile(pose_error, 95) < 0.015 and pose_error.max() < 0.025
    assert np.abs(got[:, 0] - want[:, 0]).max() < 0.01


def test_a_file_of_an_unknown_skeleton_is_named_with_its_joints_and_nothing_is_written(
    clip_folders: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "odd"
    folder.mkdir()
    shutil.copy(clip_folders[0] / "05_02.bvh", folder / "05_02.bvh")
    # a snake: a chain of twelve joints, which is no body whatever its names
    joints = "".join(
        f"JOINT seg{i}\n{{\nOFFSET 0 10 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n" for i in range(11)
    )
    root = "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
    hierarchy = f"HIERARCHY\nROOT seg\n{{\nOFFSET 0 0 0\n{root}"
    hierarchy += joints + "End Site\n{\nOFFSET 0 10 0\n}\n" + "}\n" * 12
    rows = "\n".join(" ".join(["0"] * 3 + [str(k % 30)] * 36) for k in range(120))
    snake = folder / "snake.bvh"
    snake.write_text(f"{hierarchy}MOTION\nFrames: 120\nFrame Time: 0.0333333\n{rows}\n")
    out = tmp_path / "x.npz"
    assert main(["library", "build", str(folder), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "odd/snake.bvh: unknown skeleton: its joints (seg, seg0, seg1" in err
    assert "smpl (joint 'left_hip')" in err and "mixamo (joint 'mixamorig:LeftUpLeg')" in err
    assert "1 file(s) refused; nothing written" in err and not out.exists()


def test_a_styles_table_names_styles_credits_and_licences_and_show_says_what_each_fills(
    clip_folders: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    team = tmp_path / "team"
    team.mkdir()
    for name in ("05_02", "05_04"):
        source, _ = retargeted_dance(clip_folders[0] / f"{name}.bvh")
        write_fbx(source, team / f"{name}.fbx", rig="mixamo")
    (team / "styles.tsv").write_text(
        "file\tstyle\tcredit\tlicence\n"
        "05_02.fbx\tContemporary\tDana Choreographer, Studio A\tCC-BY-4.0\n"
        "05_04.fbx\tjazz\tStudio B\t\n"
    )
    out = tmp_path / "team.npz"
    assert main(["library", "build", str(team), "-o", str(out)]) == 0
    capsys.readouterr()
    lib = load_library(out)
    assert lib.clip_sources == ("team/05_02.fbx", "team/05_04.fbx")
    assert set(lib.credits) == {"Dana Choreographer, Studio A (licence: CC-BY-4.0)", "Studio B"}
    assert main(["library", "show", str(out), "--song-s", "60"]) == 0
    shown = json.loads(capsys.readouterr().out)
    for style in shown["styles"].values():
        low, high = style["tempo_bpm"]
        assert 40 <= low < high <= 240 and style["moving_minutes"] > 0
        assert isinstance(style["fills_without_stalls"], bool)
    (team / "styles.tsv").write_text("file\tstyle\n05_02.fbx\tjazz\n")
    assert main(["library", "build", str(team), "-o", str(tmp_path / "x.npz")]) == 1
    assert "needs a header row with the columns file, style, credit" in capsys.readouterr().err
