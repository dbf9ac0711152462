"""Signed callbacks: tell a client's URL that a job or a batch has finished.

The body is JSON; ``X-Choreo-Signature`` carries ``sha256=<hex>`` of
HMAC-SHA256(secret, ``<timestamp>.<body>``) and ``X-Choreo-Timestamp`` the
Unix time, so a receiver can check both origin and freshness. Delivery is a
CPU-queue task retried with backoff; see ``worker.tasks``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

import httpx

from choreo.errors import ChoreoError

__all__ = ["CallbackError", "deliver", "sign", "verify"]


class CallbackError(ChoreoError):
    """The callback URL could not be reached or did not answer 2xx."""

    code = "callback_failed"
    transient = True


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The signature header value for ``body`` sent at ``timestamp``."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def verify(secret: str, timestamp: int, body: bytes, signature: str, *, max_age_s: int = 300) -> bool:
    """Whether a received callback is authentic and recent: what a receiver runs."""
    if abs(time.time() - timestamp) > max_age_s:
        return False
    return hmac.compare_digest(sign(secret, timestamp, body), signature)


def deliver(url: str, payload: dict[str, Any], *, secret: str, timeout_s: float) -> int:
    """POST the signed payload once; returns the HTTP status.

    Raises
    ------
    CallbackError
        On a network error or a non-2xx answer (transient: the caller retries).
    """
    body = json.dumps(payload, sort_keys=True).encode()
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "X-Choreo-Timestamp": str(timestamp),
        "X-Choreo-Signature": sign(secret, timestamp, body),
    }
    try:
        answer = httpx.post(url, content=body, headers=headers, timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise CallbackError(f"callback to {url} failed: {exc}") from exc
    if not 200 <= answer.status_code < 300:
        raise CallbackError(f"callback to {url} answered {answer.status_code}")
    return answer.status_code
