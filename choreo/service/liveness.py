"""Worker liveness: a heartbeat per worker process and the messages it holds, so a dead worker's
messages go back to their queue within seconds, not after the broker's visibility timeout.

A stage's lease (:mod:`choreo.service.leases`) covers it from the moment a worker takes it. Before
that, a message a worker has received (prefetched, or a retry counting down its ``countdown`` in the
worker's memory) is only in kombu's ``unacked`` hash, which hands it out again after the visibility
timeout (90 s by default). So, as dramatiq's Redis broker does, every worker's main process keeps:

- ``alive:<worker>``, set with a TTL of ``CHOREO_LEASE_TTL_S`` and renewed every third of it by a
  thread (:func:`run_heartbeat`), and its entry in the hash ``workers``;
- ``holds:<worker>``, the delivery tags of the messages it has received and not acknowledged: each
  one added as it arrives (:func:`note_received`, Celery's ``task_received``), and at every beat set
  to what its channel has delivered and not acknowledged (acknowledged ones leave).

The reaper (:func:`restore_dead`) finds a worker listed in ``workers`` whose ``alive`` key lapsed
(SIGKILLed, or frozen: a frozen one's messages run elsewhere and its leases make it do nothing when
it wakes) and puts each of its messages still unacknowledged back at the head of its queue, through
kombu's own restore (one transaction, so kombu's restore after the visibility timeout never doubles
it). Recovery takes one TTL plus one reaper interval; the visibility timeout stays the backstop for
a message received in the instant before its tag was recorded.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import cast

from celery import Celery

from choreo.service.context import ServiceContext
from choreo.service.leases import holder_id
from choreo.service.records import now_s

__all__ = ["beat", "dead_workers", "note_received", "restore_dead", "retire", "run_heartbeat"]

log = logging.getLogger(__name__)


def _ttl_ms(ctx: ServiceContext) -> int:
    return max(int(ctx.settings.lease_ttl_s * 1000), 1)


def note_received(ctx: ServiceContext, tag: str, worker: str | None = None) -> None:
    """Record that this worker (``worker``: another's id) holds the message ``tag``, unacknowledged."""
    ctx.redis.sadd(ctx.key("holds", worker or holder_id()), tag)


def beat(ctx: ServiceContext, held: Callable[[], Iterable[str]], worker: str | None = None) -> None:
    """One heartbeat: this worker is alive, and ``held()`` says what it holds unacknowledged now.

    ``holds`` is read before ``held()`` is asked: a tag recorded then and not held now was
    acknowledged, and leaves; one recorded after the read (:func:`note_received`) stays.
    """
    wid = worker or holder_id()
    recorded = cast(set[str], ctx.redis.smembers(ctx.key("holds", wid)))
    now = set(held())
    pipe = ctx.redis.pipeline(transaction=True)
    pipe.set(ctx.key("alive", wid), "1", px=_ttl_ms(ctx))
    pipe.hsetnx(ctx.key("workers"), wid, str(now_s()))
    if now:
        pipe.sadd(ctx.key("holds", wid), *now)
    if recorded - now:
        pipe.srem(ctx.key("holds", wid), *(recorded - now))
    pipe.execute()


def retire(ctx: ServiceContext, worker: str | None = None) -> None:
    """A worker that stops cleanly leaves the lists (kombu gives its messages back itself)."""
    wid = worker or holder_id()
    ctx.redis.delete(ctx.key("alive", wid), ctx.key("holds", wid))
    ctx.redis.hdel(ctx.key("workers"), wid)


def run_heartbeat(ctx: ServiceContext, held: Callable[[], Iterable[str]], stop: threading.Event) -> None:
    """Beat every third of ``CHOREO_LEASE_TTL_S`` until ``stop`` is set (a worker's thread); ``held``
    says which delivery tags the worker holds unacknowledged now."""
    while True:
        try:
            beat(ctx, held)
        except Exception as exc:  # noqa: BLE001 - Redis away for a moment; the next beat tries again
            log.warning("the worker's heartbeat failed: %s", exc)
        if stop.wait(_ttl_ms(ctx) / 3000):
            return


def dead_workers(ctx: ServiceContext) -> list[str]:
    """Workers listed in ``workers`` whose heartbeat lapsed."""
    ids = cast(list[str], ctx.redis.hkeys(ctx.key("workers")))
    if not ids:
        return []
    pipe = ctx.redis.pipeline(transaction=False)
    for wid in ids:
        pipe.exists(ctx.key("alive", wid))
    return [wid for wid, alive in zip(ids, pipe.execute(), strict=True) if not alive]


def restore_dead(ctx: ServiceContext, celery: Celery) -> dict[str, int]:
    """Put every message a dead worker held back in its queue; returns how many tags each had."""
    restored: dict[str, int] = {}
    for wid in dead_workers(ctx):
        tags = cast(set[str], ctx.redis.smembers(ctx.key("holds", wid)))
        if tags:
            with celery.connection_for_write() as conn:
                qos = conn.default_channel.qos
                for tag in sorted(tags):
                    qos.restore_by_tag(tag)  # nothing when it was acknowledged meanwhile
        pipe = ctx.redis.pipeline(transaction=True)
        pipe.delete(ctx.key("holds", wid))
        pipe.hdel(ctx.key("workers"), wid)
        pipe.execute()
        log.warning(
            "worker %s stopped beating; %d message(s) it held went back to their queues", wid, len(tags)
        )
        restored[wid] = len(tags)
    return restored
