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


def song_frames(inputs: Mapping[str, np.ndarray], widths: Mapping[str, int]) -> int:
    """Validate a song's inputs against the model's widths; returns its frame count ``N``.

    Raises
    ------
    EngineError
        Naming the missing input or the one whose shape is wrong.
    """
    missing = [name for name in widths if name not in inputs]
    if missing:
        raise EngineError(f"song inputs are missing {missing}")
    n_frames = int(np.shape(inputs["music"])[0]) if np.ndim(inputs["music"]) else 0
    if n_frames < 1:
        raise EngineError("song inputs hold no frames")
    for name, width in widths.items():
        shape = np.shape(inputs[name])
        if shape != (n_frames, width):
            raise EngineError(
                f"song input {name!r} must be {(n_frames, width)} (frames x width), got {shape}"
            )
    return n_frames


def pack_song(
    inputs: Mapping[str, np.ndarray], widths: Mapping[str, int], n_frames: int, chunk_frames: int
) -> dict[str, np.ndarray]:
    """The song's inputs cut into chunks: ``{name: [chunks, chunk_frames, width]}`` float32, each contiguous.

    Chunk ``k`` holds frames ``k * chunk_frames`` up to the next chunk; the last
    chunk is zero-padded to ``chunk_frames``. This is the one chunking and
    padding rule of every runner.
    """
    n_chunks = -(-n_frames // chunk_frames)
    packed = {}
    for name, width in widths.items():
        chunks = np.zeros((n_chunks * chunk_frames, width), dtype=np.float32)
        chunks[:n_frames] = inputs[name]
        packed[name] = chunks.reshape(n_chunks, chunk_frames, width)
    return packed


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

    def run_song(self, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        """The song's poses ``[N, 75]`` float32.

        Raises
        ------
        EngineError
            When the inputs do not fit the model or the engine fails.
        """
        widths = self.spec.input_widths
        n_frames = song_frames(inputs, widths)
        packed = pack_song(inputs, widths, n_frames, self.chunk_frames)
        poses = np.empty((n_frames, FRAME_SIZE), dtype=np.float32)
        state = self.engine.initial_state(1)
        for lo in range(0, n_frames, self.chunk_frames):
            hi = min(lo + self.chunk_frames, n_frames)
            k = lo // self.chunk_frames
            out, state = self.engine.run({name: chunks[k : k + 1] for name, chunks in packed.items()}, state)
            poses[lo:hi] = out[0, : hi - lo]
        return poses
