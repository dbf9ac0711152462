"""The workers' Celery app, and the engine loaded once per GPU worker process.

Run a CPU worker (decode, features, post-processing, export, upload)::

    celery -A worker.app worker -Q cpu -P threads -c 2 --prefetch-multiplier 1

and one GPU worker per GPU, many generation tasks in one process, whose
sequence batcher (:func:`engines.batcher.process_batcher`) packs their songs
into each engine call::

    CUDA_VISIBLE_DEVICES=0 celery -A worker.app worker -Q gpu -P threads -c 4 --prefetch-multiplier 1

The engine and its batcher are made when the worker starts (``worker_init`` for the threads
and solo pools, ``worker_process_init`` in each forked child of a prefork
pool), never before a fork, and never by a worker that does not serve ``gpu``;
a worker that serves ``cpu`` starts the forkserver its decodes run in
(:mod:`worker.isolated`) at the same moment.

CPU workers run the threads pool, one pool for every worker we ship: a decode
runs in a child that its deadline kills (:mod:`worker.isolated`), which a
prefork pool's children (daemonic, and billiard's) may not start, so a CPU
worker started with a forking pool refuses to start, saying so.

Every worker's main process also runs the reaper (:mod:`choreo.service.reaper`)
in a thread from ``worker_ready`` to ``worker_shutdown``, so while any worker
runs, a stage that lost its lease is sent again within a sweep, and its own
heartbeat (:mod:`choreo.service.liveness`): the messages it has received and not
acknowledged, recorded as each arrives (``task_received``) and at every beat, go
back to their queue within seconds once it stops beating.
"""

from __future__ import annotations

import threading
from typing import Any

from celery import signals
from celery.utils.log import get_logger

from choreo.service.queue import CPU_QUEUE, GPU_QUEUE, make_celery
from choreo.service.settings import get_service_settings
from worker.isolated import start_forkserver

__all__ = ["app"]

log = get_logger(__name__)

app = make_celery(get_service_settings(), name="choreo-worker")
app.conf.include = ["worker.tasks", "worker.library_tasks"]

_serves_gpu = False
_serves_cpu = False
_reaper_stop = threading.Event()
_heartbeat_stop = threading.Event()


def _load_batcher() -> None:
    from choreo.runners import configured_model_path
    from engines.batcher import process_batcher

    process_batcher(configured_model_path())


def _forks(pool: object) -> bool:
    name = pool if isinstance(pool, str) else getattr(pool, "__module__", "") + str(pool)
    return "prefork" in name or name == "processes"


@signals.worker_init.connect
def _on_worker_init(sender: Any, **_: Any) -> None:
    global _serves_gpu, _serves_cpu
    queues = set(sender.app.amqp.queues.keys())
    _serves_gpu, _serves_cpu = GPU_QUEUE in queues, CPU_QUEUE in queues
    if _serves_cpu and _forks(sender.pool_cls):
        raise SystemExit(
            "a CPU worker runs the threads pool (-P threads): its decodes run in children that their "
            "deadline kills, which a prefork pool's children may not start"
        )
    if not _forks(sender.pool_cls):
        _on_worker_process_init()


@signals.worker_process_init.connect
def _on_worker_process_init(**_: Any) -> None:
    if _serves_cpu:
        start_forkserver()
    if _serves_gpu:
        _load_batcher()


@signals.worker_ready.connect
def _start_reaper(**_: Any) -> None:
    from choreo.service.context import get_context
    from choreo.service.reaper import run_reaper

    _reaper_stop.clear()
    threading.Thread(
        target=run_reaper, args=(get_context(), app, _reaper_stop), name="reaper", daemon=True
    ).start()


@signals.worker_shutdown.connect
def _stop_reaper(**_: Any) -> None:
    _reaper_stop.set()


def _held_tags(consumer: Any) -> list[str]:
    """Delivery tags the consumer's channel has delivered and not acknowledged (kombu's QoS)."""
    qos = consumer.task_consumer.channel.qos
    return [tag for tag in list(qos._delivered) if tag not in qos._dirty]


@signals.worker_ready.connect
def _start_heartbeat(sender: Any, **_: Any) -> None:
    from choreo.service.context import get_context
    from choreo.service.liveness import run_heartbeat

    _heartbeat_stop.clear()
    threading.Thread(
        target=run_heartbeat,
        args=(get_context(), lambda: _held_tags(sender), _heartbeat_stop),
        name="heartbeat",
        daemon=True,
    ).start()


@signals.task_received.connect
def _note_received(request: Any, **_: Any) -> None:
    from choreo.service.context import get_context
    from choreo.service.liveness import note_received

    try:
        note_received(get_context(), request.message.delivery_tag)
    except Exception as exc:  # noqa: BLE001 - the next beat records it
        log.warning("could not record a received message: %s", exc)


@signals.worker_shutdown.connect
def _stop_heartbeat(**_: Any) -> None:
    from choreo.service.context import get_context
    from choreo.service.liveness import retire

    _heartbeat_stop.set()
    try:
        retire(get_context())
    except Exception as exc:  # noqa: BLE001 - its entries lapse into "dead", and hold nothing
        log.warning("could not retire this worker's heartbeat: %s", exc)


@signals.worker_ready.connect
def _on_worker_ready(**_: Any) -> None:
    # Logging is set up after worker_init, so the start-up load is reported here.
    from engines.batcher import loaded_process_batcher

    batcher = loaded_process_batcher()
    if batcher is not None:
        log.info(
            "engine %s loaded at start-up; batching up to %d songs",
            type(batcher.engine).__name__,
            batcher.max_batch,
        )
