"""What Choreo ships: the guided network (``choreo-guided.onnx``, which ``--synth model`` runs, with
``MODEL_CARD.md``) and the phrase library (``phrase-library.npz``, with ``PHRASE_LIBRARY.md``).

What the service and the command line say about the shipped library (its hash,
its merged styles) is read here from the file alone, so that they need not load
the choreography. This package imports nothing of Choreo's.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

__all__ = [
    "DEFAULT_MODEL_PATH",
    "SHIPPED_LIBRARY",
    "merged_style_note",
    "shipped_library_sha256",
    "shipped_merged_styles",
]

DEFAULT_MODEL_PATH = Path(__file__).resolve().parent / "choreo-guided.onnx"
SHIPPED_LIBRARY = Path(__file__).resolve().parent / "phrase-library.npz"


@lru_cache(maxsize=1)
def shipped_merged_styles() -> dict[str, str]:
    """The shipped library's merged styles (deprecated name -> the style that dances it).

    Read from the file's metadata alone (milliseconds), so that listing the
    styles does not load the frames.
    """
    import numpy as np

    with np.load(SHIPPED_LIBRARY, allow_pickle=False) as npz:
        return dict(json.loads(str(npz["meta"]))["merged_styles"])


def merged_style_note(style: str, into: str) -> str:
    """The deprecation note for ``style``, which the library merged into ``into``."""
    return f"style {style!r} is deprecated: too little data to plan from, merged into {into!r}"


@lru_cache(maxsize=1)
def shipped_library_sha256() -> str:
    """SHA-256 of the shipped library file, without loading it (the service's dedup key uses it)."""
    return hashlib.sha256(SHIPPED_LIBRARY.read_bytes()).hexdigest()
