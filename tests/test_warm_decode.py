"""The decode child starts warm: the forkserver it is forked from ran one analysis first
(:mod:`worker.warm_decode`, preloaded by :mod:`worker.isolated`).

Each call runs in a real child of the real forkserver, as a CPU worker's decode does, made from a thread of
its own (a thread keeps its child: the main thread's may have analysed songs already).
"""

from __future__ import annotations

import threading

from choreo.audio.features import feature_sr
from choreo.audio.filters import chroma_filterbank, mel_filterbank
from choreo.runners import native_fps
from worker.isolated import run_isolated


def _filterbanks_made() -> dict[str, tuple[int, int]]:
    """In the child: how many filterbanks of each kind its caches hold, and how many were ever made."""
    return {
        f.__name__: (f.cache_info().currsize, f.cache_info().misses)
        for f in (mel_filterbank, chroma_filterbank)
    }


def test_a_decode_child_finds_the_filterbanks_of_each_shipped_rate_already_made() -> None:
    rates = {feature_sr(native_fps("blend")), feature_sr(native_fps("model"))}
    found: list[dict[str, tuple[int, int]]] = []
    thread = threading.Thread(
        target=lambda: found.append(run_isolated(_filterbanks_made, timeout_s=120, what="reading caches"))
    )
    thread.start()
    thread.join(timeout=150)
    (made,) = found
    # One filterbank a rate, made in the forkserver before it forked; a cold child would start with none.
    assert made == {"mel_filterbank": (len(rates),) * 2, "chroma_filterbank": (len(rates),) * 2}, made
