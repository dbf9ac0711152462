"""``auto`` chooses a style from the music's character and the styles' material, and says why.

The songs are ones whose sensible choice is clear, each listed with the style
expected and why: beat-truth songs composed in one idiom and rendered with
FluidSynth (:mod:`bench.beat_truth`, cached where ``bench/beats.py`` keeps them),
and the real recordings of ``shared/data/music/cc``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from choreo.audio import analyze_song
from choreo.audio.structure import analyze_structure
from choreo.choreography.library import PhraseLibrary, shipped_library
from choreo.choreography.music_character import MusicCharacter, music_character
from choreo.choreography.style_choice import MIN_SOURCE_S_PER_MIN, choose_style, style_profiles
from choreo.contracts.options import RenderOptions
from choreo.pipeline import plan_song

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # bench/ is not an installed package
    sys.path.insert(0, str(REPO_ROOT))

BEAT_TRUTH_CACHE = Path.home() / ".cache" / "choreo" / "beat-truth"

SONGS = {
    # orchestral: bowed and blown, sparse attacks -> the reaching, gliding material
    "orchestral-06-string_ostinato": ("modern", "slow bowed strings, no drums: legato"),
    "orchestral-05-fanfare": ("modern", "brass and timpani, few attacks between the beats"),
    "cc:Hungarian_Dance": ("modern", "a string orchestra with rubato (the Studio screenshot's song)"),
    # piano: pitched and unhurried
    "piano-02-arpeggio_ballad": ("modern", "a piano ballad: arpeggios, no drums"),
    "piano-04-syncopated_pop": ("modern", "slow piano chords"),
    # drum-led: kit and bass on a hard, steady beat -> the hardest-hitting material
    "drum-led-01-rock": ("breakdance", "rock: kick, snare backbeat, power chords"),
    "drum-led-03-house": ("breakdance", "four on the floor, hats on the off-beats"),
    "drum-led-04-hiphop": ("breakdance", "boom-bap drums"),
    "cc:Vibe_Ace": ("breakdance", "drum-led funk (the demo song)"),
    # Latin: pitched syncopation over a steady pulse -> turning, on-the-beat stepping
    "latin-01-son_montuno": ("salsa", "son montuno: clave, tumbao, piano montuno"),
    "latin-05-cha_cha": ("salsa", "cha-cha-cha"),
    "latin-03-bossa": ("salsa", "bossa nova's off-beat guitar"),
}


def _song_path(name: str, shared_data: Path) -> Path:
    if name.startswith("cc:"):
        return next((shared_data / "music" / "cc").glob(f"*{name[3:]}*.ogg"))
    catalogue = pytest.importorskip("bench.beat_truth.catalogue")
    render = pytest.importorskip("bench.beat_truth.render")
    if render.fluidsynth_missing():
        pytest.skip("FluidSynth renders the composed songs; it is not installed")
    (song,) = [s for s in catalogue.SONGS if s.id == name]
    catalogue.build(BEAT_TRUTH_CACHE, (song,), log=lambda _m: None)
    return BEAT_TRUTH_CACHE / f"{name}.flac"


@pytest.fixture(scope="module")
def library() -> PhraseLibrary:
    return shipped_library()


@pytest.mark.parametrize("name", list(SONGS))
def test_auto_chooses_the_style_the_music_calls_for_and_says_why(
    name: str, shared_data: Path, library: PhraseLibrary
) -> None:
    expected, why = SONGS[name]
    features = analyze_song(_song_path(name, shared_data), fps=30)
    plan = plan_song(features, RenderOptions(style="auto"), library)
    assert plan.style == expected, f"{name} ({why}): {plan.notes}"
    note = next(n for n in plan.notes if n.startswith("auto chose"))
    assert note.startswith(f"auto chose {expected}: the music ")
    music = music_character(features, analyze_structure(features))
    assert all(0.0 <= v <= 1.0 for v in (music.drive, music.lilt, music.flow))


def _drum_led(tempo_bpm: float) -> MusicCharacter:
    return MusicCharacter(
        tempo_bpm=tempo_bpm, activity=1.0, noisiness=0.9, beat_clarity=1.0, syncopation=0.5, swing=0.0,
        steadiness=0.95, onset_density_per_s=4.0, meter=4, energy=0.8,
    )  # fmt: skip


def test_auto_passes_over_a_style_too_small_for_a_long_song(library: PhraseLibrary) -> None:
    minutes = {name: c["minutes"] for name, c in library.coverage().items()}
    music = _drum_led(150.0)
    assert choose_style("auto", library, music=music, duration_s=180.0).style == "breakdance"
    long_s = 60.0 * 60.0 * minutes["breakdance"] / MIN_SOURCE_S_PER_MIN + 60.0  # a minute too long for it
    choice = choose_style("auto", library, music=music, duration_s=long_s)
    assert (
        choice.style != "breakdance" and minutes[choice.style] * 60.0 >= MIN_SOURCE_S_PER_MIN * long_s / 60.0
    )
    assert "breakdance would suit it better, but the library holds too little of it" in str(choice.note)
    assert (
        choose_style("auto", library, music=music, duration_s=14 * 60.0).style == "salsa"
    )  # the only with 280 s
    assert (
        choose_style("modern", library, music=music, duration_s=14 * 60.0).style == "modern"
    )  # asked for: kept


def test_the_styles_material_puts_each_shipped_style_first_on_its_own_axis(library: PhraseLibrary) -> None:
    profiles = style_profiles(library)
    assert max(profiles, key=lambda s: profiles[s].power) == "breakdance"  # energy and floor work
    assert max(profiles, key=lambda s: profiles[s].step) == "salsa"  # turns, stops on the beat
    assert max(profiles, key=lambda s: profiles[s].glide) == "modern"  # held poses and leaps
