"""Per-key request limits: a fixed one-minute window counted in Redis.

A window counter is one INCR per request and is shared by every API process,
which is what a limit across several uvicorn workers needs.
"""

from __future__ import annotations

import time

from choreo.service.context import ServiceContext

__all__ = ["take_request"]

WINDOW_S = 60


def take_request(ctx: ServiceContext, key_id: str, limit_per_minute: int) -> tuple[bool, int]:
    """Count one request for ``key_id``; returns (allowed, seconds until the window resets)."""
    now = time.time()
    window = int(now // WINDOW_S)
    counter = ctx.key("rl", key_id, str(window))
    pipe = ctx.redis.pipeline()
    pipe.incr(counter)
    pipe.expire(counter, WINDOW_S * 2)
    count, _ = pipe.execute()
    retry_after_s = int((window + 1) * WINDOW_S - now) + 1
    return int(count) <= limit_per_minute, retry_after_s
