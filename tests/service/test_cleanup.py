"""Nothing left behind: a deleted running job's objects, abandoned and completed uploads."""

from __future__ import annotations

import hashlib
import time

import httpx
import pytest

from choreo.service.uploads import sweep_uploads, upload_record_key
from tests.service.helpers import SONGS, ServiceStack, upload

pytestmark = pytest.mark.service


def test_deleting_a_running_job_removes_every_object_it_writes(stack: ServiceStack) -> None:
    with stack.as_("content") as client:
        sha = upload(client, SONGS["freezingpoint"]).json()["sha256"]
        job_id = client.post("/v1/jobs", json={"tracks": [sha], "force": True}).json()["jobs"][0]["id"]
        deadline = time.monotonic() + 120
        while client.get(f"/v1/jobs/{job_id}").json()["state"] == "queued" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert client.delete(f"/v1/jobs/{job_id}").status_code == 204
    # The stage that was running ends within its timeout; what it wrote after the deletion must go too.
    time.sleep(stack.ctx.settings.stage_timeout_s / 5)
    deadline = time.monotonic() + 60
    while list(stack.ctx.storage.list_keys(f"jobs/{job_id}/")) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert list(stack.ctx.storage.list_keys(f"jobs/{job_id}/")) == []


def test_the_sweep_removes_abandoned_uploads_and_keeps_live_tickets(stack: ServiceStack) -> None:
    data = SONGS["hungarian"].read_bytes()
    declared = {"filename": "x.ogg", "sha256": hashlib.sha256(data).hexdigest(), "size_bytes": len(data)}
    with stack.as_("content") as client:
        live = client.post("/v1/tracks/uploads", json=declared).json()
        assert httpx.put(live["url"], content=data, headers=live["headers"], timeout=60).status_code == 200
        done = client.post("/v1/tracks/uploads", json=declared).json()
        assert httpx.put(done["url"], content=data, headers=done["headers"], timeout=60).status_code == 200
        assert client.post(done["complete_url"]).status_code == 201
        # The completed ticket's URL still takes a PUT (S3 cannot revoke it), but nothing refers to it now.
        assert httpx.put(done["url"], content=data, headers=done["headers"], timeout=60).status_code == 200
        assert client.post(done["complete_url"]).status_code == 404
    stack.ctx.storage.put_bytes("uploads/up_cut_off_stream", b"OggS half a song")
    assert sweep_uploads(stack.ctx, older_than_s=0) >= 2
    left = set(stack.ctx.storage.list_keys("uploads/"))
    assert f"uploads/{live['upload_id']}" in left and upload_record_key(live["upload_id"]) in left
    assert f"uploads/{done['upload_id']}" not in left and "uploads/up_cut_off_stream" not in left
    with stack.as_("content") as client:
        assert client.post(live["complete_url"]).status_code == 201
    assert set(stack.ctx.storage.list_keys("uploads/")) == set()
