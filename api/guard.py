"""The gate every request passes before the app reads its body: authentication and size.

A pure ASGI middleware, so nothing of a refused request's body is read:

- under ``/v1/`` the bearer key is checked first (401 without a live key), then
  the key's request limit (429); failed authentications are counted per client
  address (the peer, or what a trusted proxy forwarded: :mod:`choreo.service.forwarded`),
  and once over its limit that address's requests without a valid key get 429,
  while a valid key is still served;
- every request's body is limited: a declared ``Content-Length`` over the
  route's limit is refused at once (413), and the bytes that arrive are counted
  so a body that claims less (or is chunked) is cut off at the limit too.

The key found is left in ``scope["state"]["api_key"]`` for the route's
dependencies (:mod:`api.deps`), so each request reads its key record once. The
few ``/v1/`` routes that need no key (:data:`OPEN_ROUTES`: the option list, and
a song's audio and an album's archive by a ticket, which their routes check)
pass without one, and are authenticated like the others when they bring one.
"""

from __future__ import annotations

import logging
import re
from typing import NoReturn

from redis.exceptions import RedisError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import ApiError, BodyTooLarge, error_response
from choreo.service.context import ServiceContext
from choreo.service.forwarded import client_address
from choreo.service.keys import verify_key
from choreo.service.ratelimit import auth_failures_exceeded, count_auth_failure, take_request
from choreo.service.records import ApiKeyRecord
from choreo.service.settings import ServiceSettings

__all__ = ["MULTIPART_OVERHEAD_BYTES", "OPEN_ROUTES", "RequestGuard", "body_limit", "needs_key"]

log = logging.getLogger(__name__)

MULTIPART_OVERHEAD_BYTES = 64 * 1024
"""What a song upload's body may carry beyond the song: boundaries and part headers."""

_CHALLENGE = {"WWW-Authenticate": "Bearer"}

OPEN_ROUTES = (
    ("GET", re.compile(r"^/v1/options/?$")),
    ("GET", re.compile(r"^/v1/jobs/[^/]+/audio$")),
    ("GET", re.compile(r"^/v1/batches/[^/]+/archive$")),
)
"""(method, path) of the ``/v1/`` routes that may be called without a key (a song, an album's
archive: their routes check the ticket of the link)."""


def needs_key(method: str, path: str, authorization: str | None) -> bool:
    """Whether the guard authenticates this request (every ``/v1/`` one, but open routes without a key)."""
    if not path.startswith("/v1/"):
        return False
    is_open = any(m == method and p.match(path) for m, p in OPEN_ROUTES)
    return authorization is not None or not is_open


def body_limit(settings: ServiceSettings, method: str, path: str) -> int:
    """The largest body, in bytes, that ``method path`` accepts."""
    if method == "POST" and path.rstrip("/") == "/v1/tracks":
        return settings.max_upload_bytes + MULTIPART_OVERHEAD_BYTES
    return settings.max_request_bytes


def authenticate(ctx: ServiceContext, authorization: str | None, address: str) -> ApiKeyRecord:
    """The live key of a request, after the key's limit; a request without one counts against its address.

    A valid key is served whatever its address has done: behind a proxy or a NAT many clients
    share one address, and one of them sending bad keys must not shut the others out. What the
    address limit throttles is trying keys: once an address has failed ``auth_failures_per_minute``
    times in the window, its requests without a valid key get 429 instead of 401 until the window
    ends. (A key's secret is 256 random bits, so telling 429 from 200 does not make guessing one
    feasible; the limit keeps scanning slow and cheap to refuse.)

    Raises
    ------
    ApiError
        401 without a live key, 429 without one from an address over its failed-authentication
        limit, or 429 over the key's request limit.
    """
    settings = ctx.settings
    scheme, _, token = (authorization or "").partition(" ")
    well_formed = scheme.lower() == "bearer" and bool(token.strip())
    key = verify_key(ctx, token.strip()) if well_formed else None
    if key is None:
        _refuse_unauthenticated(ctx, address, well_formed)
    limit = key.rate_limit_per_minute or settings.rate_limit_per_minute
    allowed, retry_after_s = take_request(ctx, key.id, limit)
    if not allowed:
        raise ApiError(
            429,
            "rate_limited",
            f"key {key.id} is over its limit of {limit} requests per minute",
            headers={"Retry-After": str(retry_after_s)},
        )
    return key


def _refuse_unauthenticated(ctx: ServiceContext, address: str, well_formed: bool) -> NoReturn:
    """Count a failed authentication from ``address`` and refuse it: 429 past its limit, else 401."""
    wait_s = auth_failures_exceeded(ctx, address, ctx.settings.auth_failures_per_minute)
    if wait_s is not None:
        raise ApiError(
            429,
            "rate_limited",
            f"too many failed authentications from this address; retry in {wait_s} s",
            headers={"Retry-After": str(wait_s)},
        )
    count_auth_failure(ctx, address)
    if not well_formed:
        raise ApiError(
            401, "unauthenticated", "send an API key as 'Authorization: Bearer <key>'", headers=_CHALLENGE
        )
    raise ApiError(401, "invalid_key", "the API key is unknown, malformed or revoked", headers=_CHALLENGE)


class RequestGuard:
    """ASGI middleware: authenticate ``/v1/`` requests and bound every body (see the module)."""

    def __init__(self, app: ASGIApp, ctx: ServiceContext) -> None:
        self.app = app
        self.ctx = ctx

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        limit = body_limit(self.ctx.settings, scope["method"], scope["path"])
        try:
            if needs_key(scope["method"], scope["path"], headers.get("authorization")):
                peer = scope["client"][0] if scope.get("client") else "unknown"
                trusted = self.ctx.settings.trusted_proxy_networks
                address = client_address(peer, headers.get("x-forwarded-for"), trusted)
                key = await run_in_threadpool(authenticate, self.ctx, headers.get("authorization"), address)
                scope.setdefault("state", {})["api_key"] = key
            declared = headers.get("content-length")
            if declared is not None and not declared.isdigit():
                raise ApiError(400, "bad_request", f"Content-Length {declared[:20]!r} is not a number")
            if declared is not None and int(declared) > limit:
                raise ApiError(
                    413, "too_large", f"the body ({declared} bytes) is larger than the limit of {limit} bytes"
                )
        except ApiError as exc:
            await error_response(exc.status, exc.code, exc.message, exc.headers)(scope, receive, send)
            return
        except RedisError as exc:
            log.warning("authentication failed: Redis unavailable: %s", exc)
            response = error_response(503, "index_unavailable", "the job index is unavailable; try again")
            await response(scope, receive, send)
            return
        await self.app(scope, _bounded(receive, limit), send)


def _bounded(receive: Receive, limit: int) -> Receive:
    seen = 0

    async def bounded_receive() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise BodyTooLarge(limit)
        return message

    return bounded_receive
