"""The Celery configuration and enqueueing by task name.

The API imports this module, never the tasks: it sends ``choreo.prepare`` →
``choreo.generate`` → ``choreo.finish`` as a chain of signatures by name, so it
needs neither the engines nor the pipeline. The workers build their app from
the same :func:`celery_config`.
"""

from __future__ import annotations

from typing import Any

from celery import Celery, chain

from choreo.service.records import JobRecord
from choreo.service.settings import ServiceSettings

__all__ = [
    "CPU_QUEUE",
    "GPU_QUEUE",
    "PRIORITY_STEPS",
    "TASK_CALLBACK",
    "TASK_FINISH",
    "TASK_GENERATE",
    "TASK_PREPARE",
    "STAGES",
    "broker_priority",
    "celery_config",
    "enqueue_callback",
    "enqueue_job",
    "make_celery",
    "queue_depths",
]

CPU_QUEUE = "cpu"
GPU_QUEUE = "gpu"
TASK_PREPARE = "choreo.prepare"
TASK_GENERATE = "choreo.generate"
TASK_FINISH = "choreo.finish"
TASK_CALLBACK = "choreo.callback"
PRIORITY_STEPS = list(range(10))
_PRIORITY_SEP = ":"


def celery_config(settings: ServiceSettings) -> dict[str, Any]:
    """Broker, results and delivery guarantees shared by the API and every worker."""
    return {
        "broker_url": settings.redis_url,
        "result_backend": settings.redis_url,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "result_accept_content": ["json"],
        "result_expires": 24 * 3600,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "task_acks_on_failure_or_timeout": True,
        "worker_prefetch_multiplier": 1,
        "task_time_limit": settings.stage_timeout_s,
        "task_soft_time_limit": max(settings.stage_timeout_s - 5, 1),
        "task_default_queue": CPU_QUEUE,
        "task_routes": {
            TASK_PREPARE: {"queue": CPU_QUEUE},
            TASK_GENERATE: {"queue": GPU_QUEUE},
            TASK_FINISH: {"queue": CPU_QUEUE},
            TASK_CALLBACK: {"queue": CPU_QUEUE},
        },
        "broker_transport_options": {
            "visibility_timeout": settings.visibility_timeout_s,
            # Look for messages past their visibility timeout every 5 s (kombu's default is every 100 s),
            # so a killed worker's stages come back visibility_timeout_s + 5 s after they were taken.
            "unacked_restore_interval": 5,
            "unacked_restore_throttle": 1,
            "unacked_mutex_expire": 30,
            "priority_steps": PRIORITY_STEPS,
            "sep": _PRIORITY_SEP,
            "queue_order_strategy": "priority",
        },
        "result_backend_transport_options": {"visibility_timeout": settings.visibility_timeout_s},
        "broker_connection_retry_on_startup": True,
        "worker_hijack_root_logger": False,
        "task_track_started": False,
    }


def make_celery(settings: ServiceSettings, *, name: str = "choreo") -> Celery:
    """A Celery app with the shared configuration and no tasks of its own."""
    app = Celery(name)
    app.conf.update(celery_config(settings))
    return app


STAGES = (TASK_PREPARE, TASK_GENERATE, TASK_FINISH)
"""A job's stages in order."""


def broker_priority(priority: int, stage: str) -> int:
    """The Redis transport's priority (0 is served first) of a job's stage.

    A job's later stages go before every job's first stage, so an album's
    first songs finish while the rest queue: ``finish`` (sharing the CPU queue
    with ``prepare``) always takes step 0; ``prepare`` and ``generate`` take
    steps 1-9 by the job's priority (9, the most urgent, is step 1).
    """
    if stage == TASK_FINISH:
        return 0
    return 1 + (9 - priority) * 8 // 9


def enqueue_job(app: Celery, job: JobRecord, *, first_stage: str = TASK_PREPARE) -> str:
    """Send the job's stages from ``first_stage`` on as one chain; returns the chain's last task id.

    Call only after the job record is written, so a worker never finds no record.
    The rebuild starts a job that was in flight again from the stage it was in.
    The blend synthesizer's jobs have no GPU stage: ``prepare`` plans and makes their dance.
    """
    queues = {TASK_PREPARE: CPU_QUEUE, TASK_GENERATE: GPU_QUEUE, TASK_FINISH: CPU_QUEUE}
    steps = [
        app.signature(
            name,
            args=(job.id,),
            queue=queues[name],
            priority=broker_priority(job.priority, name),
            immutable=True,
        )
        for name in STAGES[STAGES.index(first_stage) :]
        if not (name == TASK_GENERATE and job.options.synth == "blend")  # the blend is made in prepare
    ]
    return chain(*steps).apply_async().id


def enqueue_callback(app: Celery, url: str, payload: dict[str, Any], team: str) -> None:
    """Ask a CPU worker to POST ``payload`` to ``url``, signed with ``team``'s secret, and retried."""
    app.send_task(TASK_CALLBACK, args=(url, payload, team), queue=CPU_QUEUE)


def queue_depths(app: Celery) -> dict[str, int]:
    """Messages waiting in each queue, all priorities together."""
    depths: dict[str, int] = {}
    with app.connection_for_read() as conn:
        client = conn.default_channel.client
        for queue in (CPU_QUEUE, GPU_QUEUE):
            names = [queue] + [f"{queue}{_PRIORITY_SEP}{p}" for p in PRIORITY_STEPS if p]
            depths[queue] = sum(int(client.llen(n)) for n in names)
    return depths
