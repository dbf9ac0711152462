"""Songs, constants and helpers of the service tests (the fixtures are in conftest.py)."""

from __future__ import annotations

import atexit
import hashlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import redis
import soundfile as sf

from choreo.service.context import ServiceContext
from choreo.service.jobs import create_job
from choreo.service.records import JobOptions, JobRecord, new_id
from tests.harness.localstack import LocalStack, free_ports

REPO_ROOT = Path(__file__).resolve().parents[2]
MUSIC = REPO_ROOT.parent / "shared" / "data" / "music"


REDIS_PORT = int(os.environ.get("CHOREO_TEST_REDIS_PORT", "6379"))
"""The Redis the tests use; another port for a Redis of one's own (with more than 16 databases)."""

_SPARE_DATABASES = (11, 13, 14, 15, 10, 9, 8, 7, 6, 5, 4, 3, 1)
"""Databases a test session may take: 0 is Redis' default, 2 is `make up`'s and 12 the benchmarks'."""


def _claimed_database() -> int:
    """A database no other test session on this Redis is using, held until this process exits.

    Sessions that share one Redis (CI's clean clone beside a developer's worktrees) each flush their
    database at start and end; a claim (a key with this process's id, in database 0, kept four hours at
    most) keeps two of them apart. Without a Redis to ask, the first: the fixtures then say it is down.
    """
    client = redis.Redis(port=REDIS_PORT, socket_connect_timeout=2)
    try:
        for db in _SPARE_DATABASES:
            claim = f"choreo-tests:database:{db}"
            if client.set(claim, f"{socket.gethostname()}:{os.getpid()}", nx=True, ex=4 * 3600):
                atexit.register(client.delete, claim)
                return db
    except redis.RedisError:
        return _SPARE_DATABASES[0]
    raise RuntimeError(f"every spare Redis database ({_SPARE_DATABASES}) is claimed by another test session")


REDIS_DB = int(os.environ.get("CHOREO_TEST_REDIS_DB") or _claimed_database())
REDIS_URL = os.environ.get("CHOREO_TEST_REDIS_URL", f"redis://127.0.0.1:{REDIS_PORT}/{REDIS_DB}")
"""The Redis database the service tests own (flushed at start and end); the URL wins over the others."""
MAX_UPLOAD_BYTES = 6 * 1024 * 1024

HUNGARIAN = "Hungarian_Dance_number_5_-_Allegro_in_F_sharp_minor_(string_orchestra).hq.ogg"
SONGS = {
    "hungarian": MUSIC / "cc" / HUNGARIAN,
    "vibe_ace": MUSIC / "cc" / "Kevin_MacLeod_-_Vibe_Ace.hq.ogg",
    "freezingpoint": MUSIC / "gpl" / "extremetuxracer__music__freezingpoint.ogg",
}
"""Three real songs of 46, 61 and 96 seconds: an album that keeps the module quick."""


@dataclass
class ServiceStack:
    """The running service and the keys the tests use."""

    local: LocalStack
    tokens: dict[str, str] = field(default_factory=dict)
    callback_secrets: dict[str, str] = field(default_factory=dict)

    @property
    def api_url(self) -> str:
        return self.local.api_url

    @property
    def env(self) -> dict[str, str]:
        return self.local.env

    @property
    def ctx(self) -> ServiceContext:
        return self.local.ctx

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.api_url, headers=headers, timeout=60)

    def as_(self, who: str) -> httpx.Client:
        """A client holding the key of ``who``: admin, content, fitness (team acme), other (team
        globex) or operator (team ops, every team's keys)."""
        return self.client(self.tokens[who])


def metric_samples(text: str) -> dict[str, float]:
    """Prometheus text format: each sample line's name and labels to its value."""
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


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


def open_ticket(client: httpx.Client, path: Path) -> dict:
    """Ask for a presigned upload of the song at ``path``; returns the ticket (URL, headers, complete_url)."""
    data = path.read_bytes()
    ticket = client.post(
        "/v1/tracks/uploads",
        json={"filename": path.name, "sha256": hashlib.sha256(data).hexdigest(), "size_bytes": len(data)},
    )
    assert ticket.status_code == 201, ticket.text
    return ticket.json()


def put_to(ticket: dict, data: bytes, headers: dict[str, str] | None = None) -> httpx.Response:
    """PUT ``data`` to a ticket's URL with the ticket's headers, or with ``headers`` instead."""
    sent = ticket["headers"] if headers is None else headers
    return httpx.put(ticket["url"], content=data, headers=sent, timeout=60)


def presigned_upload(client: httpx.Client, path: Path) -> dict:
    """Upload through a presigned URL and the completion call, as a client with a big file does."""
    ticket = open_ticket(client, path)
    put = put_to(ticket, path.read_bytes())
    assert put.status_code == 200, put.text
    done = client.post(ticket["complete_url"])
    assert done.status_code == 201, done.text
    return done.json()


STUDIO = REPO_ROOT / "studio"


def ensure_studio_built() -> Path:
    """Build the Studio page (``npm ci``, ``node build.mjs``) unless dist/ is newer than its sources."""
    index = STUDIO / "dist" / "index.html"
    sources = [*STUDIO.joinpath("src").rglob("*"), STUDIO / "build.mjs", STUDIO / "package-lock.json"]
    if index.is_file() and all(p.stat().st_mtime <= index.stat().st_mtime for p in sources):
        return index.parent
    if not (STUDIO / "node_modules" / "three" / "package.json").is_file():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=STUDIO, check=True, capture_output=True)
    subprocess.run(["node", "build.mjs"], cwd=STUDIO, check=True, capture_output=True)
    return index.parent


def cut_songs(folder: Path, n: int, *, seconds: float) -> list[Path]:
    """``n`` distinct cuts of the test songs, ``seconds`` long each (WAV), from 10 s in."""
    cuts: list[Path] = []
    for part in range(n):
        source = list(SONGS.values())[part % len(SONGS)]
        rate = sf.info(source).samplerate
        start = int((10 + (part // len(SONGS)) * seconds) * rate)
        data, _ = sf.read(source, start=start, frames=int(seconds * rate), dtype="float32")
        cuts.append(folder / f"cut{part}_{source.stem[:20]}.wav")
        sf.write(cuts[-1], data, rate)
    return cuts


@contextmanager
def redis_server_of_its_own(folder: Path) -> Iterator[str]:
    """Run a ``redis-server`` on a free loopback port (no persistence) for one stack; yields its URL."""
    (port,) = free_ports(1)
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", "",
         "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url)
        deadline = time.monotonic() + 30
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise AssertionError(f"redis-server on port {port} did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def made_job(ctx: ServiceContext, team: str, *, synth: str = "blend") -> JobRecord:
    """A job record for a song that does not exist (tests of the queue and the tasks, never rendered)."""
    record = JobRecord(
        id=new_id("job"),
        team=team,
        track_sha256="0" * 64,
        track_ext="ogg",
        track_name="x.ogg",
        options=JobOptions(synth=synth),
        fingerprint=new_id("fp"),
    )
    return create_job(ctx, record)


def rebuild_index(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``choreo admin rebuild-index`` as an operator would, against the stack of ``env``."""
    return subprocess.run(
        [sys.executable, "-m", "choreo.cli.main", "admin", "rebuild-index"],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def log_warnings(folder: Path, lines: int = 15) -> dict[str, str]:
    """The last warnings and errors in each ``*.log`` of a stack's log folder, for a failed
    assertion: the logs go with the test's temporary files, and CI keeps only what it printed."""
    tails = {}
    for log in sorted(folder.glob("*.log")):
        text = log.read_text(errors="replace").splitlines()
        tails[log.name] = "\n".join([ln for ln in text if "WARNING" in ln or "ERROR" in ln][-lines:])
    return tails
