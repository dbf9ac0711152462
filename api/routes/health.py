"""Liveness, readiness and Prometheus metrics; no key needed."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from redis.exceptions import RedisError

from api.deps import Ctx
from choreo.errors import StorageError

__all__ = ["router"]

router = APIRouter(tags=["health"])

log = logging.getLogger(__name__)


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """The process is alive."""
    return {"status": "ok"}


@router.get("/readyz")
def readyz(ctx: Ctx) -> JSONResponse:
    """Redis and storage both answer: 200; otherwise 503 naming what is down (the log says why)."""
    checks: dict[str, str] = {}
    try:
        ctx.redis.ping()
        checks["redis"] = "ok"
    except RedisError as exc:
        log.warning("readyz: Redis down: %s", exc)
        checks["redis"] = "down"
    try:
        ctx.storage.ping()
        checks["storage"] = "ok"
    except StorageError as exc:
        log.warning("readyz: storage down: %s", exc)
        checks["storage"] = "down"
    ready = all(v == "ok" for v in checks.values())
    return JSONResponse(
        {"status": "ready" if ready else "not ready", "checks": checks}, status_code=200 if ready else 503
    )


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """Requests by route and status, request latency, queue depth and job durations."""
    return Response(generate_latest(request.app.state.registry), media_type=CONTENT_TYPE_LATEST)
