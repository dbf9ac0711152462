"""Real servers for the service tests: SeaweedFS S3, Redis, uvicorn and Celery workers.

The session fixture :func:`stack` starts, through
:class:`choreo.service.localstack.LocalStack`, SeaweedFS (``weed server`` with
an S3 gateway that checks access keys) on free loopback ports, the API under
uvicorn and one Celery worker per queue as real processes, using the Redis at
127.0.0.1:6379 with a database of its own (flushed at start and end), and
stops every one of them at the end, by process group.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import redis

from choreo.service.context import ServiceContext
from choreo.service.keys import create_key
from choreo.service.localstack import LocalStack

REPO_ROOT = Path(__file__).resolve().parents[2]
MUSIC = REPO_ROOT.parent / "shared" / "data" / "music"
REDIS_DB = int(os.environ.get("CHOREO_TEST_REDIS_DB", "11"))
MAX_UPLOAD_BYTES = 6 * 1024 * 1024
CALLBACK_SECRET = "test-callback-secret"

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
        """A client holding the key of ``who``: admin, content, fitness or other (another team)."""
        return self.client(self.tokens[who])


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
    local = LocalStack(
        tmp_path_factory.mktemp("service"),
        f"redis://127.0.0.1:6379/{REDIS_DB}",
        cpu_workers=1,
        cpu_concurrency=2,
        gpu_concurrency=2,
        env={
            "CHOREO_MAX_UPLOAD_BYTES": str(MAX_UPLOAD_BYTES),
            "CHOREO_CALLBACK_SECRET": CALLBACK_SECRET,
            "CHOREO_TASK_MAX_RETRIES": "3",
            "CHOREO_ENGINE_THREADS": "1",
            "OMP_NUM_THREADS": "1",
        },
    )
    try:
        with local:
            stack = ServiceStack(local=local)
            for who, team, scopes in (
                ("admin", "ops", ["admin"]),
                ("content", "acme", ["content"]),
                ("fitness", "acme", ["fitness"]),
                ("other", "globex", ["content", "fitness"]),
            ):
                stack.tokens[who] = create_key(local.ctx, team=team, name=f"test {who}", scopes=scopes)[1]
            yield stack
    finally:
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
