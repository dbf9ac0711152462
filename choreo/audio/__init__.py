"""Songs in, per-frame music features out: decoding, features, beats and tempo.

``analyze_song(path, fps=30)`` is the one call the pipeline needs: it checks
the song (duration from the header, level, beats), decodes it to mono float32
at ``fps * 512`` Hz and returns :class:`MusicFeatures` whose row ``k`` is the
audio at time ``k / fps``. Every refusal is an :class:`~choreo.errors.AudioError`
with a code from :mod:`choreo.audio.failures`.
"""

from choreo.audio.analyze import analyze_song, peak_dbfs
from choreo.audio.checksum import song_sha256
from choreo.audio.decode import load_audio
from choreo.audio.features import HOP_LENGTH, extract_features, feature_sr
from choreo.audio.formats import probe_duration_s
from choreo.audio.music_features import FEATURE_DIM, MusicFeatures

__all__ = [
    "FEATURE_DIM",
    "HOP_LENGTH",
    "MusicFeatures",
    "analyze_song",
    "extract_features",
    "feature_sr",
    "load_audio",
    "peak_dbfs",
    "probe_duration_s",
    "song_sha256",
]
