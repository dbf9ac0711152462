"""Real servers for the service tests: SeaweedFS S3, Redis, uvicorn and Celery workers.

The session fixture :func:`stack` starts, through
:class:`tests.harness.localstack.LocalStack`, SeaweedFS (``weed server`` with
an S3 gateway that checks access keys) on free loopback ports, the API under
uvicorn and one Celery worker per queue as real processes, using the Redis at
127.0.0.1:6379 with a database of its own (``CHOREO_TEST_REDIS_DB``, or a whole
URL in ``CHOREO_TEST_REDIS_URL``; flushed at start and end), and
stops every one of them at the end, by process group.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from choreo.service.keys import create_key
from choreo.service.teams import rotate_callback_secret
from tests.harness.localstack import LocalStack
from tests.service.helpers import (
    MAX_UPLOAD_BYTES,
    REDIS_URL,
    SONGS,
    Album,
    ServiceStack,
    presigned_upload,
    upload,
    wait_for_batch,
)


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceStack]:
    for path in SONGS.values():
        if not path.is_file():
            pytest.skip(f"shared music not found: {path}")
    admin_redis = redis.Redis.from_url(REDIS_URL)
    try:
        admin_redis.ping()
    except redis.RedisError as exc:
        pytest.fail(f"the service tests need Redis at {REDIS_URL}: {exc}")
    admin_redis.flushdb()
    local = LocalStack(
        tmp_path_factory.mktemp("service"),
        REDIS_URL,
        cpu_workers=1,
        cpu_concurrency=2,
        gpu_concurrency=2,
        env={
            "CHOREO_MAX_UPLOAD_BYTES": str(MAX_UPLOAD_BYTES),
            "CHOREO_CALLBACK_ALLOW_LOOPBACK": "true",
            # Every test shares one client address; the limit's own test uses an address of its own.
            "CHOREO_AUTH_FAILURES_PER_MINUTE": "120",
            # A loopback address of its own stands for a load balancer (test_hardening).
            "CHOREO_TRUSTED_PROXIES": "127.0.0.9",
            "CHOREO_TASK_MAX_RETRIES": "3",
            "CHOREO_ENGINE_THREADS": "1",
            "OMP_NUM_THREADS": "1",
        },
    )
    try:
        with local:
            stack = ServiceStack(local=local)
            for who, team, scopes in (
                ("admin", "acme", ["admin"]),
                ("operator", "ops", ["operator", "admin"]),
                ("content", "acme", ["content"]),
                ("fitness", "acme", ["fitness"]),
                ("other", "globex", ["content", "fitness"]),
            ):
                stack.tokens[who] = create_key(local.ctx, team=team, name=f"test {who}", scopes=scopes)[1]
            for team in ("acme", "globex"):
                stack.callback_secrets[team] = rotate_callback_secret(local.ctx, team).secret
            yield stack
    finally:
        admin_redis.flushdb()


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
