"""The Celery configuration and enqueueing by task name.

The API imports this module, never the tasks: it sends a job's first stage by
name, so it needs neither the engines nor the pipeline; each stage, when it
ends, sends the next (``choreo.prepare`` → ``choreo.perform`` →
``choreo.finish``, :func:`stage_after`); ``perform`` goes to the queue of the
job's synthesizer (:data:`PERFORM_QUEUES`: the blend on CPU workers, the network
on GPU workers). Every message carries the job id and
the epoch of its run (:mod:`choreo.service.leases`). The workers build their
app from the same :func:`celery_config`.
"""

from __future__ import annotations

import base64
import json
from typing import Any, cast

from celery import Celery

from choreo.contracts.choices import Synth
from choreo.service.context import ServiceContext
from choreo.service.leases import queue_run, start_run
from choreo.service.records import JobRecord
from choreo.service.settings import ServiceSettings

__all__ = [
    "CPU_QUEUE",
    "GPU_QUEUE",
    "PRIORITY_STEPS",
    "TASK_CALLBACK",
    "TASK_FINISH",
    "PERFORM_QUEUES",
    "TASK_PERFORM",
    "TASK_PREPARE",
    "STAGES",
    "broker_messages",
    "broker_priority",
    "celery_config",
    "enqueue_callback",
    "enqueue_job",
    "enqueue_unsent",
    "make_celery",
    "queue_depths",
    "send_stage",
    "stage_after",
    "stage_queue",
]

CPU_QUEUE = "cpu"
GPU_QUEUE = "gpu"
TASK_PREPARE = "choreo.prepare"
TASK_PERFORM = "choreo.perform"
TASK_FINISH = "choreo.finish"
TASK_CALLBACK = "choreo.callback"
PRIORITY_STEPS = list(range(10))
_PRIORITY_SEP = ":"


def celery_config(settings: ServiceSettings) -> dict[str, Any]:
    """Broker and delivery guarantees shared by the API and every worker (no result backend)."""
    return {
        "broker_url": settings.redis_url,
        # Nothing reads a task's return value (stages hand on through Redis and storage): with a
        # result backend every task left a result in Redis for a day (the soak counted them).
        "task_ignore_result": True,
        "task_serializer": "json",
        "accept_content": ["json"],
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "task_acks_on_failure_or_timeout": True,
        "worker_prefetch_multiplier": 1,
        "task_time_limit": settings.stage_timeout_s,
        "task_soft_time_limit": max(settings.stage_timeout_s - 5, 1),
        "task_default_queue": CPU_QUEUE,
        "task_routes": {
            TASK_PREPARE: {"queue": CPU_QUEUE},
            TASK_FINISH: {"queue": CPU_QUEUE},
            TASK_CALLBACK: {"queue": CPU_QUEUE},
        },
        "broker_transport_options": {
            "visibility_timeout": settings.visibility_timeout_s,
            # The backstop behind the leases (choreo.service.reaper says what each covers): look for
            # messages past their visibility timeout every 5 s (kombu's default is every 100 s).
            "unacked_restore_interval": 5,
            "unacked_restore_throttle": 1,
            "unacked_mutex_expire": 30,
            "priority_steps": PRIORITY_STEPS,
            "sep": _PRIORITY_SEP,
            "queue_order_strategy": "priority",
        },
        "broker_connection_retry_on_startup": True,
        # After a lost broker connection Celery lowers the prefetch count by the tasks still running
        # and raises it again only as tasks received after the reconnect are acknowledged; with one
        # message per thread there is nothing to over-fetch, and a CI run saw both CPU workers take
        # nothing for minutes after Redis was SIGKILLed and restarted under load.
        "worker_enable_prefetch_count_reduction": False,
        "worker_hijack_root_logger": False,
        "task_track_started": False,
    }


def make_celery(settings: ServiceSettings, *, name: str = "choreo") -> Celery:
    """A Celery app with the shared configuration and no tasks of its own."""
    app = Celery(name)
    app.conf.update(celery_config(settings))
    return app


STAGES = (TASK_PREPARE, TASK_PERFORM, TASK_FINISH)
"""A job's stages in order."""


def broker_priority(priority: int, stage: str, queue: str = CPU_QUEUE) -> int:
    """The Redis transport's priority (0 is served first) of a job's stage on ``queue``.

    A job's later stages go before every job's first stage, so an album's first
    songs finish while the rest queue: on the CPU queue ``perform`` (a blend's)
    and ``finish`` always take step 0; ``prepare``, and ``perform`` on the GPU
    queue (where it is the only stage), take steps 1-9 by the job's priority (9,
    the most urgent, is step 1).
    """
    if stage != TASK_PREPARE and queue == CPU_QUEUE:
        return 0
    return 1 + (9 - priority) * 8 // 9


PERFORM_QUEUES: dict[Synth, str] = {"blend": CPU_QUEUE, "model": GPU_QUEUE}
"""Where each synthesizer's ``perform`` runs: the blend on a CPU worker, the network on a GPU worker."""


def stage_queue(job: JobRecord, stage: str) -> str:
    """The queue a stage of this job goes to."""
    return PERFORM_QUEUES[job.options.synth] if stage == TASK_PERFORM else CPU_QUEUE


def stage_after(job: JobRecord, stage: str) -> str | None:
    """The stage that follows ``stage`` for this job, or None after the last (or for another task)."""
    if stage not in STAGES or stage == STAGES[-1]:
        return None
    return STAGES[STAGES.index(stage) + 1]


def send_stage(app: Celery, job: JobRecord, stage: str, epoch: int) -> None:
    """Send one stage of the job to its queue, at its priority, as a message of run ``epoch``."""
    queue = stage_queue(job, stage)
    app.send_task(
        stage, args=(job.id, epoch), queue=queue, priority=broker_priority(job.priority, stage, queue)
    )


def enqueue_job(ctx: ServiceContext, app: Celery, job: JobRecord, *, first_stage: str = TASK_PREPARE) -> int:
    """Start the job's run at ``first_stage`` under a new epoch and send that stage; returns the epoch.

    Call only after the job record is written, so a worker never finds no record.
    The rebuild starts a job that was in flight again from the stage it was in;
    a run started here supersedes any older one of the job (its messages go stale).
    """
    epoch = queue_run(ctx, job.id, first_stage)
    send_stage(app, job, first_stage, epoch)
    return epoch


def enqueue_unsent(ctx: ServiceContext, app: Celery, job: JobRecord) -> int | None:
    """Send the job's first stage unless it was ever sent (:func:`choreo.service.leases.start_run`).

    What a submission calls for each of its jobs, new or found by dedup: a job an earlier
    submission recorded and could not send (refused with a 503 after it) is sent now, and one
    already sent is left alone. Returns the epoch sent with, or None when nothing was sent.
    """
    epoch = start_run(ctx, job.id, TASK_PREPARE)
    if epoch is not None:
        send_stage(app, job, TASK_PREPARE, epoch)
    return epoch


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


def broker_messages(ctx: ServiceContext, app: Celery) -> set[tuple[str, str]]:
    """(stage, job id) of every stage message the broker holds: waiting in a queue, or handed to a
    worker and not acknowledged yet (kombu's ``unacked`` hash, which the visibility timeout restores)."""
    prefix = app.conf.broker_transport_options.get("global_keyprefix", "")
    pipe = ctx.redis.pipeline(transaction=False)
    for queue in (CPU_QUEUE, GPU_QUEUE):
        for name in [queue] + [f"{queue}{_PRIORITY_SEP}{p}" for p in PRIORITY_STEPS if p]:
            pipe.lrange(f"{prefix}{name}", 0, -1)
    pipe.hvals(f"{prefix}unacked")
    *lists, unacked = pipe.execute()
    raws = [json.loads(raw) for queued in lists for raw in queued]
    raws += [json.loads(raw)[0] for raw in cast(list[str], unacked)]
    found = set()
    for message in raws:
        name = message.get("headers", {}).get("task")
        if name in STAGES:
            args = json.loads(base64.b64decode(message["body"]))[0]
            found.add((name, str(args[0])))
    return found
