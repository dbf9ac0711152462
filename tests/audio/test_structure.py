"""Music structure on signals whose answer is known, and on real songs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from choreo.audio import MusicFeatures, extract_features, feature_sr, load_audio
from choreo.audio.structure import MusicStructure, analyze_structure
from choreo.errors import ParameterError

from .conftest import DEMO_SONG, click_track, clicks_at

FPS = 30
SR = feature_sr(FPS)
MUSIC = Path("/work/shared/data/music")
RUBATO_SONG = MUSIC / "cc" / "Hungarian_Dance_number_5_-_Allegro_in_F_sharp_minor_(string_orchestra).hq.ogg"
"""Strings whose tempo swells and slows: much of it has no steady beat."""
REAL_SONGS = sorted(set((MUSIC / "cc").glob("*.ogg")) - {RUBATO_SONG}) + [
    MUSIC / "gpl" / name
    for name in ("hedgewars__Music__EarthRise.ogg", "supertux__forest__forest.ogg", "xmoto__Musics__menu.ogg")
]


def _features(y: np.ndarray) -> MusicFeatures:
    return extract_features(np.asarray(y, dtype=np.float32), SR, fps=FPS)


def _tone(duration_s: float, *, seed: int = 0) -> np.ndarray:
    """A sustained A-minor chord over faint noise: music with no beat at all."""
    t = np.arange(int(duration_s * SR)) / SR
    y = sum(0.1 * np.sin(2 * np.pi * hz * t) for hz in (220.0, 261.63, 329.63))
    fade = np.minimum(1.0, np.minimum(t, t[-1] - t) / 0.05)
    return (y * fade + np.random.default_rng(seed).normal(scale=1e-3, size=t.size)).astype(np.float32)


def _section(kind: str, *, bars: int, bpm: float, seed: int) -> np.ndarray:
    """Bars of 4/4 music whose sound depends on ``kind``: 'A' is kick, snare and a C-major pad,
    'B' is a bright noise hi-hat on every beat over an A-flat-major pad an octave up."""
    rng = np.random.default_rng(seed)
    beat = 60.0 / bpm
    n = int(round(bars * 4 * beat * SR))
    t = np.arange(n) / SR
    roots = (261.63, 329.63, 392.0) if kind == "A" else (830.61, 1046.5, 1244.5)
    y = sum(0.06 * np.sin(2 * np.pi * hz * t) for hz in roots)
    hit_t = np.arange(int(0.12 * SR)) / SR
    for index in range(bars * 4):
        start = int(round(index * beat * SR))
        if kind == "A":
            hit = (
                0.8 * np.sin(2 * np.pi * 55.0 * hit_t)
                if index % 2 == 0
                else 0.4 * rng.normal(size=hit_t.size)
            )
            hit = hit * np.exp(-hit_t / 0.05)
        else:
            noise = rng.normal(size=hit_t.size)
            hit = 0.5 * np.diff(noise, prepend=0.0) * np.exp(-hit_t / 0.02)  # high-passed: a hat
        stop = min(n, start + hit.size)
        y[start:stop] += hit[: stop - start]
    return np.asarray(y, dtype=np.float32)


def _check_cover(structure: MusicStructure) -> None:
    """The interface's invariants: bars cover the song, one value of everything per bar."""
    assert structure.bar_starts[0] == 0.0
    assert np.all(np.diff(structure.bar_starts) > 0)
    assert structure.bar_ends[-1] == structure.duration_s
    for values in (structure.bar_energy, structure.section_labels, structure.steady):
        assert values.shape == (structure.n_bars,)
    assert np.all((structure.bar_energy >= 0) & (structure.bar_energy <= 1))
    labels = structure.section_labels
    assert labels[0] == 0 and set(labels) == set(range(labels.max() + 1))


@pytest.mark.parametrize(("meter", "bpm"), [(4, 120.0), (3, 96.0), (3, 150.0), (4, 87.0)])
def test_click_track_bars_start_on_its_accents(meter: int, bpm: float) -> None:
    y, clicks = click_track(bpm=bpm, duration_s=24.0, sr=SR, offset_s=0.6, accent_every=meter)
    structure = analyze_structure(_features(y))
    _check_cover(structure)
    assert structure.beats_per_bar == meter
    assert structure.tempo_bpm == pytest.approx(bpm, rel=0.01)
    steady_starts = structure.bar_starts[structure.steady]
    accents = clicks[::meter]
    # Every steady bar starts on an accented click, and all but the last full bar are steady.
    distance = np.min(np.abs(steady_starts[:, None] - accents[None, :]), axis=1)
    assert distance.max() <= 1.5 / FPS
    assert steady_starts.size >= accents.size - 2
    # The half-second before the first click is one unsteady lead-in bar.
    assert not structure.steady[0] and structure.bar_starts[1] == pytest.approx(clicks[0], abs=1.5 / FPS)


def test_meter_can_be_imposed() -> None:
    y, _ = click_track(bpm=120.0, duration_s=16.0, sr=SR, accent_every=4)
    structure = analyze_structure(_features(y), beats_per_bar=3)
    assert structure.beats_per_bar == 3
    steady = np.flatnonzero(structure.steady)
    lengths = structure.bar_ends[steady] - structure.bar_starts[steady]
    np.testing.assert_allclose(lengths, 1.5, atol=1.5 / FPS)
    with pytest.raises(ParameterError, match="beats_per_bar"):
        analyze_structure(_features(y), beats_per_bar=5)


def test_beatless_tone_gets_nominal_unsteady_bars() -> None:
    structure = analyze_structure(_features(_tone(20.0)))
    _check_cover(structure)
    assert not structure.steady.any()
    assert structure.beats_per_bar == 4 and structure.tempo_bpm == 0.0
    assert structure.beat_times.size == 0 and structure.downbeat_times.size == 0
    # Nominal bars: four beats at 120 BPM, two seconds each.
    np.testing.assert_allclose(np.diff(structure.bar_ends), 2.0, atol=1e-6)
    assert structure.n_bars == 10
    assert np.all(structure.section_labels == 0)


def test_beatless_intro_and_outro_are_unsteady_and_the_beat_between_is_steady() -> None:
    clicks, click_times = click_track(bpm=120.0, duration_s=16.0, sr=SR, offset_s=0.0)
    y = np.concatenate([_tone(8.0, seed=1), clicks, _tone(6.0, seed=2)])
    structure = analyze_structure(_features(y))
    _check_cover(structure)
    middle = (structure.bar_starts >= 7.9) & (structure.bar_ends <= 24.1)
    intro = structure.bar_ends <= 8.1
    outro = structure.bar_starts >= 23.9
    assert structure.steady[middle].all() and middle.sum() >= 6
    assert not structure.steady[intro | outro].any()
    assert intro.sum() == 4 and outro.sum() == 3  # 8 s and 6 s of two-second nominal bars
    # The steady bars sit on every fourth click.
    np.testing.assert_allclose(
        structure.bar_starts[middle], (8.0 + click_times[::4])[: middle.sum()], atol=1.5 / FPS
    )
    # The intro has onsets of the clicks after it only, so onset_times are where the sound is.
    assert np.all((structure.onset_times >= 7.9) & (structure.onset_times <= 24.1))


def test_a_section_that_returns_gets_its_label_again() -> None:
    bpm = 120.0
    parts = [_section(kind, bars=8, bpm=bpm, seed=i) for i, kind in enumerate("ABAB")]
    structure = analyze_structure(_features(np.concatenate(parts)))
    _check_cover(structure)
    bar_s = 4 * 60.0 / bpm
    section_of_bar = (structure.bar_starts + 0.5 * bar_s) // (8 * bar_s)
    inner = np.abs(structure.bar_starts / bar_s - np.rint(structure.bar_starts / bar_s)) < 0.1
    labels = structure.section_labels
    a = labels[inner & (section_of_bar % 2 == 0)]
    b = labels[inner & (section_of_bar % 2 == 1)]
    # The majority label of each A is the same, that of each B the same, and A's differs from B's.
    first_a, second_a = (np.bincount(labels[inner & (section_of_bar == s)]).argmax() for s in (0, 2))
    first_b, second_b = (np.bincount(labels[inner & (section_of_bar == s)]).argmax() for s in (1, 3))
    assert first_a == second_a and first_b == second_b and first_a != first_b
    assert np.mean(a == first_a) >= 0.8 and np.mean(b == first_b) >= 0.8


def test_bar_energy_follows_the_level() -> None:
    loud, _ = click_track(bpm=120.0, duration_s=16.0, sr=SR, offset_s=0.0)
    y = np.concatenate([loud, 0.03 * loud, loud])
    structure = analyze_structure(_features(y))
    middle = (structure.bar_starts >= 17.0) & (structure.bar_ends <= 31.0)
    outer = (structure.bar_ends <= 15.0) | (structure.bar_starts >= 33.0)
    assert structure.bar_energy[middle].max() < structure.bar_energy[outer].min()


def test_real_song_repeated_passage_shares_labels() -> None:
    """Vibe Ace's 16 s from 8 s, then 16 s from 40 s, then the first passage again."""
    y = load_audio(DEMO_SONG, sr=SR)
    first, other = y[8 * SR : 24 * SR], y[40 * SR : 56 * SR]
    structure = analyze_structure(_features(np.concatenate([first, other, first])))
    _check_cover(structure)
    labels = structure.section_labels
    centre = 0.5 * (structure.bar_starts + structure.bar_ends)
    one = labels[(centre > 2.0) & (centre < 14.0)]
    two = labels[(centre > 18.0) & (centre < 30.0)]
    three = labels[(centre > 34.0) & (centre < 46.0)]
    # The repeat is labelled as the first passage (where a section boundary falls within it may
    # move by a bar or two), never as the passage between them.
    assert set(three) <= set(one)
    assert np.bincount(two).argmax() not in set(three)


@pytest.mark.parametrize("song", REAL_SONGS, ids=lambda p: p.stem[:24])
def test_real_songs_get_steady_bars_sections_and_energy(song: Path) -> None:
    features = extract_features(load_audio(song, sr=SR), SR, fps=FPS)
    structure = analyze_structure(features)
    _check_cover(structure)
    assert structure.steady.mean() >= 0.8, "most bars of these songs have a steady beat"
    steady = structure.steady
    bar_s = structure.bar_ends[steady] - structure.bar_starts[steady]
    assert np.median(bar_s) == pytest.approx(structure.beats_per_bar * 60.0 / structure.tempo_bpm, rel=0.05)
    assert 2 <= structure.section_labels.max() + 1 <= structure.n_bars // 2
    assert structure.bar_energy.max() - structure.bar_energy.min() >= 0.2
    assert structure.onset_times.size >= structure.beat_times.size // 2


def test_rubato_strings_have_unsteady_stretches_and_still_get_bars() -> None:
    structure = analyze_structure(extract_features(load_audio(RUBATO_SONG, sr=SR), SR, fps=FPS))
    _check_cover(structure)
    assert 0.2 <= np.mean(~structure.steady) <= 0.8
    unsteady = ~structure.steady
    lengths = structure.bar_ends[unsteady] - structure.bar_starts[unsteady]
    assert np.all(lengths < 2.5 * structure.beats_per_bar * 60.0 / structure.tempo_bpm)
    # Every beat reported lies in a steady bar.
    bar_of_beat = np.searchsorted(structure.bar_starts, structure.beat_times, side="right") - 1
    assert structure.steady[bar_of_beat].all()


def test_a_song_without_frames_is_refused() -> None:
    empty = MusicFeatures(
        fps=FPS, features=np.zeros((0, 35)), beat_times=[], downbeat_times=[], tempo_bpm=0.0, duration_s=0.0
    )
    with pytest.raises(ParameterError, match="no frames"):
        analyze_structure(empty)


def _quiet(duration_s: float, *, seed: int = 1) -> np.ndarray:
    """Faint noise: the silence of a break."""
    return np.random.default_rng(seed).normal(scale=1e-3, size=int(duration_s * SR)).astype(np.float32)


def test_beats_then_silence_then_beats_is_one_break_from_the_last_hit_to_the_return() -> None:
    loud = _section("A", bars=6, bpm=120.0, seed=0)  # 12 s, a hit on every beat, the pad to its end
    structure = analyze_structure(_features(np.concatenate([loud, _quiet(2.0), loud])))
    assert structure.breaks.shape == (1, 2)
    start, end = structure.breaks[0]
    assert 11.5 - 0.05 <= start <= 12.0 + 0.05  # the last hit (11.5 s) or where the pad stops (12 s)
    assert end == pytest.approx(14.0, abs=0.07)  # the first hit after the silence


def test_a_one_beat_stop_inside_a_bar_is_a_break() -> None:
    beats = np.arange(0.5, 20.0, 0.5)
    beats = beats[np.abs(beats - 6.0) > 0.01]  # beat 2 of the fourth bar is left out
    y = clicks_at(beats, duration_s=21.0, sr=SR)
    np.testing.assert_allclose(analyze_structure(_features(y)).breaks, [[5.5, 6.5]], atol=0.05)


def test_music_that_goes_on_or_only_ends_has_no_breaks() -> None:
    loud = _section("A", bars=6, bpm=120.0, seed=0)
    assert analyze_structure(_features(np.concatenate([loud, loud]))).breaks.shape == (0, 2)
    # the song ends in silence and starts after some: neither is a break
    y = np.concatenate([_quiet(3.0), loud, _quiet(4.0)])
    assert analyze_structure(_features(y)).breaks.shape == (0, 2)
    assert analyze_structure(_features(_tone(20.0))).breaks.shape == (0, 2)


def test_a_song_that_always_leaves_gaps_has_no_breaks() -> None:
    # 120 BPM with the fourth beat of every bar left out: a gap of two beats, like a one-beat stop,
    # but in every bar, so no longer than the gaps before it (without that rule, 12 breaks)
    beats = np.arange(0.5, 30.0, 0.5)
    y = clicks_at(beats[np.arange(beats.size) % 4 != 3], duration_s=31.0, sr=SR, accent_every=3)
    assert analyze_structure(_features(y)).breaks.shape == (0, 2)


def test_breaks_are_checked() -> None:
    structure = analyze_structure(_features(_section("A", bars=4, bpm=120.0, seed=0)))
    fields = {name: getattr(structure, name) for name in structure.__dataclass_fields__}
    with pytest.raises(ParameterError, match="breaks"):
        MusicStructure(**{**fields, "breaks": np.array([[2.0, 1.0]])})
