"""``choreo engines`` list / build / selfcheck from the command line."""

from __future__ import annotations

import json

import onnx
import pytest
from engine_testkit import SHIPPED_MODEL

from choreo.cli.main import main
from engines.registry import BACKENDS, tensorrt_build_reason
from engines.tensorrt_flavour import choose_flavour


def test_list_names_every_backend_and_the_tensorrt_flavour(capsys):
    assert main(["engines", "list"]) == 0
    out = capsys.readouterr().out
    for name in BACKENDS:
        assert name in out
    assert "chosen (auto)" in out
    assert "tensorrt flavour (auto): " in out
    if choose_flavour("auto") == "tensorrt-rtx":
        assert "TensorRT-RTX" in out and "builds engines without a GPU" in out
    reason = BACKENDS["tensorrt"].probe()
    if reason is not None:
        assert f"unavailable: {reason}" in out


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
    if tensorrt_build_reason() is None:
        pytest.skip("a TensorRT engine can be built here")
    code = main(
        ["engines", "build", "--precision", "fp32", "--model", str(tiny_model), "--cache-dir", str(tmp_path)]
    )
    assert code == 2
    assert "TensorRT" in capsys.readouterr().err


def test_build_with_the_forced_flavour_missing_explains(tiny_model, tmp_path, capsys, monkeypatch):
    from engines.settings import get_engine_settings

    if choose_flavour("tensorrt") is not None:
        pytest.skip("TensorRT 11 is installed here")
    monkeypatch.setenv("CHOREO_ENGINE_TENSORRT_FLAVOUR", "tensorrt")
    get_engine_settings.cache_clear()
    try:
        code = main(["engines", "build", "--model", str(tiny_model), "--cache-dir", str(tmp_path)])
    finally:
        get_engine_settings.cache_clear()
    assert code == 2
    assert "cannot build a TensorRT engine here: no TensorRT is installed" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.plan"))


def test_build_then_a_cache_hit(tmp_path, capsys):
    if tensorrt_build_reason() is not None:
        pytest.skip(f"no TensorRT engine can be built here: {tensorrt_build_reason()}")
    argv = ["engines", "build", "--precision", "fp16", "--profile", "realtime", "--model", str(SHIPPED_MODEL)]
    argv += ["--cache-dir", str(tmp_path)]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "engine built by TensorRT" in first
    assert main(argv) == 0
    second = capsys.readouterr().out
    plan = second.split("engine from the cache: ")[1].split(" (profile")[0]
    assert plan in first and list(tmp_path.glob("*.plan")) == [tmp_path / plan.split("/")[-1]]


@pytest.mark.slow
def test_selfcheck_with_no_arguments_checks_the_demo_song(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CHOREO_ENGINE_CALIBRATION_DIR", raising=False)
    report = tmp_path / "selfcheck.json"
    code = main(["engines", "selfcheck", "--cache-dir", str(tmp_path), "--json", str(report)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "int8: skipped (give --calibration-dir" in out
    data = json.loads(report.read_text())
    assert [s["file"] for s in data["songs"]] == ["Kevin_MacLeod_-_Vibe_Ace.ogg"]
    rows = {(r["backend"], r["precision"]) for r in data["results"]}
    assert {("onnxruntime", "fp32"), ("onnxruntime", "fp16")} <= rows
    assert not any(p == "int8" for _, p in rows)
    assert "calibrating and checking on one song proves nothing" in data["skipped"]["int8"]
    tensorrt_lines = [line for line in out.splitlines() if line.startswith("tensorrt:")]
    if BACKENDS["tensorrt"].probe() is not None:
        assert len(tensorrt_lines) == 1  # said in one line
        if tensorrt_build_reason() is None:  # TensorRT-RTX: the engines are built even where none runs
            assert "built the fp32, fp16 engines" in tensorrt_lines[0]
            assert len(list(tmp_path.glob("choreo-rtx-*.plan"))) == 2


@pytest.mark.slow
def test_selfcheck_on_a_real_song(shared_data, tmp_path, capsys):
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
