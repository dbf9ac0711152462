"""``choreo engines`` list / build / selfcheck from the command line."""

from __future__ import annotations

import json

import onnx
import pytest

from choreo.cli.main import main
from engines.registry import BACKENDS


def test_list_names_every_backend(capsys):
    assert main(["engines", "list"]) == 0
    out = capsys.readouterr().out
    for name in BACKENDS:
        assert name in out
    assert "chosen (auto)" in out


def test_build_convert_only_writes_the_fp16_model(tiny_model, tmp_path, capsys):
    code = main(
        [
            "engines",
            "build",
            "--precision",
            "fp16",
            "--convert-only",
            "--model",
            str(tiny_model),
            "--cache-dir",
            str(tmp_path),
        ]
    )
    assert code == 0
    converted = list((tmp_path / "converted").glob("*-fp16-v*.onnx"))
    assert len(converted) == 1
    assert any(
        i.data_type == onnx.TensorProto.FLOAT16 for i in onnx.load(str(converted[0])).graph.initializer
    )
    assert "fp16 model" in capsys.readouterr().out


def test_int8_without_calibration_songs_says_what_is_missing(tiny_model, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CHOREO_ENGINE_CALIBRATION_DIR", raising=False)
    code = main(
        [
            "engines",
            "build",
            "--precision",
            "int8",
            "--convert-only",
            "--model",
            str(tiny_model),
            "--cache-dir",
            str(tmp_path),
        ]
    )
    assert code == 1
    assert "calibration" in capsys.readouterr().err


def test_build_without_tensorrt_explains(tiny_model, tmp_path, capsys):
    if BACKENDS["tensorrt"].probe() is None:
        pytest.skip("TensorRT is installed here")
    code = main(
        ["engines", "build", "--precision", "fp32", "--model", str(tiny_model), "--cache-dir", str(tmp_path)]
    )
    assert code == 2
    assert "TensorRT" in capsys.readouterr().err


@pytest.mark.slow
def test_selfcheck_on_a_real_song(shared_data, tmp_path, capsys):
    from engine_testkit import SHIPPED_MODEL

    if not SHIPPED_MODEL.is_file():
        pytest.skip("shipped model not exported yet")
    report = tmp_path / "selfcheck.json"
    code = main(
        [
            "engines", "selfcheck", "--precisions", "fp32,fp16", "--count", "1",
            "--songs", str(shared_data / "music" / "gpl"),
            "--cache-dir", str(tmp_path), "--json", str(report),
        ]
    )  # fmt: skip
    data = json.loads(report.read_text())
    rows = {(r["backend"], r["precision"]): r for r in data["results"]}
    assert rows[("onnxruntime", "fp32")]["rotation_max_deg"] < 1e-3
    assert rows[("onnxruntime", "fp16")]["songs"][0]["frames"] > 1000
    assert code == (0 if all(r["passed"] for r in data["results"]) else 1)
