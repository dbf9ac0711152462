"""The evaluation's songs: which one mismatches which, and contexts on a clip's clock."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from choreo.audio import analyze_song
from choreo.errors import ParameterError
from choreo.metrics.music_pool import MusicPool

CC = Path("/work/shared/data/music/cc")
VIBE_ACE = CC / "Kevin_MacLeod_-_Vibe_Ace.hq.ogg"  # librosa: 129 BPM
SUGAR_PLUM = CC / "Kevin_MacLeod_-_P_I_Tchaikovsky_Dance_of_the_Sugar_Plum_Fairy.hq.ogg"  # librosa: 108 BPM


def test_two_songs_of_different_tempo_mismatch_each_other(tmp_path: Path) -> None:
    broken = tmp_path / "broken.ogg"
    broken.write_bytes(b"OggS" + bytes(200))
    pool = MusicPool([VIBE_ACE, SUGAR_PLUM, broken], lambda song: analyze_song(song, fps=30))
    assert pool.mismatched(VIBE_ACE.name) == SUGAR_PLUM.name
    assert pool.mismatched(SUGAR_PLUM.name) == VIBE_ACE.name
    assert pool.mismatched(broken.name) is None  # unreadable: it mismatches nothing

    context = pool.context(VIBE_ACE.name, start_s=20.0, duration_s=15.0)
    own = pool.beats(VIBE_ACE.name)
    np.testing.assert_allclose(context.own_beats_s, own[(own >= 20.0) & (own < 35.0)] - 20.0)
    assert context.mismatched_beats_s is not None and context.mismatched_beats_s.max() >= 14.0
    structure = pool.structure(VIBE_ACE.name)
    np.testing.assert_array_equal(own, structure.beat_times)  # scored on the beats the planner follows
    np.testing.assert_allclose(context.bar_starts_s, structure.bar_starts - 20.0)
    with pytest.raises(ParameterError, match="not among"):
        pool.context("other.ogg", duration_s=10.0)
