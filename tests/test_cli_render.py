"""End to end: ``choreo render`` on real songs, and on bad input."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from sheet_checks import figure_above, sheet_panels

from choreo.choreography.library import shipped_library
from choreo.cli.main import main
from choreo.motion import Motion, joint_positions
from choreo.pipeline import RenderOptions, choreograph, generate_motion, prepare_song
from choreo.postprocess.contacts import detect_contacts
from choreo.runners import synth_runner
from exporters.bvh import read_bvh_motion

REPO_ROOT = Path(__file__).resolve().parents[1]
DEMO_SONG = REPO_ROOT / "demo" / "Kevin_MacLeod_-_Vibe_Ace.ogg"
SHORT_SONG = REPO_ROOT.parent / "shared" / "data" / "music" / "gpl" / "supertux__forest__forest3.ogg"  # 99 s


def _render(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["render", *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("fps", [30, 60])
def test_render_demo_song(tmp_path: Path, capsys: pytest.CaptureFixture[str], fps: int) -> None:
    code, output = _render([str(DEMO_SONG), "-o", str(tmp_path), "--fps", str(fps)], capsys)
    assert code == 0, output
    stem = DEMO_SONG.stem
    summary = json.loads((tmp_path / f"{stem}.json").read_text())
    duration_s = sf.info(DEMO_SONG).duration
    assert summary["duration_s"] == pytest.approx(duration_s, abs=1e-3)
    assert summary["frames"] == math.ceil(duration_s * fps - 1e-9)
    assert summary["fps"] == fps
    assert len(summary["song_sha256"]) == 64 and summary["seed"] == 0
    assert summary["model_version"]
    assert summary["model_trained"] is True, "the shipped model is the trained one"
    assert any("mocap.cs.cmu.edu" in credit for credit in summary["data_credits"])
    assert summary["pulse_ratio"] in (0.5, 1.0, 2.0)  # the dancer's pulse, beside the song's tempo
    assert summary["pulse_bpm"] == pytest.approx(summary["tempo_bpm"] * summary["pulse_ratio"], abs=1e-3)
    panels = sheet_panels(tmp_path / f"{stem}.png")
    assert len(panels) == 16  # the sheet's most poses, spread over the song's many beats
    assert all(figure_above(tmp_path / f"{stem}.png", c) for c in panels)

    motion = read_bvh_motion(tmp_path / f"{stem}.bvh")
    assert motion.n_frames == summary["frames"] and motion.fps == pytest.approx(fps)
    assert np.all(np.isfinite(motion.to_array()))
    feet = joint_positions(motion)[:, [7, 8, 10, 11], 1]
    assert feet.min() > -0.01, "a foot goes through the floor"
    assert np.mean(feet.min(axis=1) < 0.08) > 0.5, "the dancer floats: feet rarely touch the floor"


def test_same_song_and_options_give_the_same_dance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second, other_seed = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for out, seed in ((first, "0"), (second, "0"), (other_seed, "7")):
        assert _render([str(DEMO_SONG), "-o", str(out), "--seed", seed], capsys)[0] == 0
    name = DEMO_SONG.stem + ".bvh"
    assert (first / name).read_bytes() == (second / name).read_bytes()
    assert (first / name).read_bytes() != (other_seed / name).read_bytes()


def test_bvh_is_read_by_assimp(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which("assimp") is None:
        pytest.skip("assimp is not installed (make test installs assimp-utils)")
    assert _render([str(SHORT_SONG), "-o", str(tmp_path)], capsys)[0] == 0
    info = subprocess.run(
        ["assimp", "info", str(tmp_path / f"{SHORT_SONG.stem}.bvh")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Animations" in info
    assert all(name in info for name in ("pelvis", "left_wrist", "right_foot"))


def _bad_inputs(folder: Path) -> dict[str, tuple[Path, str]]:
    """Songs that cannot be danced, each with the error code it must fail with."""
    sr = 22050
    files = {
        "corrupt": (folder / "corrupt.ogg", "corrupt_audio"),
        "text": (folder / "notes.mp3", "corrupt_audio"),
        "unsupported": (folder / "song.xyz", "unsupported_format"),
        "silent": (folder / "quiet.wav", "silent"),
        "short": (folder / "half_second.wav", "too_short"),
        "empty": (folder / "empty.wav", "too_short"),
    }
    files["corrupt"][0].write_bytes(DEMO_SONG.read_bytes()[:2000] + b"\0" * 5000)
    files["text"][0].write_text("not audio at all\n")
    files["unsupported"][0].write_bytes(b"\x00\x01" * 4000)
    sf.write(files["silent"][0], np.zeros(sr * 5, dtype=np.float32), sr)
    sf.write(files["short"][0], np.random.default_rng(0).normal(size=sr // 2).astype(np.float32) * 0.3, sr)
    sf.write(files["empty"][0], np.zeros(0, dtype=np.float32), sr)
    return files


def _failure_line(output: str, path: Path) -> str:
    line = next((ln for ln in output.splitlines() if ln.startswith(f"FAILED {path}: ")), None)
    assert line is not None, f"no failure line for {path.name} in:\n{output}"
    return line


def test_bad_songs_fail_alone_and_say_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _bad_inputs(tmp_path)
    out = tmp_path / "out"
    songs = [str(path) for path, _ in bad.values()]
    code, output = _render([*songs, str(DEMO_SONG), "-o", str(out)], capsys)
    assert code == 1, output  # the README: failed songs give exit status 1
    for path, error_code in bad.values():
        assert _failure_line(output, path).endswith(f" [{error_code}]")
    assert "silent: the loudest sample is" in _failure_line(output, bad["silent"][0])
    assert "too short: 0.50 s" in _failure_line(output, bad["short"][0])
    assert f"{len(bad)} of {len(bad) + 1} songs failed" in output
    assert sorted(p.name for p in out.iterdir() if p.stem != DEMO_SONG.stem) == [], "a bad song left files"
    assert (out / f"{DEMO_SONG.stem}.bvh").exists(), "the good song was not rendered"


def test_too_long_song_is_refused_before_decoding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from choreo.settings import get_settings

    monkeypatch.setenv("CHOREO_MAX_DURATION_S", "30")
    get_settings.cache_clear()
    try:
        code, output = _render([str(DEMO_SONG), "-o", str(tmp_path)], capsys)
    finally:
        get_settings.cache_clear()
    assert code == 1
    line = _failure_line(output, DEMO_SONG)
    assert line.endswith(" [too_long]") and "the maximum is 30" in line
    assert not tmp_path.joinpath(f"{DEMO_SONG.stem}.bvh").exists()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--fps", "29"], "unsupported fps 29"),
        (["--style", "tango"], "unknown style 'tango'"),
        (["--formats", "obj"], "unknown format obj"),
    ],
)
def test_bad_options_exit_non_zero_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str], message: str
) -> None:
    code, output = _render([str(DEMO_SONG), "-o", str(tmp_path), *option], capsys)
    assert code == 2 and message in output
    assert list(tmp_path.iterdir()) == [], "a refused option still wrote files"


def test_console_script_runs(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "choreo.cli.main", "render", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--fps" in proc.stdout and "--formats" in proc.stdout


@pytest.mark.parametrize("variable", ["CHOREO_ENGINE_MODEL_PATH", "CHOREO_MODEL_PATH"])
def test_render_loads_the_model_the_engine_settings_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    from engines.settings import get_engine_settings

    missing = tmp_path / "elsewhere.onnx"
    monkeypatch.setenv(variable, str(missing))
    get_engine_settings.cache_clear()
    try:
        code, output = _render([str(DEMO_SONG), "-o", str(tmp_path), "--synth", "model"], capsys)
    finally:
        get_engine_settings.cache_clear()
    assert code == 2 and f"model file not found: {missing}" in output


def test_the_plan_is_in_the_summary_and_re_renders_the_same_dance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, again, edited = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    assert _render([str(DEMO_SONG), "-o", str(first)], capsys)[0] == 0
    summary_path = first / f"{DEMO_SONG.stem}.json"
    summary = json.loads(summary_path.read_text())
    assert (
        summary["synthesizer"] == "blend" and summary["library_sha256"] == summary["plan"]["library_sha256"]
    )
    segments = summary["plan"]["segments"]
    assert segments[0]["song_beats_s"][0] == 0.0 and segments[-1]["song_beats_s"][-1] == pytest.approx(
        summary["duration_s"]
    )
    assert _render([str(DEMO_SONG), "-o", str(again), "--plan", str(summary_path)], capsys)[0] == 0
    name = DEMO_SONG.stem + ".bvh"
    assert (first / name).read_bytes() == (again / name).read_bytes()
    # an edited plan: the second segment danced mirrored
    plan = summary["plan"]
    seg = plan["segments"][1]
    twin = int(shipped_library().mirror_phrase[seg["phrase"]])
    seg["phrase"], seg["mirrored"] = twin, not seg["mirrored"]
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    assert _render([str(DEMO_SONG), "-o", str(edited), "--plan", str(tmp_path / "plan.json")], capsys)[0] == 0
    assert (first / name).read_bytes() != (edited / name).read_bytes()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--energy", "loud"], "unknown energy 'loud'"),
        (["--synth", "gan"], "unknown synthesizer 'gan'"),
        (["--library", "/nonexistent/lib.npz"], "/nonexistent/lib.npz"),
        (["--plan", "/nonexistent/plan.json"], "--plan /nonexistent/plan.json"),
    ],
)
def test_bad_choreography_options_exit_2_naming_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str], message: str
) -> None:
    code, output = _render([str(DEMO_SONG), "-o", str(tmp_path), *option], capsys)
    assert code == 2 and message in output


def test_the_model_performs_the_blends_plan_and_the_summary_says_which_ran(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summaries = {}
    for synth in ("blend", "model"):
        out = tmp_path / synth
        code, output = _render([str(DEMO_SONG), "-o", str(out), "--seed", "3", "--synth", synth], capsys)
        assert code == 0, output
        summaries[synth] = json.loads((out / f"{DEMO_SONG.stem}.json").read_text())
    blend, model = summaries["blend"], summaries["model"]
    assert blend["synthesizer"] == "blend" and model["synthesizer"] == "model"
    assert model["plan"] == blend["plan"] and model["plan"]["segments"]
    assert model["library_sha256"] == blend["library_sha256"]
    assert model["model_version"] == "2.0.0" and model["model_trained"]
    name = DEMO_SONG.stem + ".bvh"
    assert (tmp_path / "model" / name).read_bytes() != (tmp_path / "blend" / name).read_bytes()


def test_the_model_stays_near_the_guide_away_from_junctions() -> None:
    library = shipped_library()
    features = prepare_song(DEMO_SONG)
    options = RenderOptions(seed=3, synth="model")
    choreography = choreograph(features, options, library)
    generated = generate_motion(
        synth_runner(options.synth, library),
        features,
        options,
        song_sha256="0" * 64,
        choreography=choreography,
    )
    danced = joint_positions(generated.motion)
    guide = joint_positions(Motion.from_array(choreography.guide.poses.astype(np.float64), fps=features.fps))
    deviation_m = np.linalg.norm(danced - guide, axis=-1).mean(axis=1)
    away = choreography.guide.junction.min(axis=1) > 0.5
    assert away.mean() > 0.5
    assert deviation_m[away].mean() < 0.03, "the model must perform its guide, not dance its own"
    assert deviation_m.max() > 0, "the network ran: its dance is not the guide itself"


@pytest.mark.parametrize("synth", ["blend", "model"])
def test_both_synthesizers_contacts_take_in_the_librarys_stances(synth: str) -> None:
    library = shipped_library()
    runner = synth_runner(synth, library)  # type: ignore[arg-type]
    features = prepare_song(DEMO_SONG, fps=runner.spec.native_fps)
    options = RenderOptions(seed=3, synth=synth)  # type: ignore[arg-type]
    choreography = choreograph(features, options, library)
    generated = generate_motion(runner, features, options, song_sha256="0" * 64, choreography=choreography)
    alone = detect_contacts(generated.motion).frames[:, :4]
    # The dance's track is the bits' with its moments of no foot down shorter than a flight bridged.
    bridged = detect_contacts(generated.motion, planted=choreography.guide.feet, bridge_flights=True)
    np.testing.assert_array_equal(generated.contacts.frames, bridged.frames)
    track = detect_contacts(generated.motion, planted=choreography.guide.feet).frames[:, :4]
    assert choreography.guide.feet.shape == (generated.motion.n_frames, 2)
    gained = track & ~alone
    assert not (alone & ~track).any() and gained.any()
    # every contact the bits added or lengthened holds frames the source phrase had that foot planted in
    planted = choreography.guide.feet[:, [0, 0, 1, 1]]
    for column in range(4):
        edges = np.diff(np.concatenate([[0], track[:, column].astype(np.int8), [0]]))
        for start, stop in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
            if gained[start:stop, column].any():
                assert planted[start:stop, column].any(), (column, start, stop)


def test_a_render_command_line_imports_only_the_render_verb() -> None:
    # A fresh process: the verbs' modules a render never runs (eval's metrics, the HTTP client) stay
    # out, while an unknown verb still gets the whole parser and its list of verbs.
    code = (
        "import sys; from choreo.cli.main import build_parser; build_parser('render'); "
        "names = ('choreo.cli.eval', 'choreo.cli.submit', 'choreo.client', 'httpx'); "
        "left = [m for m in names if m in sys.modules]; "
        "print(left, sorted(build_parser('rendr')._subparsers._group_actions[0].choices)[:3])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] ['admin', 'engines', 'eval']"


def test_a_cold_dance_render_leaves_the_workout_and_settings_libraries_unimported(tmp_path: Path) -> None:
    # What a new user's first `choreo render` pays: a dance with the blend needs neither the workout
    # planner and sheet, nor the engines' settings, nor pydantic-settings (~0.1 s CPU to import).
    names = ("choreo.workout.planner", "choreo.workout.sheet", "engines.settings", "pydantic_settings")
    code = (
        "import sys; from choreo.cli.main import main; "
        f"code = main(['render', {str(DEMO_SONG)!r}, '-o', {str(tmp_path)!r}, '--formats', 'bvh']); "
        f"print(code, [m for m in {names!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "0 []"
    assert (tmp_path / f"{DEMO_SONG.stem}.bvh").exists()


def test_settings_are_read_from_choreo_variables_in_any_case() -> None:
    from pydantic import ValidationError

    from choreo.settings import Settings

    settings = Settings.from_environment(
        {"choreo_max_duration_s": "30", "CHOREO_DEFAULT_SEED": "7", "OTHER": "x"}
    )
    assert (settings.max_duration_s, settings.default_seed, settings.default_fps) == (
        30.0,
        7,
        Settings().default_fps,
    )
    with pytest.raises(ValidationError, match="max_duration_s"):
        Settings.from_environment({"CHOREO_MAX_DURATION_S": "-1"})
