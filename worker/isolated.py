"""Run a stage's decode in a child process that a deadline can kill, in every pool.

A song can make its decoder hang: a crafted file, an ``ffmpeg`` that stalls. A
threads pool, which every worker we ship runs (:mod:`worker.app`), cannot stop
a hung thread, which would hold its slot for good. So :func:`run_isolated` runs
the work in a child forked from a forkserver whose modules are preloaded and whose caches one analysis
has filled (:data:`PRELOAD`: a fork costs milliseconds, not the seconds of importing the pipeline, and
the child does not redo a first analysis's set-up), in a process group of its own; past its
deadline the whole group (the child and any ``ffmpeg`` it started) is SIGKILLed
and the caller gets a ``timeout`` error. A child that
dies (a decoder that crashes) fails the call instead of the worker.

A :class:`~choreo.errors.ChoreoError` raised in the child comes back with its
class, code and transience (pickling an exception would drop the code).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from choreo.errors import ChoreoError

__all__ = ["PRELOAD", "run_isolated", "start_forkserver"]

T = TypeVar("T")

PRELOAD = ["choreo.pipeline", "worker.isolated", "worker.warm_decode"]
"""What the forkserver imports before it forks: the pipeline, this module's child, and the warm-up
(:mod:`worker.warm_decode`: one analysis, so that each child starts with its caches filled)."""

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(PRELOAD)


def start_forkserver() -> None:
    """Start the forkserver now (a worker's start-up), so a first song does not wait for its imports."""
    from multiprocessing import forkserver

    forkserver.ensure_running()


def _child(conn: Connection, fn: Callable[[], Any]) -> None:
    os.setpgid(0, 0)  # a group of its own: the deadline kills what it started too
    try:
        outcome: tuple[Any, ...] = ("ok", fn())
    except ChoreoError as exc:
        outcome = ("choreo", type(exc), str(exc), exc.code, exc.transient)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which fails the stage
        outcome = ("crash", f"{type(exc).__name__}: {exc}")
    conn.send(outcome)
    conn.close()


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
    receiver, sender = _CONTEXT.Pipe(duplex=False)
    proc = _CONTEXT.Process(target=_child, args=(sender, fn), name=what, daemon=True)
    proc.start()
    sender.close()
    finished = False
    try:
        if not receiver.poll(max(timeout_s, 0.0)):
            raise ChoreoError(f"{what} took longer than {timeout_s:.0f} s", code="timeout")
        try:
            outcome = receiver.recv()
        except EOFError:
            proc.join(timeout=5)
            raise ChoreoError(
                f"{what} crashed (its process ended with status {proc.exitcode})", code="internal_error"
            ) from None
        finished = True
    finally:
        if not finished:
            _kill_group(proc.pid)  # type: ignore[arg-type]  # started, so it has a pid
        proc.join(timeout=10)
        receiver.close()
    if outcome[0] == "choreo":
        _, cls, message, code, transient = outcome
        raise cls(message, code=code, transient=transient)
    if outcome[0] == "crash":
        raise ChoreoError(f"{what} failed ({outcome[1]})", code="internal_error")
    return outcome[1]
