"""Atomic writes: the target is whole or untouched, and no temporary file is left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from choreo.errors import ExportError
from choreo.files import atomic_path, write_atomically


def test_write_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "dance.bvh"
    target.write_bytes(b"old")
    write_atomically(target, b"new contents")
    assert target.read_bytes() == b"new contents"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dance.bvh"]


def test_a_failed_writer_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "model.onnx"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="writer broke"), atomic_path(target) as tmp:
        tmp.write_bytes(b"half a fi")
        raise RuntimeError("writer broke")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]


def test_os_errors_become_the_callers_error_naming_the_file(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "x.glb"
    with pytest.raises(ExportError, match=r"cannot write glTF file .*missing/x\.glb: No such file"):
        write_atomically(target, b"data", what="glTF file", error=ExportError)
    with pytest.raises(FileNotFoundError):
        write_atomically(target, b"data")
    assert list(tmp_path.iterdir()) == []
