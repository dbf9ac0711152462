"""Request metrics for Prometheus, in a registry of the app's own.

Counts requests by method, route template and status, and times them. Every
label has a bounded set of values: a known method or ``other``, a route
template or ``unmatched``, a status code. The
service-wide numbers (queue depth, job durations) come from
:class:`~choreo.service.metrics.ServiceCollector`, registered beside them.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from celery import Celery
from fastapi import FastAPI, Request, Response
from prometheus_client import CollectorRegistry, Counter, Histogram

from choreo.service.context import ServiceContext
from choreo.service.metrics import ServiceCollector

__all__ = ["METHODS", "install_metrics"]

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""Methods counted by name; any other is counted as ``other``, so clients cannot grow the label set."""


def install_metrics(app: FastAPI, ctx: ServiceContext, celery: Celery) -> CollectorRegistry:
    """Give ``app`` a registry (``app.state.registry``) and the middleware that feeds it."""
    registry = CollectorRegistry()
    requests = Counter(
        "choreo_http_requests", "HTTP requests answered.", ["method", "route", "status"], registry=registry
    )
    latency = Histogram(
        "choreo_http_request_duration_seconds",
        "Time to answer a request.",
        ["method", "route"],
        registry=registry,
    )
    registry.register(ServiceCollector(ctx, celery))
    app.state.registry = registry

    @app.middleware("http")
    async def _measure(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        start = time.perf_counter()
        status = 500
        try:
            response = await call_next(request)
            status = response.status_code
            return response
        finally:
            route = request.scope.get("route")
            template = getattr(route, "path", "unmatched")
            method = request.method if request.method in METHODS else "other"
            requests.labels(method, template, str(status)).inc()
            latency.labels(method, template).observe(time.perf_counter() - start)

    return registry
