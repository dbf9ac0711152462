"""Prometheus metrics that several processes feed: queue depth and job durations.

Workers add each finished job's duration to histogram buckets kept in Redis;
the API's collector reads them (and the queue lengths) when Prometheus scrapes,
so the numbers are the whole service's, not one process's.
"""

from __future__ import annotations

from collections.abc import Iterator

from celery import Celery
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from choreo.service.context import ServiceContext
from choreo.service.queue import queue_depths

__all__ = ["DURATION_BUCKETS_S", "ServiceCollector", "record_job_duration"]

DURATION_BUCKETS_S = (5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 3600.0)


def record_job_duration(ctx: ServiceContext, state: str, duration_s: float) -> None:
    """Count one finished job of ``state`` that took ``duration_s`` from submit to end."""
    key = ctx.key("metrics", "job_duration", state)
    pipe = ctx.redis.pipeline()
    for bound in DURATION_BUCKETS_S:
        if duration_s <= bound:
            pipe.hincrby(key, f"le:{bound}", 1)
    pipe.hincrby(key, "le:+Inf", 1)
    pipe.hincrbyfloat(key, "sum", duration_s)
    pipe.execute()


class ServiceCollector(Collector):
    """Reads queue depths and job-duration histograms from Redis at scrape time."""

    def __init__(self, ctx: ServiceContext, app: Celery) -> None:
        self._ctx = ctx
        self._app = app

    def collect(self) -> Iterator[GaugeMetricFamily | HistogramMetricFamily]:
        depth = GaugeMetricFamily("choreo_queue_depth", "Tasks waiting in a queue.", labels=["queue"])
        for queue, n in queue_depths(self._app).items():
            depth.add_metric([queue], n)
        yield depth
        hist = HistogramMetricFamily(
            "choreo_job_duration_seconds", "Submit-to-end time of finished jobs.", labels=["state"]
        )
        for state in ("done", "failed", "cancelled"):
            raw = self._ctx.redis.hgetall(self._ctx.key("metrics", "job_duration", state))
            if not raw:
                continue
            buckets = [(str(b), float(raw.get(f"le:{b}", 0))) for b in DURATION_BUCKETS_S]
            buckets.append(("+Inf", float(raw.get("le:+Inf", 0))))
            hist.add_metric([state], buckets, float(raw.get("sum", 0.0)))
        yield hist
