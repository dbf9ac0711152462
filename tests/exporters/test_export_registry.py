"""The registry: one writer per format a render may write, each the format's own writer, loaded when used."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_bvh_fbx_support import random_dance

from choreo.contracts.options import RenderOptions
from choreo.contracts.provenance import Provenance
from choreo.errors import ParameterError
from exporters.bvh import write_bvh
from exporters.contact_sheet import write_contact_sheet
from exporters.fbx import write_fbx
from exporters.gif import write_gif
from exporters.gltf import write_glb
from exporters.registry import CONTACT_SHEET_FORMAT, WRITERS, ExportRequest, write_file

REPO_ROOT = Path(__file__).resolve().parents[2]

_PROVENANCE = Provenance(
    model_version="test", seed=3, style="salsa", song_sha256="0" * 64, model_trained=True
)


def test_the_registry_serves_every_format_a_render_offers_and_the_contact_sheet() -> None:
    assert set(WRITERS) == {*RenderOptions.known_formats(), CONTACT_SHEET_FORMAT}
    assert len(WRITERS) == len(RenderOptions.known_formats()) + 1


def test_each_format_is_its_own_writer_given_the_requests_fields(
    rng: np.random.Generator, tmp_path: Path
) -> None:
    motion = random_dance(rng, 2.0, 30)
    beats = np.array([0.25, 0.75, 1.25])
    request = ExportRequest(
        rig="mixamo", units="m", provenance=_PROVENANCE, beat_times=beats, sheet_title="a title"
    )
    direct = {
        "bvh": lambda p: write_bvh(motion, p, rig="mixamo", units="m", provenance=_PROVENANCE),
        "fbx": lambda p: write_fbx(motion, p, rig="mixamo", units="m", provenance=_PROVENANCE),
        "glb": lambda p: write_glb(motion, p, rig="mixamo", provenance=_PROVENANCE),
        "gif": lambda p: write_gif(motion, p, beat_times=beats),
        "png": lambda p: write_contact_sheet(motion, p, times_s=beats, title="a title"),
    }
    (tmp_path / "registry").mkdir()
    (tmp_path / "direct").mkdir()
    for fmt, write_directly in direct.items():  # one file name in both: the FBX holds its own
        ours = write_file(fmt, motion, tmp_path / "registry" / f"dance.{fmt}", request)
        assert ours == tmp_path / "registry" / f"dance.{fmt}"
        assert ours.read_bytes() == write_directly(tmp_path / "direct" / f"dance.{fmt}").read_bytes(), fmt
    # The request's fields matter: the smpl rig in centimetres is another file.
    other = write_file("bvh", motion, tmp_path / "smpl.bvh", ExportRequest(units="cm"))
    assert other.read_bytes() != (tmp_path / "registry" / "dance.bvh").read_bytes()


def test_an_unknown_format_is_refused_naming_the_known_ones(rng: np.random.Generator, tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match=r"no writer for format 'obj'; choose from bvh, fbx, glb"):
        write_file("obj", random_dance(rng, 1.0, 30), tmp_path / "dance.obj")
    assert not (tmp_path / "dance.obj").exists()


def test_the_requests_times_are_checked_and_frozen() -> None:
    with pytest.raises(ParameterError, match=r"beat_times must be a 1-D array of seconds, got shape \(2, 2"):
        ExportRequest(beat_times=np.zeros((2, 2)))
    with pytest.raises(ParameterError, match="downbeat_times holds NaN"):
        ExportRequest(downbeat_times=np.array([1.0, np.nan]))
    beats = np.array([0.5, 1.0])
    request = ExportRequest(beat_times=beats)
    beats[0] = 9.0  # the caller's array is copied
    assert request.beat_times.tolist() == [0.5, 1.0]
    with pytest.raises(ValueError, match="read-only"):
        request.beat_times[0] = 2.0


def test_importing_the_registry_loads_no_writer_and_no_heavy_dependency() -> None:
    probe = (
        "import sys, exporters.registry; "
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'PIL') "
        "or m.startswith(('exporters.fbx', 'exporters.video', 'exporters.gltf', 'exporters.bvh', "
        "'exporters.gif', 'exporters.contact_sheet', 'exporters.mannequin')))))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO_ROOT
    ).stdout.split()
    assert loaded == []
