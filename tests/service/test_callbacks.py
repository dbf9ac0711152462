"""Callback delivery against real local receivers: it connects to the address it checked, nowhere else.

A name that resolves to a public address when checked and to loopback a moment
later (DNS rebinding) must not reach loopback. The tests inject the resolver
(:data:`~choreo.service.callbacks.Resolver`) with the answers such a name would
give, in order, and run real HTTP(S) receivers on 127.0.0.1 and 127.0.0.2.
"""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from choreo.service.callbacks import CallbackError, CallbackRefused, check_target, deliver, verify

SECRET = "s" * 32
PUBLIC = "93.184.215.14"
"""A public address: checking it passes (nothing is ever sent to it in these tests)."""


class _Receiver(BaseHTTPRequestHandler):
    """Records each POST's Host header, whether its signature checks, and its body."""

    server: _Server

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        good = verify(
            SECRET, int(self.headers["X-Choreo-Timestamp"]), body, self.headers["X-Choreo-Signature"]
        )
        self.server.received.append((self.headers["Host"], good, json.loads(body)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    """A receiver on one address, keeping what it received."""

    def __init__(self, address: tuple[str, int]) -> None:
        super().__init__(address, _Receiver)
        self.received: list[tuple[str, bool, dict]] = []


def _serve(host: str, port: int = 0, tls: ssl.SSLContext | None = None) -> _Server:
    server = _Server((host, port))
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _answers(*addresses: str, asked: list[str] | None = None):  # noqa: ANN202 - a Resolver
    """A resolver giving one answer a call, in order, as a rebinding name's DNS would."""
    queue = list(addresses)

    def resolve(host: str, port: int) -> list[str]:
        if asked is not None:
            asked.append(host)
        return [queue.pop(0)]

    return resolve


@pytest.fixture
def receivers() -> Iterator[tuple[_Server, _Server]]:
    """One receiver on 127.0.0.1 (the checked address) and one on 127.0.0.2, on the same port."""
    first = _serve("127.0.0.1")
    second = _serve("127.0.0.2", first.server_address[1])
    yield first, second
    for server in (first, second):
        server.shutdown()
        server.server_close()


def test_a_delivery_connects_to_the_address_it_checked(
    receivers: tuple[_Server, _Server],
) -> None:
    checked, rebound = receivers
    port = checked.server_address[1]
    url = f"http://hooks.example:{port}/hook"
    asked: list[str] = []
    resolve = _answers("127.0.0.1", "127.0.0.2", asked=asked)
    status = deliver(url, {"n": 1}, secret=SECRET, timeout_s=5, allow_loopback=True, resolve=resolve)
    assert status == 204 and asked == ["hooks.example"], "a delivery resolves once"
    assert checked.received == [(f"hooks.example:{port}", True, {"n": 1})]
    assert rebound.received == [], "the name's second answer was used"
    # The next delivery checks again, and goes where that check looked.
    deliver(url, {"n": 2}, secret=SECRET, timeout_s=5, allow_loopback=True, resolve=resolve)
    assert rebound.received == [(f"hooks.example:{port}", True, {"n": 2})]
    assert len(checked.received) == 1


def test_a_name_that_rebinds_to_loopback_after_the_submit_check_is_refused_at_delivery(
    receivers: tuple[_Server, _Server],
) -> None:
    checked, _ = receivers
    url = f"http://hooks.example:{checked.server_address[1]}/hook"
    resolve = _answers(PUBLIC, "127.0.0.1")
    assert str(check_target(url, allow_loopback=False, resolve=resolve)) == PUBLIC  # the submit's check
    with pytest.raises(CallbackRefused, match="127.0.0.1"):
        deliver(url, {"n": 1}, secret=SECRET, timeout_s=5, allow_loopback=False, resolve=resolve)
    assert checked.received == []


def test_a_name_with_any_forbidden_address_is_refused_before_connecting(
    receivers: tuple[_Server, _Server],
) -> None:
    checked, _ = receivers
    url = f"http://hooks.example:{checked.server_address[1]}/hook"

    def both(host: str, port: int) -> list[str]:
        return [PUBLIC, "127.0.0.1"]

    with pytest.raises(CallbackRefused, match="not a public address"):
        deliver(url, {}, secret=SECRET, timeout_s=5, allow_loopback=False, resolve=both)
    with pytest.raises(CallbackError, match="no address"):
        deliver(url, {}, secret=SECRET, timeout_s=5, allow_loopback=True, resolve=lambda h, p: [])
    assert checked.received == []


def _certificate(folder: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for ``name`` (openssl), and its key."""
    cert, key = folder / f"{name}.pem", folder / f"{name}.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={name}",
         "-addext", f"subjectAltName=DNS:{name}", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command for a certificate")
def test_https_sends_the_name_as_server_name_and_checks_the_certificate_against_it(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path, "hooks.example")
    seen: list[str | None] = []
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(cert, key)
    server_tls.sni_callback = lambda sock, name, ctx: seen.append(name)
    server = _serve("127.0.0.1", tls=server_tls)
    port = server.server_address[1]
    trust = ssl.create_default_context(cafile=str(cert))
    try:
        status = deliver(
            f"https://hooks.example:{port}/hook",
            {"n": 1},
            secret=SECRET,
            timeout_s=5,
            allow_loopback=True,
            resolve=lambda host, p: ["127.0.0.1"],
            tls_context=trust,
        )
        assert status == 204 and seen == ["hooks.example"]
        assert server.received == [(f"hooks.example:{port}", True, {"n": 1})]
        with pytest.raises(CallbackError, match="failed"):  # the certificate does not name this host
            deliver(
                f"https://other.example:{port}/hook",
                {"n": 2},
                secret=SECRET,
                timeout_s=5,
                allow_loopback=True,
                resolve=lambda host, p: ["127.0.0.1"],
                tls_context=trust,
            )
        assert len(server.received) == 1
    finally:
        server.shutdown()
        server.server_close()
