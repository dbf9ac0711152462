"""Bad input through the API: each gets a 4xx with a code and a message, and no job is lost."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import httpx
import numpy as np
import pytest

from tests.service.helpers import MAX_UPLOAD_BYTES, SONGS, ServiceStack, upload, wait_for_batch

pytestmark = pytest.mark.service


def _error(answer: httpx.Response, status: int, code: str) -> str:
    assert answer.status_code == status, answer.text
    body = answer.json()["error"]
    assert body["code"] == code, body
    assert body["message"]
    return body["message"]


def test_a_text_file_named_mp3_is_refused(stack: ServiceStack) -> None:
    with stack.as_("content") as client:
        answer = client.post(
            "/v1/tracks", files={"file": ("song.mp3", b"this is not a song\n" * 50, "audio/mpeg")}
        )
    message = _error(answer, 415, "not_audio")
    assert "song.mp3" in message and "\u201cthis is not a song" in message
    assert "b'" not in message and not message.endswith(("?", "."))  # words, not a bytes literal


def test_an_empty_upload_is_refused(stack: ServiceStack) -> None:
    with stack.as_("content") as client:
        answer = client.post("/v1/tracks", files={"file": ("empty.ogg", b"", "audio/ogg")})
    assert "empty" in _error(answer, 422, "empty_file")


def test_an_unknown_extension_and_a_missing_file_part_are_refused(stack: ServiceStack) -> None:
    with stack.as_("content") as client:
        answer = client.post("/v1/tracks", files={"file": ("notes.txt", b"OggS....", "text/plain")})
        assert "notes.txt" in _error(answer, 422, "bad_parameter")
        _error(
            client.post("/v1/tracks", files={"other": ("a.ogg", b"OggS", "audio/ogg")}), 422, "missing_file"
        )
        _error(client.post("/v1/tracks", json={"file": "a.ogg"}), 415, "not_multipart")


def test_an_oversized_upload_is_refused_whether_declared_or_streamed(stack: ServiceStack, rng) -> None:  # noqa: ANN001
    big = b"OggS" + rng.bytes(MAX_UPLOAD_BYTES + 1024)
    before = set(stack.ctx.storage.list_keys("uploads/"))
    with stack.as_("content") as client:
        assert "limit" in _error(
            client.post("/v1/tracks", files={"file": ("big.ogg", big)}), 413, "too_large"
        )

        boundary = "choreoboundary"

        def chunked() -> Iterator[bytes]:
            yield (
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.ogg"\r\n'
                "Content-Type: audio/ogg\r\n\r\n"
            ).encode()
            for start in range(0, len(big), 1 << 20):
                yield big[start : start + (1 << 20)]
            yield f"\r\n--{boundary}--\r\n".encode()

        streamed = client.post(
            "/v1/tracks",
            content=chunked(),
            headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
        )
        _error(streamed, 413, "too_large")
        ticket = client.post(
            "/v1/tracks/uploads",
            json={"filename": "big.ogg", "sha256": "0" * 64, "size_bytes": MAX_UPLOAD_BYTES + 1},
        )
        _error(ticket, 413, "too_large")
    assert set(stack.ctx.storage.list_keys("uploads/")) == before, "a refused upload left bytes behind"


def test_a_presigned_upload_with_the_wrong_sha256_is_refused(stack: ServiceStack) -> None:
    data = SONGS["hungarian"].read_bytes()
    with stack.as_("content") as client:
        ticket = client.post(
            "/v1/tracks/uploads",
            json={
                "filename": "x.ogg",
                "sha256": hashlib.sha256(b"other").hexdigest(),
                "size_bytes": len(data),
            },
        ).json()
        _error(client.post(ticket["complete_url"]), 409, "upload_missing")
        assert (
            httpx.put(ticket["url"], content=data, headers=ticket["headers"], timeout=60).status_code == 200
        )
        _error(client.post(ticket["complete_url"]), 422, "sha256_mismatch")
        _error(client.post(ticket["complete_url"]), 409, "upload_closed")
        # The refused ticket's URL is ended too: its key holds an empty marker until the URL expires.
        again = httpx.put(ticket["url"], content=data, headers=ticket["headers"], timeout=60)
        assert again.status_code == 412, again.text
        assert stack.ctx.storage.size_bytes(f"uploads/{ticket['upload_id']}") == 0
        short = client.post(
            "/v1/tracks/uploads", json={"filename": "x.ogg", "sha256": "A" * 64, "size_bytes": len(data)}
        )
        assert "sha256" in _error(short, 422, "invalid_request")


def test_unknown_ids_are_404_with_a_message(stack: ServiceStack) -> None:
    with stack.as_("content") as client:
        assert "job_nope" in _error(client.get("/v1/jobs/job_nope"), 404, "not_found")
        _error(client.post("/v1/jobs/job_nope/cancel"), 404, "not_found")
        _error(client.delete("/v1/jobs/job_nope"), 404, "not_found")
        _error(client.get("/v1/batches/bat_nope"), 404, "not_found")
        _error(client.get(f"/v1/tracks/{'a' * 64}"), 404, "not_found")
        _error(client.get("/v1/routines/rtn_nope"), 404, "not_found")
        _error(client.post("/v1/jobs", json={"tracks": ["b" * 64]}), 404, "not_found")


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"options": {"fps": 31}}, "fps"),
        ({"options": {"formats": ["mov"]}}, "mov"),
        ({"options": {"style": "tango"}}, "tango"),
        ({"options": {"seed": -1}}, "seed"),
        ({"options": {"speed": 2}}, "speed"),
        ({"priority": 12}, "priority"),
        ({"callback_url": "not a url"}, "callback_url"),
        ({"tracks": ["not-a-sha"]}, "not-a-sha"),
        ({"tracks": []}, "tracks"),
    ],
)
def test_a_malformed_option_is_422_naming_it(stack: ServiceStack, body: dict, needle: str) -> None:
    request = {"tracks": ["c" * 64]} | body
    with stack.as_("content") as client:
        answer = client.post("/v1/jobs", json=request)
    assert answer.status_code == 422, answer.text
    assert needle in answer.json()["error"]["message"]


def test_a_song_that_does_not_decode_fails_its_own_job_and_the_album_goes_on(stack: ServiceStack) -> None:
    garbage = b"OggS" + np.random.default_rng(5).bytes(40_000)
    with stack.as_("content") as client:
        bad = client.post("/v1/tracks", files={"file": ("broken.ogg", garbage)})
        assert bad.status_code == 201, bad.text
        good = upload(client, SONGS["hungarian"])
        submitted = client.post(
            "/v1/jobs", json={"tracks": [bad.json()["sha256"], good.json()["sha256"]], "options": {"seed": 7}}
        )
        assert submitted.status_code == 202, submitted.text
        final = wait_for_batch(client, submitted.json()["batch"]["id"])[-1]
        jobs = {j["track_name"]: client.get(f"/v1/jobs/{j['id']}").json() for j in submitted.json()["jobs"]}
    assert final["counts"]["failed"] == 1 and final["counts"]["done"] == 1
    broken = jobs["broken.ogg"]
    assert broken["state"] == "failed"
    assert broken["error_code"] == "corrupt_audio"
    assert "broken" in broken["error_message"]
    assert jobs[SONGS["hungarian"].name]["state"] == "done"
