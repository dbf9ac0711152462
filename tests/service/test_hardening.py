"""The API's gate: keys before bodies, bounded bodies and multipart, bounded metrics, guessing limited."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from api.upload import MAX_FILENAME_CHARS
from choreo.service.ratelimit import WINDOW_S
from tests.service.helpers import ServiceStack

pytestmark = pytest.mark.service

_OGG_HEAD = b"OggS" + bytes(60)


def _error(answer: httpx.Response, status: int, code: str) -> str:
    assert answer.status_code == status, answer.text
    body = answer.json()["error"]
    assert body["code"] == code, body
    return body["message"]


def _raw_request(stack: ServiceStack, head: str) -> bytes:
    """Send only a request head that promises a 100 MB body; return what the server answers."""
    port = int(stack.api_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        conn.sendall(head.encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = conn.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer


def test_a_key_is_checked_before_a_huge_body_is_read(stack: ServiceStack) -> None:
    # Nothing of the promised body is sent: an answer at all shows the server did not wait to read it.
    head = (
        "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {100 * 1024 * 1024}\r\n\r\n"
    )
    assert _raw_request(stack, head).startswith(b"HTTP/1.1 401"), "the body was awaited before the key"
    with_key = head.replace("Host: x\r\n", f"Host: x\r\nAuthorization: Bearer {stack.tokens['content']}\r\n")
    assert _raw_request(stack, with_key).startswith(b"HTTP/1.1 413")


def test_a_body_that_grows_past_the_limit_without_declaring_it_is_cut_off(stack: ServiceStack) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"tracks": ["' + b"a" * 64 + b'"], "pad": "'
        for _ in range(4):
            yield b"x" * (1024 * 1024)
        yield b'"}'

    with stack.as_("content") as client:
        answer = client.post("/v1/jobs", content=chunks(), headers={"Content-Type": "application/json"})
    assert "limit" in _error(answer, 413, "too_large")


def _multipart(client: httpx.Client, body: bytes, boundary: str = "bnd") -> httpx.Response:
    return client.post(
        "/v1/tracks", content=body, headers={"Content-Type": f"multipart/form-data; boundary={boundary}"}
    )


def _part(filename: str, data: bytes = _OGG_HEAD, extra_header: str = "") -> bytes:
    return (
        f'--bnd\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n{extra_header}'
        "Content-Type: audio/ogg\r\n\r\n"
    ).encode() + data


def test_malformed_multipart_is_400_and_keeps_nothing(stack: ServiceStack) -> None:
    before = set(stack.ctx.storage.list_keys("uploads/"))
    with stack.as_("content") as client:
        assert "malformed" in _error(_multipart(client, b"this is not multipart"), 400, "malformed_multipart")
        unterminated = _multipart(client, _part("song.ogg"))
        assert "closing" in _error(unterminated, 400, "malformed_multipart")
        cut_at_boundary = _multipart(client, _part("song.ogg") + b"\r\n--bnd")
        _error(cut_at_boundary, 400, "malformed_multipart")
        huge_header = _part("song.ogg", extra_header=f"X-Pad: {'p' * (1024 * 1024)}\r\n")
        answer = _multipart(client, huge_header + b"\r\n--bnd--\r\n")
        assert "header" in _error(answer, 400, "malformed_multipart")
        long_name = "n" * 1000 + ".ogg"
        answer = _multipart(client, _part(long_name) + b"\r\n--bnd--\r\n")
        assert str(MAX_FILENAME_CHARS) in _error(answer, 422, "filename_too_long")
        seven_kb = _multipart(client, _part("n" * 7000 + ".ogg") + b"\r\n--bnd--\r\n")
        assert seven_kb.status_code in (400, 422), seven_kb.text
        fits = "n" * (MAX_FILENAME_CHARS - 4) + ".ogg"
        stored = _multipart(client, _part(fits) + b"\r\n--bnd--\r\n")
        assert stored.status_code == 201, stored.text
        assert stored.json()["filename"] == fits
    assert set(stack.ctx.storage.list_keys("uploads/")) == before, "a refused upload left bytes behind"


def _metric_lines(client: httpx.Client) -> list[str]:
    text = client.get("/metrics").text
    return [line for line in text.splitlines() if line.startswith("choreo_http_requests_total{")]


def test_made_up_methods_are_counted_as_other(stack: ServiceStack) -> None:
    with stack.client() as client:
        for i in range(30):
            client.request(f"BREW{i}", "/healthz")
        lines = _metric_lines(client)
    assert not any("BREW" in line for line in lines), lines
    others = [line for line in lines if 'method="other"' in line]
    assert others and sum(float(line.rsplit(" ", 1)[1]) for line in others) >= 30


def _fresh_window() -> None:
    """Wait, if need be, until the failure window (one minute) has 30 s left: a burst then ends in it."""
    into = time.time() % WINDOW_S
    if into > WINDOW_S - 30:
        time.sleep(WINDOW_S - into + 0.5)


def _burst_of_bad_keys(guesser: httpx.Client, limit: int, headers: dict[str, str] | None = None) -> list[int]:
    """Bad keys from one address until it is refused (429); returns the statuses."""
    statuses = []
    for i in range(limit + 1):
        guess = guesser.get(
            "/v1/jobs", headers={"Authorization": f"Bearer chk_{i:016x}_nope", **(headers or {})}
        )
        statuses.append(guess.status_code)
        if guess.status_code == 429:
            assert int(guess.headers["retry-after"]) > 0
            break
    return statuses


def _from(address: str, stack: ServiceStack) -> httpx.Client:
    return httpx.Client(
        base_url=stack.api_url, transport=httpx.HTTPTransport(local_address=address), timeout=30
    )


def test_failed_authentication_is_limited_per_address_but_a_valid_key_is_served(stack: ServiceStack) -> None:
    # A client of its own loopback address, so the other tests' address keeps its budget.
    limit = stack.ctx.settings.auth_failures_per_minute
    valid = {"Authorization": f"Bearer {stack.tokens['content']}"}
    _fresh_window()
    with _from("127.0.0.7", stack) as guesser:
        statuses = _burst_of_bad_keys(guesser, limit)
        assert statuses == [401] * limit + [429], statuses
        # Blocked, the address may not try keys, but one whose key is valid is served.
        assert guesser.get("/v1/jobs", headers={"Authorization": "Bearer chk_0_nope"}).status_code == 429
        assert guesser.get("/v1/jobs").status_code == 429
        assert guesser.get("/v1/jobs", headers=valid).status_code == 200, "a valid key was locked out"
    with stack.as_("content") as client:
        assert client.get("/v1/jobs").status_code == 200, "another address was blocked too"
    with _from("127.0.0.6", stack) as neighbour:
        assert neighbour.get("/v1/jobs", headers={"Authorization": "Bearer x"}).status_code == 401


def _counted(stack: ServiceStack, address: str) -> bool:
    """Whether a failed authentication was counted against ``address`` in the current window."""
    return stack.ctx.redis.exists(stack.ctx.key("rl_auth", address, str(int(time.time() // WINDOW_S)))) == 1


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_limit(stack: ServiceStack) -> None:
    # The stack trusts 127.0.0.9 as a proxy (conftest); 127.0.0.8 is a client that is not one.
    assert stack.env["CHOREO_TRUSTED_PROXIES"] == "127.0.0.9"
    limit = stack.ctx.settings.auth_failures_per_minute
    bad = {"Authorization": "Bearer chk_0_nope"}
    _fresh_window()
    with _from("127.0.0.9", stack) as proxy:
        statuses = _burst_of_bad_keys(proxy, limit, {"X-Forwarded-For": "198.51.100.7"})
        assert statuses == [401] * limit + [429], statuses
        assert _counted(stack, "198.51.100.7") and not _counted(stack, "127.0.0.9")
        # Another client behind the same proxy is not blocked; the blocked one is, even when it
        # writes an address of its choosing ahead of the one the proxy appended.
        assert proxy.get("/v1/jobs", headers={**bad, "X-Forwarded-For": "198.51.100.8"}).status_code == 401
        forged = proxy.get("/v1/jobs", headers={**bad, "X-Forwarded-For": "203.0.113.1, 198.51.100.7"})
        assert forged.status_code == 429
        served = proxy.get(
            "/v1/jobs",
            headers={"Authorization": f"Bearer {stack.tokens['content']}", "X-Forwarded-For": "198.51.100.7"},
        )
        assert served.status_code == 200, "a valid key behind the proxy was locked out"
    with _from("127.0.0.8", stack) as stranger:
        # Not a trusted proxy: its header names nobody, and its failures count against itself.
        answer = stranger.get("/v1/jobs", headers={**bad, "X-Forwarded-For": "198.51.100.9"})
        assert answer.status_code == 401
        assert _counted(stack, "127.0.0.8") and not _counted(stack, "198.51.100.9")
