"""Signed callbacks: tell a client's URL that a job or a batch has finished.

The body is JSON; ``X-Choreo-Signature`` carries ``sha256=<hex>`` of
HMAC-SHA256(team secret, ``<timestamp>.<body>``) and ``X-Choreo-Timestamp`` the
Unix time, so a receiver can check both origin and freshness. Each team signs
with its own secret (:mod:`choreo.service.teams`).

A callback URL is a request the service makes on a client's behalf, so it may
only reach the public internet: a host that resolves to a loopback, private,
link-local, multicast, reserved or unspecified address is refused when the job
is submitted and again before each delivery (a name can change its address in
between); ``callback_allow_loopback`` lets a development stack call a receiver
on the same machine. A delivery resolves the name once and connects to exactly
the address it checked (the request keeps the name in its ``Host`` header and
as the TLS server name, so the certificate is checked against the name), so a
name that answers differently a moment later (DNS rebinding) cannot steer it;
no proxy from the environment is used. Redirects are not followed, and a URL's
``user:password@`` is never written to a log
(:func:`~choreo.service.redact.safe_url`). Delivery is a CPU-queue task retried
with backoff; see ``worker.tasks``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import socket
import ssl
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx

from choreo.errors import ChoreoError, ParameterError
from choreo.service.redact import safe_url

__all__ = [
    "CallbackError",
    "CallbackRefused",
    "Resolver",
    "check_target",
    "deliver",
    "resolve_host",
    "sign",
    "verify",
]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

Resolver = Callable[[str, int], list[str]]
"""Answers a host name and port with the addresses to connect to, as the system resolver would."""


class CallbackError(ChoreoError):
    """The callback URL could not be reached or did not answer 2xx; trying again may help."""

    code = "callback_failed"
    transient = True


class CallbackRefused(ParameterError):
    """The callback URL may not be called: its host is not on the public internet, or it redirected."""

    code = "callback_refused"


def resolve_host(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to now, through the system resolver (``getaddrinfo``)."""
    return [str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]


def _forbidden(address: Address, allow_loopback: bool) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        return not allow_loopback
    return (
        address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or not address.is_global
    )


def check_target(url: str, *, allow_loopback: bool, resolve: Resolver = resolve_host) -> Address:
    """Refuse ``url`` unless every address its host resolves to is public (or loopback, when allowed).

    Returns the first of them: the address a delivery connects to.

    Raises
    ------
    CallbackRefused
        For a URL without an http(s) scheme or host, or a forbidden address.
    CallbackError
        When the host does not resolve now (transient: a delivery retries).
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CallbackRefused(f"callback URL {safe_url(url)!r} must be http(s) with a host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addresses = [ipaddress.ip_address(a.split("%", 1)[0]) for a in resolve(parts.hostname, port)]
    except (OSError, ValueError) as exc:
        raise CallbackError(f"callback host {parts.hostname!r} does not resolve: {exc}") from exc
    if not addresses:
        raise CallbackError(f"callback host {parts.hostname!r} resolves to no address")
    for address in addresses:
        if _forbidden(address, allow_loopback):
            raise CallbackRefused(
                f"callback host {parts.hostname!r} resolves to {address}, which is not a public address"
            )
    return addresses[0]


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The signature header value for ``body`` sent at ``timestamp``."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def verify(secret: str, timestamp: int, body: bytes, signature: str, *, max_age_s: int = 300) -> bool:
    """Whether a received callback is authentic and recent: what a receiver runs."""
    if abs(time.time() - timestamp) > max_age_s:
        return False
    return hmac.compare_digest(sign(secret, timestamp, body), signature)


def deliver(
    url: str,
    payload: dict[str, Any],
    *,
    secret: str,
    timeout_s: float,
    allow_loopback: bool,
    resolve: Resolver = resolve_host,
    tls_context: ssl.SSLContext | None = None,
) -> int:
    """Check the target, then POST the signed payload once to the address checked; returns the HTTP status.

    ``resolve`` answers the host's addresses (the system resolver unless
    given); ``tls_context`` the certificates an https receiver is checked
    against (default: certifi's).

    Raises
    ------
    CallbackRefused
        When the host is not public (see :func:`check_target`) or the answer
        is a redirect: retrying cannot help.
    CallbackError
        On a network error or another non-2xx answer (transient: the caller retries).
    """
    address = check_target(url, allow_loopback=allow_loopback, resolve=resolve)
    named = httpx.URL(url)
    body = json.dumps(payload, sort_keys=True).encode()
    timestamp = int(time.time())
    headers = {
        "Host": named.netloc.decode("ascii"),
        "Content-Type": "application/json",
        "X-Choreo-Timestamp": str(timestamp),
        "X-Choreo-Signature": sign(secret, timestamp, body),
    }
    shown = safe_url(url)
    try:
        with httpx.Client(
            verify=tls_context or True, trust_env=False, follow_redirects=False, timeout=timeout_s
        ) as client:
            answer = client.post(
                named.copy_with(host=str(address)),
                content=body,
                headers=headers,
                extensions={"sni_hostname": named.raw_host.decode("ascii")},
            )
    except httpx.HTTPError as exc:
        raise CallbackError(f"callback to {shown} failed: {type(exc).__name__}") from None
    if answer.is_redirect:
        raise CallbackRefused(
            f"callback to {shown} answered {answer.status_code}; redirects are not followed"
        )
    if not 200 <= answer.status_code < 300:
        raise CallbackError(f"callback to {shown} answered {answer.status_code}")
    return answer.status_code
