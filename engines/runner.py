"""The song-runner seam: a whole song's per-frame inputs in, its poses out.

Everything that generates a dance goes through a :class:`SongRunner`: the
command line runs one song at a time with :class:`SingleSongRunner`, a GPU
worker shares its engine calls between songs with the sequence batcher
(:class:`engines.batcher.SequenceBatcher`). Both cut a song into chunks by the
one rule here (:func:`pack_song`): every chunk holds ``chunk_frames`` frames,
the last one zero-padded to that length. The model is causal (a tested part of
the engine contract), so the padding never changes a real frame, and the state
after the padded chunk is never used because the song ends there. One rule
means one place to change for a new input, and the same engine calls, hence
the same dance, on both paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import numpy as np

from choreo.contracts.model_spec import ModelSpec
from choreo.errors import EngineError, ParameterError
from choreo.motion.motion import FRAME_SIZE
from engines.base import MAX_CHUNK_FRAMES, MIN_CHUNK_FRAMES, Engine

__all__ = [
    "SingleSongRunner",
    "SongRunner",
    "check_chunk_frames",
    "input_columns",
    "pack_song",
    "song_frames",
]


class SongRunner(Protocol):
    """Turns a whole song's model inputs into its poses.

    ``spec`` describes the model the runner serves (native fps, styles, widths).
    """

    spec: ModelSpec

    def run_song(self, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        """Poses ``[N, 75]`` float32 for per-frame inputs ``{name: [N, width]}`` float32."""
        ...


def check_chunk_frames(chunk_frames: int) -> int:
    """Validate a chunk length against the engine contract; returns it."""
    if not MIN_CHUNK_FRAMES <= chunk_frames <= MAX_CHUNK_FRAMES:
        raise ParameterError(
            f"chunk_frames must be from {MIN_CHUNK_FRAMES} to {MAX_CHUNK_FRAMES}, got {chunk_frames}"
        )
    return chunk_frames


def input_columns(spec: ModelSpec) -> dict[str, slice]:
    """Where each conditioning input sits in a packed song's last axis, in contract order."""
    columns, start = {}, 0
    for name, width in spec.input_widths.items():
        columns[name] = slice(start, start + width)
        start += width
    return columns


def song_frames(inputs: Mapping[str, np.ndarray], columns: Mapping[str, slice]) -> int:
    """Validate a song's inputs against the model's widths; returns its frame count ``N``.

    Raises
    ------
    EngineError
        Naming the missing input or the one whose shape is wrong.
    """
    missing = [name for name in columns if name not in inputs]
    if missing:
        raise EngineError(f"song inputs are missing {missing}")
    n_frames = int(np.shape(inputs["music"])[0]) if np.ndim(inputs["music"]) else 0
    if n_frames < 1:
        raise EngineError("song inputs hold no frames")
    for name, cols in columns.items():
        shape = np.shape(inputs[name])
        width = cols.stop - cols.start
        if shape != (n_frames, width):
            raise EngineError(
                f"song input {name!r} must be {(n_frames, width)} (frames x width), got {shape}"
            )
    return n_frames


def pack_song(
    inputs: Mapping[str, np.ndarray], columns: Mapping[str, slice], n_frames: int, chunk_frames: int
) -> np.ndarray:
    """The song's inputs side by side, cut into chunks: ``[chunks, chunk_frames, width]`` float32.

    Chunk ``k`` holds frames ``k * chunk_frames`` up to the next chunk; the last
    chunk is zero-padded to ``chunk_frames``. This is the one chunking and
    padding rule of every runner.
    """
    n_chunks = -(-n_frames // chunk_frames)
    width = max(cols.stop for cols in columns.values())
    packed = np.zeros((n_chunks * chunk_frames, width), dtype=np.float32)
    for name, cols in columns.items():
        packed[:n_frames, cols] = inputs[name]
    return packed.reshape(n_chunks, chunk_frames, width)


class SingleSongRunner:
    """Runs one song at a time through ``engine``, chunk by chunk, carrying the state.

    Parameters
    ----------
    engine : a loaded engine of any backend
    chunk_frames : frames per engine call, from 16 to 128

    Examples
    --------
    >>> poses = SingleSongRunner(engine, 128).run_song(inputs)  # doctest: +SKIP
    """

    def __init__(self, engine: Engine, chunk_frames: int = MAX_CHUNK_FRAMES) -> None:
        self.engine = engine
        self.spec = engine.spec
        self.chunk_frames = check_chunk_frames(chunk_frames)
        self._columns = input_columns(engine.spec)

    def run_song(self, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        """The song's poses ``[N, 75]`` float32.

        Raises
        ------
        EngineError
            When the inputs do not fit the model or the engine fails.
        """
        n_frames = song_frames(inputs, self._columns)
        packed = pack_song(inputs, self._columns, n_frames, self.chunk_frames)
        poses = np.empty((n_frames, FRAME_SIZE), dtype=np.float32)
        state = self.engine.initial_state(1)
        for k, chunk in enumerate(packed):
            lo = k * self.chunk_frames
            hi = min(lo + self.chunk_frames, n_frames)
            out, state = self.engine.run(
                {name: chunk[None, :, cols] for name, cols in self._columns.items()}, state
            )
            poses[lo:hi] = out[0, : hi - lo]
        return poses
