"""The sequence batcher: many songs in flight, one engine call per chunk step.

A GPU worker serves many concurrent requests, each a whole song. Run alone, a
song keeps the GPU nearly idle (a chunk of one sequence is a few hundred tiny
kernels); packed together, the same call serves up to ``max_batch`` songs.

How it works:

* every song in flight owns a *slot*: a row of a batch-first state pool that
  lives where the engine keeps its state (on the GPU for device backends);
* a background thread repeatedly packs the next chunk of every song in flight
  into one ``[B, T, ·]`` call, runs the engine once, takes each song's poses
  and writes the new state rows back into the pool;
* a song is cut into chunks by the one rule of :mod:`engines.runner` (every
  chunk ``chunk_frames`` long, the last zero-padded), the rule the one-song
  runner follows too, so a song gets the same dance alone or batched. The
  submitting thread packs each of the song's inputs, padded, into one
  contiguous ``[chunks, chunk_frames, width]`` array, so packing a call is one
  copy per song and input, straight into the host buffers a device engine sends
  its next call from (:meth:`~engines.base.Engine.input_buffers`: pinned memory
  for torch-cuda), and the batcher's thread stays free for the engine;
* a finished or cancelled song leaves at once and a waiting song takes its slot
  before the next call (continuous batching);
* when an engine call fails, each song of that call is retried alone, so only
  the song that causes the failure gets the error.

Submission is thread-safe: many Celery threads call :meth:`SequenceBatcher.run_song`
(blocking; the :class:`engines.runner.SongRunner` seam) or :meth:`SequenceBatcher.submit`
(a future) at once.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from choreo.errors import EngineError, ParameterError
from choreo.motion.motion import FRAME_SIZE
from engines.base import MAX_CHUNK_FRAMES, Engine, PendingPoses
from engines.runner import check_chunk_frames, pack_song, song_frames

__all__ = ["BatcherStats", "SequenceBatcher", "loaded_process_batcher", "process_batcher"]


@dataclass
class BatcherStats:
    """Counters since the batcher started (read them for monitoring and benchmarks).

    ``rows`` counts sequences per engine call summed over calls; ``frames`` counts
    real (not padded) frames produced.
    """

    calls: int = 0
    rows: int = 0
    frames: int = 0
    songs_done: int = 0
    songs_failed: int = 0
    songs_cancelled: int = 0
    isolation_retries: int = 0
    engine_s: float = 0.0


@dataclass(eq=False)
class _Song:
    packed: dict[str, np.ndarray]  # {input: [chunks, chunk_frames, width]}, zero-padded
    n_frames: int
    future: Future
    poses: np.ndarray
    next_frame: int = 0
    slot: int = -1
    submitted_s: float = field(default_factory=time.perf_counter)


@dataclass(eq=False)
class _Call:
    """One engine call: each song with the frames ``[lo, hi)`` it computes, and its poses to come.

    ``pending`` is None for a call that failed to launch; ``inputs`` then keeps its packed chunks
    for running the songs one by one.
    """

    spans: list[tuple[_Song, int, int]]
    pending: PendingPoses | None
    inputs: dict[str, np.ndarray] | None


class SequenceBatcher:
    """Packs the chunks of many songs into shared engine calls.

    Parameters
    ----------
    engine : a loaded engine (any backend); used only from the batcher's thread
    max_batch : songs per engine call (and slots in the state pool)
    chunk_frames : frames per chunk, from 16 to 128

    Examples
    --------
    >>> batcher = SequenceBatcher(engine, max_batch=64)          # doctest: +SKIP
    >>> poses = batcher.run_song({"music": m, "style": s, "latent": z})  # [N, 75]
    >>> batcher.close()
    """

    def __init__(self, engine: Engine, *, max_batch: int = 64, chunk_frames: int = MAX_CHUNK_FRAMES) -> None:
        if max_batch < 1:
            raise ParameterError(f"max_batch must be at least 1, got {max_batch}")
        check_chunk_frames(chunk_frames)
        profile = engine.profile  # a TensorRT engine serves one shape profile
        if profile is not None and not profile.contains(max_batch, chunk_frames):
            raise ParameterError(
                f"the engine's profile ({profile.min}..{profile.max}, batch x frames) cannot run "
                f"{max_batch} songs x {chunk_frames} frames; lower max_batch or build a larger profile"
            )
        self.engine = engine
        self.max_batch = max_batch
        self.chunk_frames = chunk_frames
        self.spec = engine.spec
        self.stats = BatcherStats()
        self._pool = engine.initial_state(max_batch)
        self._rows = engine.state_rows
        self._free_slots = list(range(max_batch - 1, -1, -1))
        self._widths = engine.spec.input_widths
        self._pack = {
            name: np.zeros((max_batch, chunk_frames, width), dtype=np.float32)
            for name, width in self._widths.items()
        }
        self._waiting: deque[_Song] = deque()
        self._active: list[_Song] = []
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="choreo-batcher", daemon=True)
        self._thread.start()

    # -- submission (any thread) ----------------------------------------------------------------------------

    def submit(self, inputs: Mapping[str, np.ndarray]) -> Future:
        """Queue a whole song; the future gives its poses ``[N, 75]`` (float32).

        Parameters
        ----------
        inputs : ``music [N, 35]``, ``style [N, S]``, ``latent [N, Z]``: the song's
            per-frame conditioning at the model's native fps

        Raises
        ------
        EngineError
            At once, when the inputs do not fit the model or the batcher is closed.
        """
        n_frames = song_frames(inputs, self._widths)
        poses = np.empty((n_frames, FRAME_SIZE), dtype=np.float32)
        poses.fill(0.0)  # touch the pages here, not in the batcher's thread between engine calls
        packed = pack_song(inputs, self._widths, n_frames, self.chunk_frames)
        song = _Song(packed, n_frames, Future(), poses)
        with self._cond:
            if self._closed:
                raise EngineError("the batcher is closed")
            self._waiting.append(song)
            self._cond.notify_all()
        return song.future

    def run_song(self, inputs: Mapping[str, np.ndarray], *, timeout_s: float | None = None) -> np.ndarray:
        """Generate a whole song's poses ``[N, 75]``, blocking the calling thread only.

        Raises
        ------
        EngineError
            When the song's inputs are bad or the engine fails on this song.
        TimeoutError
            When ``timeout_s`` passes first (the song is then cancelled).
        """
        future = self.submit(inputs)
        try:
            return future.result(timeout=timeout_s)
        except TimeoutError:
            future.cancel()
            raise

    def warm_up(self) -> None:
        """Run one zero chunk at every power-of-two batch up to ``max_batch``, before serving.

        Device backends prepare each batch shape once (torch-cuda captures a CUDA
        graph, taking about a second); doing it at start keeps that cost off the
        first songs. Call it before the first submission.
        """
        batch = 1
        while True:
            size = min(batch, self.max_batch)
            inputs = {
                name: np.zeros((size, self.chunk_frames, width), np.float32)
                for name, width in self._widths.items()
            }
            if self.spec.styles and "style" in inputs:
                inputs["style"][:, :, 0] = 1.0
            self.engine.run(inputs, self.engine.initial_state(size))
            if size == self.max_batch:
                return
            batch *= 2

    def in_flight(self) -> int:
        """Songs waiting or running."""
        with self._cond:
            return len(self._waiting) + len(self._active)

    def close(self, *, timeout_s: float | None = 10.0) -> None:
        """Stop the batcher; songs not finished are cancelled."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=timeout_s)

    def __enter__(self) -> SequenceBatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the engine thread -------------------------------------------------------------------------------

    def _release(self, song: _Song) -> None:
        if song.slot >= 0:
            self._free_slots.append(song.slot)
            song.slot = -1

    def _admit_and_evict(self) -> list[_Song]:
        """Drop cancelled songs, fill free slots from the queue; returns the songs with a chunk to launch."""
        kept = []
        for song in self._active:
            if song.future.cancelled():
                self._release(song)
                self.stats.songs_cancelled += 1
            else:
                kept.append(song)
        self._active = kept
        new_slots = []
        while self._waiting and self._free_slots:
            song = self._next_waiting()
            if song.future.cancelled():
                self.stats.songs_cancelled += 1
                continue
            song.slot = self._free_slots.pop()
            new_slots.append(song.slot)
            self._active.append(song)
        if new_slots:
            self._rows.zero(self._pool, new_slots)
        return sorted((s for s in self._active if s.next_frame < s.n_frames), key=lambda s: s.slot)

    def _next_waiting(self) -> _Song:
        """The waiting song a free slot takes: the longest, so that an album's last calls are not left to a
        few long songs while the GPU could run many (longest first keeps the end of a batch short)."""
        longest = max(range(len(self._waiting)), key=lambda i: self._waiting[i].n_frames)
        song = self._waiting[longest]
        del self._waiting[longest]
        return song

    def _loop(self) -> None:
        """Launch a call, then hand out the previous call's poses while the engine runs this one."""
        in_flight: _Call | None = None
        while True:
            with self._cond:
                while not self._closed and not self._waiting and not self._active and in_flight is None:
                    self._cond.wait()
                if self._closed:
                    for song in [*self._active, *self._waiting]:
                        song.future.cancel()
                    self._active, self._waiting = [], deque()
                    return
                batch = self._admit_and_evict()
            launched = self._launch(batch) if batch else None
            if in_flight is not None and in_flight.pending is not None:
                self._deliver(in_flight.spans, in_flight.pending)
            if launched is not None and launched.inputs is not None:  # the call failed: one song at a time
                self._isolate(launched.spans, launched.inputs)
                launched = None
            in_flight = launched

    def _launch(self, batch: list[_Song]) -> _Call:
        """Pack the songs' next chunks, start the engine on them and put the new state into the pool.

        The slot of a song whose last chunk this is goes back at once (its poses are handed out with
        the call's); a failed launch leaves every song as it was, for :meth:`_isolate`.
        """
        size, chunk = len(batch), self.chunk_frames
        own = {name: buffer[:size] for name, buffer in self._pack.items()}
        inputs = self.engine.input_buffers(size, chunk) or own
        for name, buffer in inputs.items():
            np.stack([song.packed[name][song.next_frame // chunk] for song in batch], out=buffer)
        rows = [song.slot for song in batch]
        spans = [(song, song.next_frame, min(song.next_frame + chunk, song.n_frames)) for song in batch]
        start = time.perf_counter()
        try:
            pending, new_state = self.engine.launch(inputs, self._rows.take(self._pool, rows))
        except Exception:  # one song may have broken the call: find it, keep the others
            self.stats.engine_s += time.perf_counter() - start
            return _Call(spans, None, {name: value.copy() for name, value in inputs.items()})
        self.stats.engine_s += time.perf_counter() - start
        self.stats.calls += 1
        self.stats.rows += size
        self._rows.put(self._pool, rows, new_state)
        with self._cond:
            for song, _, hi in spans:
                song.next_frame = hi
                if hi >= song.n_frames:
                    self._release(song)
        return _Call(spans, pending, None)

    def _deliver(self, spans: list[tuple[_Song, int, int]], pending: PendingPoses) -> None:
        """Wait for a launched call's poses and give each song its rows; end the songs they complete."""
        start = time.perf_counter()
        try:
            poses = pending.wait()
        except Exception as exc:  # the engine failed after the launch: its songs' state is lost
            for song, _, _ in spans:
                self._fail(song, exc)
            return
        finally:
            self.stats.engine_s += time.perf_counter() - start
        self._hand_out(spans, poses)

    def _isolate(self, spans: list[tuple[_Song, int, int]], inputs: dict[str, np.ndarray]) -> None:
        """Run a failed call's songs one at a time, so that only the song that breaks it fails."""
        for row, (song, lo, hi) in enumerate(spans):
            self.stats.isolation_retries += 1
            single = {name: value[row : row + 1] for name, value in inputs.items()}
            try:
                poses, new_state = self.engine.run(single, self._rows.take(self._pool, [song.slot]))
            except Exception as exc:
                self._fail(song, exc)
                continue
            self.stats.calls += 1
            self.stats.rows += 1
            self._rows.put(self._pool, [song.slot], new_state)
            with self._cond:
                song.next_frame = hi
                if hi >= song.n_frames:
                    self._release(song)
            self._hand_out([(song, lo, hi)], poses)

    def _hand_out(self, spans: list[tuple[_Song, int, int]], poses: np.ndarray) -> None:
        """Give each song its rows of ``poses`` (row ``i`` is ``spans[i]``'s); end the songs they complete."""
        frames, finished = 0, []
        for row, (song, lo, hi) in enumerate(spans):
            if song.future.done():  # failed or cancelled meanwhile
                continue
            song.poses[lo:hi] = poses[row, : hi - lo]
            frames += hi - lo
            if hi >= song.n_frames:
                finished.append(song)
        self.stats.frames += frames
        if not finished:
            return
        with self._cond:
            for song in finished:
                self._active.remove(song)
        for song in finished:
            if song.future.set_running_or_notify_cancel():
                song.future.set_result(song.poses)
                self.stats.songs_done += 1
            else:
                self.stats.songs_cancelled += 1

    def _fail(self, song: _Song, exc: Exception) -> None:
        with self._cond:
            if song in self._active:
                self._active.remove(song)
            self._release(song)
        if song.future.done():
            return
        self.stats.songs_failed += 1
        error = exc if isinstance(exc, EngineError) else EngineError(f"engine failed on this song: {exc}")
        if song.future.set_running_or_notify_cancel():
            song.future.set_exception(error)

    @property
    def state_pool(self) -> Any:
        """The batch-first state rows of every slot (on the engine's device)."""
        return self._pool


_PROCESS_BATCHER: SequenceBatcher | None = None
_PROCESS_LOCK = threading.Lock()


def process_batcher(model_path: Path) -> SequenceBatcher:
    """The worker process's batcher over its engine for ``model_path``, made on the first call.

    The engine comes from :func:`engines.registry.load_engine` (backend from
    ``CHOREO_ENGINE_BACKEND``), ``max_batch`` from ``CHOREO_ENGINE_MAX_BATCH`` and
    the chunk length from ``CHOREO_ENGINE_CHUNK_FRAMES``. A GPU Celery worker calls
    ``process_batcher(path).run_song(inputs)`` from each of its task threads: one
    model per process, the first call's.
    """
    global _PROCESS_BATCHER
    with _PROCESS_LOCK:
        if _PROCESS_BATCHER is None:
            from engines.registry import load_engine
            from engines.settings import get_engine_settings

            settings = get_engine_settings()
            batcher = SequenceBatcher(
                load_engine(model_path, settings=settings),
                max_batch=settings.max_batch,
                chunk_frames=settings.chunk_frames,
            )
            if batcher.engine.prepares_shapes:
                batcher.warm_up()
            _PROCESS_BATCHER = batcher
        return _PROCESS_BATCHER


def loaded_process_batcher() -> SequenceBatcher | None:
    """The process's batcher if :func:`process_batcher` has made it, else None (nothing is loaded)."""
    return _PROCESS_BATCHER
