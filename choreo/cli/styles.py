"""``choreo styles``: the dance styles the model knows, which are deprecated, and how ``auto`` chooses."""

from __future__ import annotations

import argparse

from choreo.contracts.choices import STYLES
from choreo.models import merged_style_note, shipped_merged_styles

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``styles`` verb."""
    parser = subparsers.add_parser("styles", help="list the dance styles")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print one style a line (a deprecated one with its note), then how ``auto`` chooses."""
    merged = shipped_merged_styles()
    for style in STYLES:
        print(f"{style} ({merged_style_note(style, merged[style])})" if style in merged else style)
    print("auto (by the music's character: drive, lilt and flow, matched with each style's material)")
    return 0
