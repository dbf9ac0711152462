"""Which of the library's styles a song is danced in: the style asked for, or ``auto``'s choice.

``auto`` matches the music's character (:mod:`choreo.choreography.music_character`:
its drive, lilt and flow) with what each style's material is like, among the
styles the library holds enough of for the song's length and whose phrases fit
its tempo. A style's material is described on three matching axes, each
relative to the library's other styles (so shipped and team styles compete on
the same terms):

- **power**: its phrases' energy and its floor work (breakdance's), matched
  with the music's drive (drum-led, percussive, busy);
- **step**: how much it turns and how regularly its stops land on the beat
  (salsa's), matched with the music's lilt (syncopation, swing over a steady pulse);
- **glide**: its held poses and leaps (modern dance's reaching and suspended
  moments), matched with the music's flow (legato, sparse, rubato).

The chosen style's reason is a sentence in the plan's notes, which the summary
carries, such as ``auto chose modern: the music flows (legato, unhurried) and
modern's material reaches and glides``.

``auto_style`` is the older rule by tempo alone (modern below 96 BPM, salsa to
132, breakdance above); the engine checks still dance their demo song in it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from choreo.choreography.library import PhraseLibrary
from choreo.choreography.music_character import MusicCharacter
from choreo.contracts.choices import AUTO
from choreo.errors import ParameterError

__all__ = [
    "MIN_SOURCE_S_PER_MIN",
    "StyleChoice",
    "StyleProfile",
    "auto_style",
    "choose_style",
    "style_profiles",
]

MIN_SOURCE_S_PER_MIN = 20.0
"""``auto`` passes over a style with less library material than this per minute of the song."""

_OFF_TEMPO = 0.3
"""Score taken from a style none of whose phrases fit the song's tempo at their own pace."""

_AUTO_TEMPO_BANDS: tuple[tuple[float, str], ...] = (
    (96.0, "modern"),
    (132.0, "salsa"),
    (float("inf"), "breakdance"),
)

_WHY_MUSIC = {
    "power": "the music drives (percussive, busy, on a strong beat)",
    "step": "the music lilts (accents off the beat over a steady pulse)",
    "glide": "the music flows (legato, unhurried)",
}
_WHY_STYLE = {
    "power": "material hits hardest",
    "step": "material turns and steps on the beat",
    "glide": "material reaches and glides",
}


def auto_style(tempo_bpm: float) -> str:
    """The style of the shipped styles the tempo alone suggests (the rule before the music's character)."""
    for upper, style in _AUTO_TEMPO_BANDS:
        if tempo_bpm < upper:
            return style
    raise ParameterError(f"tempo must be a number, got {tempo_bpm}")


@dataclass(frozen=True)
class StyleProfile:
    """One style's material on the three matching axes (each 0..1 relative to the library's styles)."""

    style: str
    power: float
    step: float
    glide: float
    tempo_bpm: tuple[float, float]
    """The tempo range its phrases fit at their own pace (10 % of them or more)."""

    def score(self, music: MusicCharacter) -> float:
        """How well the style suits ``music``: the axes weighted by the music's character."""
        fit = music.drive * self.power + music.lilt * self.step + music.flow * self.glide
        low, high = self.tempo_bpm
        return fit - (0.0 if low <= music.tempo_bpm <= high else _OFF_TEMPO)


def _relative(values: np.ndarray) -> np.ndarray:
    spread = float(values.max() - values.min())
    return (values - values.min()) / spread if spread > 1e-9 else np.full(values.shape, 0.5)


def _material(library: PhraseLibrary) -> np.ndarray:
    """Per style ``[styles, 6]``: median phrase energy, floor share, turn rate, stops on the beat,
    held-pose share, share of frames in the air (mirror images left out)."""
    raw = []
    for s in range(len(library.styles)):
        phrases = (library.phrase_style == s) & ~library.phrase_mirrored
        keys = library.clip_styles[library.key_clip[: library.n_keys]] == s
        frames = np.zeros(library.rotations.shape[0], dtype=bool)
        for c in np.nonzero(library.clip_styles == s)[0]:
            frames[library.clip_start[c] : library.clip_stop[c]] = True
        duration = np.maximum(library.phrase_duration_s[phrases], 1e-6)
        raw.append(
            (
                float(np.median(library.phrase_energy[phrases])),
                float(library.key_floor[: library.n_keys][keys].mean()),
                float(np.median(np.abs(library.phrase_turn[phrases]) / duration)),
                float(library.phrase_pinned_share[0][phrases].mean()),
                float(library.phrase_still[phrases].mean()),
                float(library.airborne[frames].mean()),
            )
        )
    return np.array(raw)


def style_profiles(library: PhraseLibrary) -> dict[str, StyleProfile]:
    """Each style's :class:`StyleProfile`, from its phrases and frames (mirror images left out)."""
    from choreo.choreography.style_fit import style_fits

    fits = style_fits(library)
    energy, floor, turn, pinned, still, air = (_relative(c) for c in _material(library).T)
    out = {}
    for s, name in enumerate(library.styles):
        fit = fits[name]
        out[name] = StyleProfile(
            style=name,
            power=float(energy[s] + floor[s]) / 2.0,
            step=float(turn[s] + pinned[s]) / 2.0,
            glide=float(still[s] + air[s] + (1.0 - energy[s])) / 3.0,
            tempo_bpm=fit.tempo_bpm or (0.0, 0.0),
        )
    return out


def nearest_style(library: PhraseLibrary, style: str, among: PhraseLibrary) -> str:
    """The style of ``among`` whose material is most like ``style``'s in ``library`` (each measure
    scaled by its spread over ``among``'s styles): what the network, which knows the shipped styles
    only, is conditioned on to perform a team style."""
    ours = _material(library)[library.style_index(style)]
    theirs = _material(among)
    spread = np.maximum(theirs.max(axis=0) - theirs.min(axis=0), 1e-9)
    return among.styles[int(np.argmin(np.sum(((theirs - ours) / spread) ** 2, axis=1)))]


@dataclass(frozen=True)
class StyleChoice:
    """The style to plan in, and why ``auto`` chose it (a note for the plan), when it did."""

    style: str
    note: str | None = None


def _reason(chosen: StyleProfile, music: MusicCharacter) -> str:
    axes = {"power": music.drive, "step": music.lilt, "glide": music.flow}
    axis = max(axes, key=lambda a: axes[a] * getattr(chosen, a))
    return f"{_WHY_MUSIC[axis]} and {chosen.style}'s {_WHY_STYLE[axis]}"


def choose_style(
    style: str, library: PhraseLibrary, *, music: MusicCharacter, duration_s: float
) -> StyleChoice:
    """The library style to plan in: the one asked for, or ``auto``'s for ``music``.

    A style qualifies for ``auto`` when the library holds at least
    :data:`MIN_SOURCE_S_PER_MIN` seconds of it per minute of the song
    (``duration_s``; a 14-minute song danced from 81 s of breakdance loops every
    move ten times); among those, the one whose material suits the music's
    character best (:meth:`StyleProfile.score`); with none, the style with the
    most material. A style asked for by name is returned as it is: the planner
    refuses one the library lacks, naming the styles it has.
    """
    if style != AUTO:
        return StyleChoice(style)
    minutes = {name: c["minutes"] for name, c in library.coverage().items()}
    need_min = MIN_SOURCE_S_PER_MIN * duration_s / 3600.0
    enough = [s for s in library.styles if minutes[s] >= need_min]
    if not enough:
        most = max(library.styles, key=lambda s: minutes[s])
        return StyleChoice(
            most, f"auto chose {most}, the style with the most material: none has enough for a song this long"
        )
    profiles = style_profiles(library)
    ranked = sorted(enough, key=lambda s: -profiles[s].score(music))
    chosen = profiles[ranked[0]]
    note = f"auto chose {chosen.style}: {_reason(chosen, music)}"
    short = [s for s in library.styles if s not in enough]
    better = max(short, key=lambda s: profiles[s].score(music), default=None)
    if better is not None and profiles[better].score(music) > chosen.score(music):
        note += (
            f" ({better} would suit it better, but the library holds too little of it for a song this long)"
        )
    return StyleChoice(chosen.style, note)
