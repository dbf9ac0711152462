"""Nothing left behind: a deleted running job's objects, abandoned and completed uploads."""

from __future__ import annotations

import hashlib
import time

import pytest

from choreo.service.uploads import PendingUpload, index_upload, sweep_uploads, upload_record_key
from tests.service.helpers import SONGS, ServiceStack, open_ticket, put_to, upload

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


def _expire(stack: ServiceStack, upload_id: str) -> None:
    """Stand in for the URL's hour passing: the ticket's record says it expired a second ago."""
    key = upload_record_key(upload_id)
    ticket = PendingUpload.model_validate(stack.ctx.storage.get_json(key))
    stack.ctx.storage.put_json(key, ticket.model_copy(update={"expires_at": time.time() - 1}).model_dump())


def test_a_presigned_url_takes_one_put_that_sends_its_signed_headers(stack: ServiceStack) -> None:
    data = SONGS["hungarian"].read_bytes()
    with stack.as_("content") as client:
        ticket = open_ticket(client, SONGS["hungarian"])
        assert ticket["headers"] == {"Content-Length": str(len(data)), "If-None-Match": "*"}
        unconditional = put_to(ticket, data, {"Content-Length": str(len(data))})
        assert unconditional.status_code == 403, "a PUT without If-None-Match must fail the signature"
        assert stack.ctx.storage.size_bytes(f"uploads/{ticket['upload_id']}") is None
        assert put_to(ticket, data).status_code == 200
        track = client.post(ticket["complete_url"])
        assert track.status_code == 201, track.text
        again = put_to(ticket, b"OggS" + bytes(len(data) - 4))
        assert again.status_code == 412, f"the completed upload's URL took a second PUT: {again.text}"
        repeated = client.post(ticket["complete_url"])
        assert repeated.status_code == 201 and repeated.json() == track.json(), "again: the same track"
    stored = stack.ctx.storage.sha256_and_head(f"tracks/{track.json()['sha256']}.ogg")
    assert stored[0] == hashlib.sha256(data).hexdigest()
    assert stack.ctx.storage.size_bytes(f"uploads/{ticket['upload_id']}") == 0, "the marker holds the key"


def test_a_completion_cut_short_after_storage_closed_it_is_finished_by_the_retry(stack: ServiceStack) -> None:
    """Redis still holds the ticket (its delete failed) after storage closed it: the retry gives the track."""
    data = SONGS["hungarian"].read_bytes()
    with stack.as_("content") as client:
        ticket = open_ticket(client, SONGS["hungarian"])
        assert put_to(ticket, data).status_code == 200
        track = client.post(ticket["complete_url"])
        assert track.status_code == 201, track.text
        saved = stack.ctx.storage.get_json(upload_record_key(ticket["upload_id"]))
        record = PendingUpload.model_validate(saved)
        assert record.closed_at is not None and record.stored
        index_upload(stack.ctx, record.model_copy(update={"closed_at": None, "stored": False}))
        retried = client.post(ticket["complete_url"])
        assert retried.status_code == 201 and retried.json()["sha256"] == track.json()["sha256"], retried.text
    assert stack.ctx.redis.get(stack.ctx.key("upload", ticket["upload_id"])) is None
    assert stack.ctx.storage.size_bytes(f"uploads/{ticket['upload_id']}") == 0, "the marker holds the key"


def test_the_sweep_removes_abandoned_and_expired_uploads_and_keeps_live_tickets(stack: ServiceStack) -> None:
    data = SONGS["hungarian"].read_bytes()
    with stack.as_("content") as client:
        live, done, abandoned, done_expired = (open_ticket(client, SONGS["hungarian"]) for _ in range(4))
        for ticket in (live, done, abandoned, done_expired):
            assert put_to(ticket, data).status_code == 200
        for ticket in (done, done_expired):
            assert client.post(ticket["complete_url"]).status_code == 201
    for ticket in (abandoned, done_expired):
        _expire(stack, ticket["upload_id"])
    stack.ctx.storage.put_bytes("uploads/up_cut_off_stream", b"OggS half a song")
    assert sweep_uploads(stack.ctx, older_than_s=0) >= 5
    left = set(stack.ctx.storage.list_keys("uploads/"))
    for kept in (live, done):
        assert {f"uploads/{kept['upload_id']}", upload_record_key(kept["upload_id"])} <= left
    for gone in (abandoned, done_expired):
        assert not {f"uploads/{gone['upload_id']}", upload_record_key(gone["upload_id"])} & left
    assert "uploads/up_cut_off_stream" not in left
    assert stack.ctx.redis.get(stack.ctx.key("upload", abandoned["upload_id"])) is None
    assert put_to(done, data).status_code == 412, "the sweep must keep a live URL's marker"
    with stack.as_("content") as client:
        assert client.post(live["complete_url"]).status_code == 201
        assert client.post(abandoned["complete_url"]).status_code == 404
