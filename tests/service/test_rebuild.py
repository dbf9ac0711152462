"""Durability: empty the Redis database, rebuild the index from storage, find everything again."""

from __future__ import annotations

import pytest
import redis

from tests.service.helpers import (
    REDIS_URL,
    SONGS,
    Album,
    ServiceStack,
    metric_samples,
    open_ticket,
    put_to,
    rebuild_index,
)

pytestmark = pytest.mark.service


def _snapshot(stack: ServiceStack) -> dict[str, object]:
    with stack.as_("content") as content, stack.as_("fitness") as fitness:
        return {
            "jobs": sorted(
                (j["id"], j["state"], tuple(j["artifacts"])) for j in content.get("/v1/jobs").json()["items"]
            ),
            "done": [j["id"] for j in content.get("/v1/jobs", params={"state": "done"}).json()["items"]],
            "tracks": sorted(t["sha256"] for t in content.get("/v1/tracks").json()["items"]),
            "routines": [r["id"] for r in fitness.get("/v1/routines").json()["items"]],
        }


def test_an_emptied_redis_is_rebuilt_from_storage(stack: ServiceStack, album: Album) -> None:
    with stack.as_("content") as content:
        pending, completed = (
            open_ticket(content, SONGS["hungarian"]),
            open_ticket(content, SONGS["hungarian"]),
        )
        for ticket in (pending, completed):
            assert put_to(ticket, SONGS["hungarian"].read_bytes()).status_code == 200
        assert content.post(completed["complete_url"]).status_code == 201
    before = _snapshot(stack)
    assert before["jobs"] and before["tracks"]
    redis.Redis.from_url(REDIS_URL).flushdb()
    with stack.as_("content") as content:
        assert content.get("/v1/jobs").status_code == 401, "the keys should be gone with the index"
    run = rebuild_index(stack.env)
    assert run.returncode == 0, run.stderr
    assert "jobs" in run.stdout
    assert _snapshot(stack) == before
    with stack.client() as client:
        samples = metric_samples(client.get("/metrics").text)
    # The metrics' job durations lived in the emptied Redis too: the ended jobs count again.
    assert samples.get('choreo_job_duration_seconds_count{state="done"}', 0) >= len(before["done"]) >= 1
    with stack.as_("content") as content:
        job = content.get(f"/v1/jobs/{before['done'][0]}").json()
        assert content.get(f"/v1/jobs/{job['id']}/artifacts").status_code == 200
        dedup = content.post("/v1/jobs", json={"tracks": [job["track_sha256"]], "options": job["options"]})
        assert dedup.json()["jobs"][0]["deduplicated"] is True
        assert stack.ctx.redis.get(stack.ctx.key("upload", completed["upload_id"])) is None, "it came back"
        assert content.post(completed["complete_url"]).status_code == 201, "completing again is its track"
        assert content.post(pending["complete_url"]).status_code == 201, "the pending upload was lost"
