"""The beat-truth set's parts that can fail: tempo map to seconds, rendering on the grid, and the scorer."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # bench/ is not an installed package
    sys.path.insert(0, str(REPO_ROOT))

mido = pytest.importorskip("mido", reason="mido (the dev extras) is not installed")
pytest.importorskip("mir_eval", reason="mir_eval (the dev extras) is not installed")

from bench.beat_truth.charted import grid_offset_s  # noqa: E402
from bench.beat_truth.compose import Recipe, compose  # noqa: E402
from bench.beat_truth.midi import PPQ, Part, Score, TempoEvent, tick_seconds, write_midi  # noqa: E402
from bench.beat_truth.render import fluidsynth_missing, render_midi  # noqa: E402
from bench.beat_truth.scoring import score_song  # noqa: E402

RAMP = [TempoEvent(0, 90.0)] + [TempoEvent(PPQ * k, 90.0 + 4.0 * k) for k in range(1, 24)]
"""An accelerando from 90 to 182 BPM, a new tempo every beat."""


def _click_score(tempo: list[TempoEvent], beats: int) -> Score:
    clicks = Part("click", 0, 9)
    for k in range(beats):
        clicks.add(k * PPQ, 60, 76, 110)  # hi wood block: a sharp attack
    ticks = [k * PPQ for k in range(beats)]
    return Score([clicks], tempo, 4, PPQ, ticks, ticks[::4], (beats + 2) * PPQ)


def _note_on_seconds_by_mido(path: Path) -> np.ndarray:
    """Note-on times as mido's player reads them from the file (an independent reading of the tempo map)."""
    now, times = 0.0, []
    for message in mido.MidiFile(str(path)):
        now += message.time
        if message.type == "note_on" and message.velocity > 0:
            times.append(now)
    return np.array(times)


def test_tick_seconds_is_a_constant_tempo_times_the_ticks() -> None:
    seconds = tick_seconds(np.array([0, PPQ, 4 * PPQ]), [TempoEvent(0, 120.0)])
    np.testing.assert_allclose(seconds, [0.0, 0.5, 2.0])


def test_tick_seconds_matches_what_a_midi_player_reads_from_the_written_file(tmp_path: Path) -> None:
    score = _click_score(RAMP, 30)
    write_midi(score, tmp_path / "ramp.mid")
    np.testing.assert_allclose(
        score.beat_times_s(), _note_on_seconds_by_mido(tmp_path / "ramp.mid"), atol=1e-6
    )
    assert np.diff(score.beat_times_s())[-1] < np.diff(score.beat_times_s())[0] * 0.6  # it did speed up


def test_a_composed_song_is_the_same_for_its_seed_and_its_beats_follow_its_tempo_shape() -> None:
    recipe = Recipe("waltz", 3, 120.0, 30.0, meter="3/4", tempo="jump:160", intro_s=6.0)
    first, again = compose(recipe), compose(recipe)
    assert [n for p in first.parts for n in p.notes] == [n for p in again.parts for n in p.notes]
    beats = first.beat_times_s()
    assert beats[0] >= 6.0  # no beat in the free intro
    assert first.downbeat_ticks == first.beat_ticks[::3]
    np.testing.assert_allclose(60.0 / np.diff(beats)[[0, -1]], [120.0, 160.0], rtol=1e-3)


@pytest.mark.skipif(fluidsynth_missing() is not None, reason=str(fluidsynth_missing()))
def test_a_rendered_click_song_sounds_on_its_grid(tmp_path: Path) -> None:
    score = _click_score(RAMP, 24)
    write_midi(score, tmp_path / "click.mid")
    audio = render_midi(tmp_path / "click.mid", tmp_path / "click.wav", reverb_room=0.0)
    level = np.abs(audio).max(axis=1)
    sr = 44100
    onsets = []
    for beat in score.beat_times_s():
        start = max(0, int((beat - 0.03) * sr))
        window = level[start : start + int(0.06 * sr)]
        onsets.append((start + int(np.argmax(window > 0.05 * level.max()))) / sr)
    lateness_ms = (np.array(onsets) - score.beat_times_s()) * 1e3
    assert np.all(np.abs(lateness_ms) < 8.0), lateness_ms


@pytest.mark.skipif(fluidsynth_missing() is not None, reason=str(fluidsynth_missing()))
def test_the_charted_songs_grid_check_finds_a_shift_it_is_given(tmp_path: Path) -> None:
    score = _click_score([TempoEvent(0, 150.0)], 64)  # 25 s: one 20 s window of the check
    write_midi(score, tmp_path / "click.mid")
    mono = render_midi(tmp_path / "click.mid", tmp_path / "click.wav", reverb_room=0.0).mean(axis=1)
    on_grid, _ = grid_offset_s(mono, 44100, score.beat_times_s())
    late, _ = grid_offset_s(mono, 44100, score.beat_times_s() - 0.03)
    assert abs(on_grid) < 0.004 and late == pytest.approx(0.03, abs=0.004)


def test_the_truth_scores_one_and_the_off_beat_grid_scores_nothing() -> None:
    beats = np.arange(0.0, 60.0, 0.5)
    downbeats = beats[::4]
    truth = score_song(beats, beats, downbeats, downbeats)
    assert (truth["f"], truth["cmlt"], truth["amlt"], truth["downbeat_f"]) == (1.0, 1.0, 1.0, 1.0)
    assert (truth["tempo_octave"], truth["off_beat_share"]) == (1.0, 0.0)
    off = score_song(beats, beats + 0.25, downbeats, downbeats + 0.25)
    assert off["f"] == 0.0 and off["cmlt"] == 0.0 and off["downbeat_f"] == 0.0
    assert off["off_beat_share"] == 1.0
    assert off["amlt"] > 0.9  # the off-beat is an allowed metrical level for AMLt


def test_the_tempo_octave_names_half_and_double_time() -> None:
    beats = np.arange(0.0, 60.0, 0.5)
    assert score_song(beats, beats[::2], None, None)["tempo_octave"] == 0.5
    double = score_song(beats, np.arange(0.0, 60.0, 0.25), None, None)
    assert double["tempo_octave"] == 2.0 and double["f"] == pytest.approx(2 / 3, abs=0.01)
    assert double["off_beat_share"] == pytest.approx(0.5, abs=0.01)
