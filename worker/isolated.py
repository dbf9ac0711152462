"""Run a stage's decode in a child process that a deadline can kill, in every pool.

A song can make its decoder hang: a crafted file, an ``ffmpeg`` that stalls. A
threads pool, which every worker we ship runs (:mod:`worker.app`), cannot stop
a hung thread, which would hold its slot for good. So :func:`run_isolated` runs
the work in a child process, in a process group of its own; past its deadline
the whole group (the child and any ``ffmpeg`` it started) is SIGKILLed and the
caller gets a ``timeout`` error. A child that dies (a decoder that crashes)
fails the call instead of the worker.

Each calling thread (a slot of the pool) keeps its child and sends it one call
after another, so a song pays a message each way, not a process: the child is
forked once from a forkserver whose modules are preloaded and whose caches one
analysis has filled (:data:`PRELOAD`), and is replaced only when a deadline
kills it, when it dies, or after :data:`CALLS_PER_CHILD` calls (what one
song's decoding leaves in its memory goes with it, as Celery's
``max_tasks_per_child`` does for processes).

A :class:`~choreo.errors.ChoreoError` raised in the child comes back with its
class, code and transience (pickling an exception would drop the code).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from choreo.errors import ChoreoError

__all__ = ["CALLS_PER_CHILD", "PRELOAD", "run_isolated", "start_forkserver"]

T = TypeVar("T")

PRELOAD = ["choreo.pipeline", "worker.isolated", "worker.warm_decode"]
"""What the forkserver imports before it forks: the pipeline, this module's child, and the warm-up
(:mod:`worker.warm_decode`: one analysis, so that each child starts with its caches filled)."""

CALLS_PER_CHILD = 200
"""Calls a child serves before a fresh one takes its place."""

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(PRELOAD)
_SLOT = threading.local()  # the calling thread's child, if it has one


def start_forkserver() -> None:
    """Start the forkserver now (a worker's start-up), so a first song does not wait for its imports."""
    from multiprocessing import forkserver

    forkserver.ensure_running()


def _outcome(fn: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        return ("ok", fn())
    except ChoreoError as exc:
        return ("choreo", type(exc), str(exc), exc.code, exc.transient)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which fails the stage
        return ("crash", f"{type(exc).__name__}: {exc}")


def _serve(conn: Connection) -> None:
    """The child: run each call that comes, answer with its outcome, until the parent hangs up."""
    os.setpgid(0, 0)  # a group of its own: the deadline kills what it started too
    while True:
        try:
            fn = conn.recv()
        except EOFError:  # the parent closed its end, or died
            return
        conn.send(_outcome(fn))


class _Child:
    """One long-lived child and the parent's end of its pipe."""

    def __init__(self) -> None:
        self.conn, theirs = _CONTEXT.Pipe(duplex=True)
        self.proc = _CONTEXT.Process(target=_serve, args=(theirs,), name="choreo-isolated", daemon=True)
        self.proc.start()
        theirs.close()
        self.calls = 0

    def retire(self, *, kill: bool) -> None:
        """Stop the child: killed with its group (a deadline, a broken call), or told to end."""
        if kill:
            _kill_group(self.proc.pid)  # type: ignore[arg-type]  # started, so it has a pid
        self.conn.close()
        self.proc.join(timeout=10)


def _slot_child() -> _Child:
    """This thread's child, started on first use or after the last one was retired."""
    child: _Child | None = getattr(_SLOT, "child", None)
    if child is None or not child.proc.is_alive():
        if child is not None:
            child.retire(kill=True)
        child = _SLOT.child = _Child()
    return child


def _kill_group(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(ProcessLookupError):  # the group was not made yet, or it is gone
            kill(pid, signal.SIGKILL)


def run_isolated(fn: Callable[[], T], *, timeout_s: float, what: str) -> T:
    """``fn()`` in a killable child; its result, or its error raised here.

    ``fn`` and its result must pickle (a module-level function, or a ``functools.partial`` of one).

    Raises
    ------
    ChoreoError
        ``timeout`` when it ran past ``timeout_s`` (the child's process group is
        killed), ``internal_error`` when the child died or raised something
        other than a ChoreoError, or the child's own ChoreoError.
    """
    child = _slot_child()
    try:
        child.conn.send(fn)
    except (BrokenPipeError, EOFError, OSError):  # it died since its last call: one fresh child
        child.retire(kill=True)
        child = _SLOT.child = _Child()
        child.conn.send(fn)
    finished = False
    try:
        if not child.conn.poll(max(timeout_s, 0.0)):
            raise ChoreoError(f"{what} took longer than {timeout_s:.0f} s", code="timeout")
        try:
            outcome = child.conn.recv()
        except EOFError:
            child.proc.join(timeout=5)
            raise ChoreoError(
                f"{what} crashed (its process ended with status {child.proc.exitcode})",
                code="internal_error",
            ) from None
        finished = True
    finally:
        child.calls += 1
        if not finished or child.calls >= CALLS_PER_CHILD:
            child.retire(kill=not finished)
            _SLOT.child = None
    if outcome[0] == "choreo":
        _, cls, message, code, transient = outcome
        raise cls(message, code=code, transient=transient)
    if outcome[0] == "crash":
        raise ChoreoError(f"{what} failed ({outcome[1]})", code="internal_error")
    return outcome[1]
