"""Prometheus metrics that several processes feed: queue depth and job durations.

Workers add each finished job's duration to histogram buckets kept in Redis;
the API's collector reads them (and the queue lengths) when Prometheus scrapes,
so the numbers are the whole service's, not one process's. The buckets live in
the same Redis as the index, so the rebuild from storage sets them again from
the job records (:func:`restore_job_durations`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from celery import Celery
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from redis.client import Pipeline

from choreo.service.context import ServiceContext
from choreo.service.queue import queue_depths
from choreo.service.records import JobRecord, JobState, now_s

__all__ = ["DURATION_BUCKETS_S", "ServiceCollector", "record_job_duration", "restore_job_durations"]

DURATION_BUCKETS_S = (5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 3600.0)

_ENDED = (JobState.DONE, JobState.FAILED, JobState.CANCELLED)


def _histogram_key(ctx: ServiceContext, state: str) -> str:
    return ctx.key("metrics", "job_duration", state)


def _add(pipe: Pipeline, key: str, job: JobRecord) -> None:
    duration_s = max((job.finished_at or now_s()) - job.created_at, 0.0)
    for bound in DURATION_BUCKETS_S:
        if duration_s <= bound:
            pipe.hincrby(key, f"le:{bound}", 1)
    pipe.hincrby(key, "le:+Inf", 1)
    pipe.hincrbyfloat(key, "sum", duration_s)


def record_job_duration(ctx: ServiceContext, job: JobRecord) -> None:
    """Count one ended job by its state and its time from submit to end."""
    pipe = ctx.redis.pipeline()
    _add(pipe, _histogram_key(ctx, job.state.value), job)
    pipe.execute()


def restore_job_durations(ctx: ServiceContext, jobs: Iterable[JobRecord]) -> None:
    """Set the histograms to the announced ones of ``jobs`` (those :func:`record_job_duration` counted).

    For the rebuild of a Redis that lost them: they are replaced, not added to, so a
    second rebuild gives the same numbers.
    """
    pipe = ctx.redis.pipeline(transaction=True)
    pipe.delete(*(_histogram_key(ctx, state.value) for state in _ENDED))
    for job in jobs:
        if job.announced and job.state in _ENDED:
            _add(pipe, _histogram_key(ctx, job.state.value), job)
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
        for state in (s.value for s in _ENDED):
            raw = self._ctx.redis.hgetall(_histogram_key(self._ctx, state))
            if not raw:
                continue
            buckets = [(str(b), float(raw.get(f"le:{b}", 0))) for b in DURATION_BUCKETS_S]
            buckets.append(("+Inf", float(raw.get("le:+Inf", 0))))
            hist.add_metric([state], buckets, float(raw.get("sum", 0.0)))
        yield hist
