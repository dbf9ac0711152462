"""Dance styles: the families in the training data, and ``auto``.

``auto`` picks a style from the music's tempo, so that a slow piece gets the
flowing moves of modern dance and a fast one gets breakdance. The bands follow
where each family's source recordings sit.
"""

from __future__ import annotations

from choreo.errors import ParameterError

__all__ = ["AUTO", "STYLES", "auto_style", "auto_style_bands"]

STYLES: tuple[str, ...] = ("salsa", "modern", "breakdance", "whirl")
AUTO = "auto"

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
    """The style ``auto`` chooses for music at ``tempo_bpm``."""
    for upper, style in _AUTO_TEMPO_BANDS:
        if tempo_bpm < upper:
            return style
    raise ParameterError(f"tempo must be a number, got {tempo_bpm}")
