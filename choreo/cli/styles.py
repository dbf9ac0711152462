"""``choreo styles``: the dance styles the model knows, which are deprecated, and how ``auto`` chooses."""

from __future__ import annotations

import argparse

from choreo.choreography.style_choice import auto_style_bands
from choreo.contracts.choices import STYLES
from choreo.models import merged_style_note, shipped_merged_styles

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``styles`` verb."""
    parser = subparsers.add_parser("styles", help="list the dance styles")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print one style a line (a deprecated one with its note), then the tempo bands ``auto`` uses."""
    merged = shipped_merged_styles()
    for style in STYLES:
        print(f"{style} ({merged_style_note(style, merged[style])})" if style in merged else style)
    lower = 0.0
    bands = []
    for upper, style in auto_style_bands():
        bands.append(
            f"{style} from {lower:g} BPM" if upper == float("inf") else f"{style} {lower:g}-{upper:g} BPM"
        )
        lower = upper
    print(f"auto (by tempo: {', '.join(bands)})")
    return 0
