"""Request limits: fixed one-minute windows counted in Redis.

A window counter is one INCR per request and is shared by every API process,
which is what a limit across several uvicorn workers needs. Two kinds of
counter use it: requests per key, and failed authentications per client
address (so guessing keys is as limited as using one).
"""

from __future__ import annotations

import time

from choreo.service.context import ServiceContext

__all__ = ["WINDOW_S", "auth_failures_exceeded", "count_auth_failure", "take_request"]

WINDOW_S = 60


def _window(now: float) -> tuple[int, int]:
    window = int(now // WINDOW_S)
    return window, int((window + 1) * WINDOW_S - now) + 1


def _count(ctx: ServiceContext, counter: str) -> int:
    pipe = ctx.redis.pipeline()
    pipe.incr(counter)
    pipe.expire(counter, WINDOW_S * 2)
    count, _ = pipe.execute()
    return int(count)


def take_request(ctx: ServiceContext, key_id: str, limit_per_minute: int) -> tuple[bool, int]:
    """Count one request for ``key_id``; returns (allowed, seconds until the window resets)."""
    window, retry_after_s = _window(time.time())
    count = _count(ctx, ctx.key("rl", key_id, str(window)))
    return count <= limit_per_minute, retry_after_s


def auth_failures_exceeded(ctx: ServiceContext, address: str, limit_per_minute: int) -> int | None:
    """Seconds to wait if ``address`` failed authentication ``limit_per_minute`` times; else None."""
    window, retry_after_s = _window(time.time())
    seen = ctx.redis.get(ctx.key("rl_auth", address, str(window)))
    return retry_after_s if seen is not None and int(seen) >= limit_per_minute else None


def count_auth_failure(ctx: ServiceContext, address: str) -> None:
    """Count one failed authentication from ``address`` in the current window."""
    window, _ = _window(time.time())
    _count(ctx, ctx.key("rl_auth", address, str(window)))
