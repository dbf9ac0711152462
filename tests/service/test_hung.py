"""Hung work cannot hold a worker: a decoder that stalls fails its job with ``timeout`` and frees the slot.

Every worker we ship runs the threads pool (a CPU worker refuses a forking one), where a hung thread
cannot be killed: so the decode runs in a child its deadline kills (:mod:`worker.isolated`). A stack of
its own (its own redis-server) runs one CPU worker with one slot, whose ``PATH`` starts with an
``ffmpeg`` that stops itself (SIGSTOP) as it starts: a real decoder process that never writes a
sample and never exits. An M4A song, which only ffmpeg decodes, then fails with ``timeout`` once its
stage has run ``CHOREO_STAGE_TIMEOUT_S``; a WAV song submitted behind it, on that same single slot,
is danced; and no stalled ffmpeg is left behind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from choreo.service.keys import create_key
from tests.harness.localstack import LocalStack
from tests.service.helpers import REPO_ROOT, SONGS, cut_songs, redis_server_of_its_own

pytestmark = [pytest.mark.service, pytest.mark.faults]

STAGE_TIMEOUT_S = 12


def _stalling_ffmpeg(folder: Path) -> Path:
    folder.mkdir()
    script = folder / "ffmpeg"
    script.write_text(
        "#!/bin/sh\n# A decoder that hangs: it stops itself before it writes anything.\nkill -STOP $$\n"
    )
    script.chmod(0o755)
    return folder


def _stalled_left(folder: Path) -> list[str]:
    ps = subprocess.run(["ps", "-eww", "-o", "pid,stat,args"], capture_output=True, text=True, check=True)
    return [line for line in ps.stdout.splitlines() if str(folder) in line]


@pytest.fixture
def hung_stack(tmp_path: Path) -> Iterator[tuple[LocalStack, str, Path]]:
    if (
        shutil.which("ffmpeg") is None
        or shutil.which("redis-server") is None
        or not SONGS["vibe_ace"].is_file()
    ):
        pytest.skip("needs ffmpeg, redis-server and the shared music")
    bin_dir = _stalling_ffmpeg(tmp_path / "bin")
    with redis_server_of_its_own(tmp_path) as redis_url:
        local = LocalStack(
            tmp_path / "stack",
            redis_url,
            cpu_workers=1,
            cpu_concurrency=1,
            gpu_concurrency=1,
            env={
                "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
                "CHOREO_STAGE_TIMEOUT_S": str(STAGE_TIMEOUT_S),
                "CHOREO_RETRY_BACKOFF_CAP_S": "4",
                "CHOREO_ENGINE_THREADS": "1",
                "OMP_NUM_THREADS": "1",
            },
        )
        with local:
            token = create_key(local.ctx, team="hung", name="hung", scopes=["content"])[1]
            yield local, token, bin_dir
    assert not _stalled_left(bin_dir), _stalled_left(bin_dir)


def _submit(client: httpx.Client, path: Path) -> str:
    with path.open("rb") as fh:
        track = client.post("/v1/tracks", files={"file": (path.name, fh, "application/octet-stream")})
    assert track.status_code == 201, track.text
    answer = client.post("/v1/jobs", json={"tracks": [track.json()["sha256"]], "options": {"synth": "blend"}})
    assert answer.status_code == 202, answer.text
    return str(answer.json()["jobs"][0]["id"])


def _wait(client: httpx.Client, job_id: str, states: set[str], timeout_s: float) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = client.get(f"/v1/jobs/{job_id}").json()
        if job["state"] in states:
            return dict(job)
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} reached none of {states} within {timeout_s} s: {job}")


def test_a_hung_decoder_fails_its_job_with_timeout_and_frees_the_slot(
    hung_stack: tuple[LocalStack, str, Path], tmp_path: Path
) -> None:
    local, token, bin_dir = hung_stack
    (wav,) = cut_songs(tmp_path, 1, seconds=6.0)
    m4a = tmp_path / "stalls.m4a"
    subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(wav), "-c:a", "aac", str(m4a)],
        check=True,
    )  # fmt: skip
    with httpx.Client(
        base_url=local.api_url, headers={"Authorization": f"Bearer {token}"}, timeout=30
    ) as client:
        hung = _submit(client, m4a)
        _wait(client, hung, {"decoding"}, timeout_s=60)
        started = time.monotonic()
        while not _stalled_left(bin_dir):  # the song is fetched, then its decoder starts
            assert time.monotonic() - started < STAGE_TIMEOUT_S, "the stalling ffmpeg never ran"
            time.sleep(0.1)
        behind = _submit(client, wav)
        failed = _wait(client, hung, {"done", "failed", "cancelled"}, timeout_s=STAGE_TIMEOUT_S + 30)
        took_s = time.monotonic() - started
        assert (failed["state"], failed["error_code"]) == ("failed", "timeout"), failed
        assert took_s < STAGE_TIMEOUT_S + 10, took_s
        done = _wait(client, behind, {"done", "failed", "cancelled"}, timeout_s=120)
        assert done["state"] == "done", done
    assert not _stalled_left(bin_dir), _stalled_left(bin_dir)


def test_a_cpu_worker_refuses_a_forking_pool(tmp_path: Path) -> None:
    """Celery's default pool is prefork: a CPU worker started on it stops at once and says why."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHOREO_")}
    env["CHOREO_REDIS_URL"] = "redis://127.0.0.1:1/0"  # never reached: it stops before it connects
    run = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "worker.app", "worker", "-Q", "cpu", "-c", "1"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode != 0
    assert "a CPU worker runs the threads pool (-P threads)" in run.stderr + run.stdout
