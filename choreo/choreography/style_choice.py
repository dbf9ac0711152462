"""Which of the library's styles a song is danced in: the style asked for, or ``auto``'s choice.

``auto`` picks by the music's tempo, so that a slow piece gets the flowing moves
of modern dance and a fast one gets breakdance (the bands follow where each
family's source recordings sit), among the styles the library holds enough of
for the song's length.
"""

from __future__ import annotations

from dataclasses import dataclass

from choreo.choreography.library import PhraseLibrary
from choreo.contracts.choices import AUTO
from choreo.errors import ParameterError

__all__ = ["MIN_SOURCE_S_PER_MIN", "StyleChoice", "auto_style", "auto_style_bands", "choose_style"]

MIN_SOURCE_S_PER_MIN = 20.0
"""``auto`` passes over a style with less library material than this per minute of the song."""

# Upper tempo bound (BPM, exclusive) of each style that ``auto`` may choose.
_AUTO_TEMPO_BANDS: tuple[tuple[float, str], ...] = (
    (96.0, "modern"),
    (132.0, "salsa"),
    (float("inf"), "breakdance"),
)


def auto_style_bands() -> tuple[tuple[float, str], ...]:
    """``(upper tempo bound in BPM, style)`` pairs that ``auto`` chooses by, slowest first."""
    return _AUTO_TEMPO_BANDS


def auto_style(tempo_bpm: float) -> str:
    """The style ``auto`` chooses for music at ``tempo_bpm``, before the library has its say."""
    for upper, style in _AUTO_TEMPO_BANDS:
        if tempo_bpm < upper:
            return style
    raise ParameterError(f"tempo must be a number, got {tempo_bpm}")


@dataclass(frozen=True)
class StyleChoice:
    """The style to plan in, and why it is not the tempo's own when it is not (a note for the plan)."""

    style: str
    note: str | None = None


def choose_style(style: str, tempo_bpm: float, library: PhraseLibrary, duration_s: float) -> StyleChoice:
    """The library style to plan in: the one asked for, or ``auto``'s among those with enough material.

    A style qualifies for ``auto`` when the library holds at least
    :data:`MIN_SOURCE_S_PER_MIN` seconds of it per minute of the song (a
    14-minute song danced from 81 s of breakdance loops every move ten times);
    among those, the tempo's style or the nearest to it; with none, the style
    with the most material. A style asked for by name is returned as it is: the
    planner refuses one the library lacks, naming the styles it has.
    """
    if style != AUTO:
        return StyleChoice(style)
    minutes = {name: c["minutes"] for name, c in library.coverage().items()}
    most = max(library.styles, key=lambda s: minutes[s])
    by_tempo = auto_style(tempo_bpm)
    if by_tempo not in library.styles:
        by_tempo = most
    need_min = MIN_SOURCE_S_PER_MIN * duration_s / 3600.0
    chosen = next(
        (
            library.styles[s]
            for s in library.styles_by_nearness(library.style_index(by_tempo))
            if minutes[library.styles[s]] >= need_min
        ),
        most,
    )
    if chosen == by_tempo:
        return StyleChoice(chosen)
    return StyleChoice(
        chosen,
        f"auto chose {chosen} rather than {by_tempo} (the tempo's style): the library holds too "
        f"little {by_tempo} for a song this long",
    )
