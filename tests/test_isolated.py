"""The decode child: each pool thread keeps one child for call after call, and a deadline, a crash or the
call count replaces it (:mod:`worker.isolated`).

Every call runs in a real child of the real forkserver, as a CPU worker's decode does. Each test makes its
calls from a thread of its own, so it starts with a child of its own.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from choreo.choreography.library import load_library
from choreo.errors import ChoreoError
from worker import isolated
from worker.isolated import run_isolated


def _in_new_thread(work: Callable[[], Any]) -> Any:
    """``work()`` run in a fresh thread (a fresh pool slot, so a fresh child); its result or its error."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=120)
    if "error" in out:
        raise out["error"]
    return out["value"]


def _pid() -> int:
    return run_isolated(os.getpid, timeout_s=60, what="reading the child's pid")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie no one has reaped yet is dead too
        return f.read().split(")")[-1].split()[0] != "Z"


def test_a_thread_keeps_its_child_and_another_thread_has_its_own() -> None:
    first, second = _in_new_thread(lambda: (_pid(), _pid()))
    assert first == second != os.getpid()
    assert _in_new_thread(_pid) not in (first, os.getpid())


def test_a_call_past_its_deadline_fails_with_timeout_kills_the_child_and_the_next_call_works() -> None:
    def work() -> tuple[int, float, int]:
        before = _pid()
        started = time.perf_counter()
        with pytest.raises(ChoreoError) as caught:
            run_isolated(functools.partial(time.sleep, 60), timeout_s=1, what="sleeping")
        assert caught.value.code == "timeout"
        return before, time.perf_counter() - started, _pid()

    before, waited_s, after = _in_new_thread(work)
    assert waited_s < 15
    assert not _alive(before)
    assert after != before


def test_a_child_that_dies_fails_its_call_and_the_next_call_gets_a_new_child() -> None:
    def work() -> tuple[int, int]:
        before = _pid()
        with pytest.raises(ChoreoError) as caught:
            run_isolated(functools.partial(os._exit, 3), timeout_s=60, what="exiting")
        assert caught.value.code == "internal_error" and "crashed" in str(caught.value)
        return before, _pid()

    before, after = _in_new_thread(work)
    assert after != before


def test_a_choreo_error_comes_back_with_its_code_and_the_child_serves_on() -> None:
    def work() -> tuple[int, ChoreoError, int]:
        before = _pid()
        with pytest.raises(ChoreoError) as caught:
            run_isolated(functools.partial(load_library, Path("/nonexistent.npz")), timeout_s=60, what="x")
        return before, caught.value, _pid()

    before, error, after = _in_new_thread(work)
    assert type(error).__name__ == "ParameterError" and "/nonexistent.npz" in str(error)
    assert after == before


def test_a_child_is_replaced_after_its_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(isolated, "CALLS_PER_CHILD", 2)
    pids = _in_new_thread(lambda: [_pid() for _ in range(5)])
    assert pids[0] == pids[1] != pids[2] == pids[3] != pids[4]
    assert not _alive(pids[0])
