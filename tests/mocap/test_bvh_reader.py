"""The generic BVH reader on every mocap skeleton, real-world edge cases and broken files."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from choreo.errors import ParameterError
from choreo.motion.bvh_reader import forward_kinematics, read_bvh


def _index(mocap_dir: Path) -> dict[str, dict[str, str]]:
    with open(mocap_dir / "INDEX.tsv", encoding="utf-8") as handle:
        return {row["file"]: row for row in csv.DictReader(handle, delimiter="\t")}


@pytest.mark.parametrize("folder", ["cmu_60_61_salsa", "cmu_05_modern", "cmu_85_breakdance", "cmu_55_whirl"])
def test_reads_each_mocap_skeleton_as_indexed(mocap_dir: Path, folder: str) -> None:
    path = sorted((mocap_dir / folder).glob("*.bvh"))[0]
    row = _index(mocap_dir)[f"{folder}/{path.name}"]
    bvh = read_bvh(path)
    assert len(bvh.names) == int(row["joints"])
    assert bvh.n_frames == int(row["frames"])
    assert bvh.fps == pytest.approx(float(row["fps"]), rel=1e-3)
    assert bvh.frames.shape == (bvh.n_frames, sum(len(c) for c in bvh.channels))
    assert bvh.parents[0] == -1 and all(p < j for j, p in enumerate(bvh.parents))
    assert len(bvh.channels[0]) == 6


def test_forward_kinematics_keeps_source_bone_lengths(mocap_dir: Path) -> None:
    bvh = read_bvh(mocap_dir / "cmu_60_61_salsa" / "60_10_scaled.bvh")
    pos, rot = forward_kinematics(bvh)
    for j, p in enumerate(bvh.parents):
        if p >= 0:
            length = np.linalg.norm(pos[:, j] - pos[:, p], axis=-1)
            np.testing.assert_allclose(length, np.linalg.norm(bvh.offsets[j]), atol=1e-9)
    np.testing.assert_allclose(
        rot @ np.swapaxes(rot, -1, -2), np.broadcast_to(np.eye(3), rot.shape), atol=1e-9
    )


def test_boxing_toes_header_one_frame_short(shared_data: Path) -> None:
    bvh = read_bvh(shared_data / "ref_anim" / "assimp_bsd" / "Boxing_Toes.bvh")
    assert bvh.declared_frames == 3069
    assert bvh.n_frames == 3070  # the rows are the data
    assert bvh.frame_time_s == pytest.approx(0.01)
    assert bvh.names[0] == "Hips"


def test_channel_order_is_intrinsic_in_listed_order(tmp_path: Path) -> None:
    text = """HIERARCHY
ROOT root
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT child
  {
    OFFSET 0 1 0
    CHANNELS 3 Yrotation Xrotation Zrotation
    End Site
    {
      OFFSET 0 0 2
    }
  }
}
MOTION
Frames: 1
Frame Time: 0.5
1 2 3 90 0 0 0 0 0
"""
    path = tmp_path / "tiny.bvh"
    path.write_text(text)
    bvh = read_bvh(path)
    assert bvh.names == ("root", "child")
    np.testing.assert_allclose(bvh.end_sites[1], [0, 0, 2])
    pos, _ = forward_kinematics(bvh)
    # root turned 90 degrees about Z: its +Y offset to the child now points to -X
    np.testing.assert_allclose(pos[0, 1], [1 - 1, 2, 3], atol=1e-12)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Xrotation Yrotation Zrotation\n}\n", "no MOTION"),
        (
            "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Xrotation Yrotation Zrotation\n}\n"
            "MOTION\nFrames: 1\nFrame Time: 0.1\n1 2\n",
            "hierarchy declares 3",
        ),
        (
            "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Wrotation\n}\n"
            "MOTION\nFrames: 1\nFrame Time: 0.1\n1\n",
            "unknown channel",
        ),
        (
            "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\n"
            "MOTION\nFrames: 5\nFrame Time: 0.1\n1\n",
            "header says 5 frames",
        ),
    ],
)
def test_broken_files_name_the_file_and_the_fault(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "broken.bvh"
    path.write_text(content)
    with pytest.raises(ParameterError, match=message) as info:
        read_bvh(path)
    assert "broken.bvh" in str(info.value)


def test_missing_file_is_a_parameter_error(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="nope.bvh"):
        read_bvh(tmp_path / "nope.bvh")
