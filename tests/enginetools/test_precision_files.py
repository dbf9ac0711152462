"""Precision files: the engines convert fp16 themselves and find int8 only where the tools calibrated it."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
import soundfile as sf
from engine_testkit import SHIPPED_MODEL
from tiny_engine_model import build_tiny_model

from choreo.enginetools.precision_files import prepare_precision_model
from choreo.errors import EngineError, ParameterError
from engines.precision import HEAVY_MIN_DIM, converted_model_path, file_sha256, precision_model
from engines.settings import EngineSettings

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_SONG = REPO_ROOT / "demo" / "Kevin_MacLeod_-_Vibe_Ace.ogg"


def _calibration_dir(folder: Path) -> Path:
    folder.mkdir()
    (folder / DEMO_SONG.name).symlink_to(DEMO_SONG)
    duration_s = sf.info(DEMO_SONG).duration
    (folder / "MANIFEST.tsv").write_text(
        f"file\tduration_s\ttempo_bpm_est\n{DEMO_SONG.name}\t{duration_s:.1f}\t120\n"
    )
    return folder


def test_fp32_is_the_model_and_fp16_is_converted_once(tiny_model: Path, tmp_path: Path) -> None:
    settings = EngineSettings(cache_dir=tmp_path)
    assert precision_model(tiny_model, "fp32", settings) == (tiny_model, file_sha256(tiny_model))
    path, sha = precision_model(tiny_model, "fp16", settings)
    assert path == converted_model_path(file_sha256(tiny_model), "fp16", settings) and path.is_file()
    assert sha == file_sha256(path)
    stamp = path.stat().st_mtime_ns
    assert precision_model(tiny_model, "fp16", settings) == (path, sha)
    assert path.stat().st_mtime_ns == stamp, "a cached conversion was made again"


@pytest.fixture(scope="module")
def styled_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small untrained styled network that int8 can calibrate, built in code.

    Its products outside the loop are just large enough to quantize (``HEAVY_MIN_DIM``), and its
    poses spread over whole turns: ONNX Runtime's histogram calibration cannot bin a tensor that
    barely varies, as the rotation conversion does on an untrained network that stays in its T-pose.
    """
    path = tmp_path_factory.mktemp("models") / "styled.onnx"
    return build_tiny_model(path, hidden=HEAVY_MIN_DIM, cond_hidden=HEAVY_MIN_DIM, pose_std=1.0)


@pytest.mark.parametrize("which", ["styled", "guided"])
def test_int8_is_found_only_after_the_tools_calibrated_it(
    which: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Calibration feeds each kind of model what it declares: a style, or a guide and junction timing."""
    model = request.getfixturevalue("styled_model") if which == "styled" else SHIPPED_MODEL
    settings = EngineSettings(
        cache_dir=tmp_path / "cache", calibration_dir=_calibration_dir(tmp_path / "songs")
    )
    with pytest.raises(EngineError, match=r"run `choreo engines build --precision int8` first"):
        precision_model(model, "int8", settings)
    path, sha = prepare_precision_model(model, "int8", settings, count=1)
    assert path.name.startswith(file_sha256(model)[:16] + "-int8-")
    ops = {node.op_type for node in onnx.load(str(path)).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    assert precision_model(model, "int8", settings) == (path, sha)  # what a worker loads


def test_bad_precision_requests_say_why(tiny_model: Path, tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="int8 needs a calibration set"):
        precision_model(tiny_model, "int8", EngineSettings(cache_dir=tmp_path))
    with pytest.raises(ParameterError, match="has no MANIFEST.tsv"):
        precision_model(tiny_model, "int8", EngineSettings(cache_dir=tmp_path, calibration_dir=tmp_path))
    with pytest.raises(ParameterError, match="precision must be fp32, fp16 or int8"):
        precision_model(tiny_model, "fp8", EngineSettings(cache_dir=tmp_path))
    with pytest.raises(EngineError, match="model file not found"):
        precision_model(tmp_path / "none.onnx", "fp32", EngineSettings(cache_dir=tmp_path))
