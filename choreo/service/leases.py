"""Per-stage leases: which worker runs a job's stage now, and which message may run it.

Each job in flight has a *run* record in Redis (``run:<job>``, a hash):

- ``stage``: the stage due (``queued``: its message waits in a queue) or running
  (``taken``: a worker took the message and holds the lease);
- ``epoch``: the fencing number of the messages that may run it. Every enqueue
  (a submit, the rebuild, the reaper) takes a new, larger epoch, so a message of
  an older epoch (a redelivery of a dead worker's message, a slow old holder's
  successor) finds itself stale and does nothing;
- ``token``, ``holder`` (host and pid) and ``taken_at`` of the holder, or
  ``queued_at`` (Redis server time) while it waits, and ``requeues:<stage>``,
  how often the reaper gave that stage out again.

A worker that takes a stage also sets ``lease:<job>`` to its token with a short
TTL (``CHOREO_LEASE_TTL_S``) and renews it from a heartbeat thread every third
of that while the stage runs, and at most for ``CHOREO_STAGE_TIMEOUT_S``: a
SIGKILLed or frozen worker, and a stage hung past its time limit (which a
threads pool cannot kill), lose the lease within one TTL. Taken stages are
listed in the sorted set ``leased`` and queued ones in ``queued`` (by
``queued_at``), which the reaper (:mod:`choreo.service.reaper`) reads: a taken
stage without a lease is lost; a queued one is not, however long it waits,
unless the broker holds its message nowhere. A stage that ends hands the run
on to the next stage as ``queued`` before that stage's message is sent, so
between stages a job is never "taken without a lease".

Every change is one Lua script, so a take, a hand-off and a reap never
interleave. These records live in Redis only: they describe messages, which
live in Redis too; the job's record in storage is not touched here.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal, cast

from choreo.service.context import ServiceContext
from choreo.service.records import now_s

__all__ = [
    "Lease",
    "Run",
    "Taken",
    "claim_lost",
    "claim_unsent",
    "clear_run",
    "holder_id",
    "lost_jobs",
    "mark_requeued",
    "new_epoch",
    "queue_run",
    "read_run",
    "start_run",
    "take",
    "unlist",
    "waiting_since",
]

log = logging.getLogger(__name__)

RUN_TTL_S = 7 * 24 * 3600
"""A run record outlives any job in flight; one of a job that ended while queued expires."""

# Every script gets KEYS = run record, lease, the ``leased`` set, the ``queued`` set (+ its own extra key).
_QUEUED_NOW = """
local function queued_now(job)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
  redis.call('HSET', KEYS[1], 'status', 'queued', 'queued_at', tostring(now))
  redis.call('HDEL', KEYS[1], 'token', 'holder', 'taken_at')
  redis.call('ZADD', KEYS[4], now, job)
end
"""

_TAKE = """
local stage, status, epoch = unpack(redis.call('HMGET', KEYS[1], 'stage', 'status', 'epoch'))
epoch = tonumber(epoch) or 0
local wanted = tonumber(ARGV[2])
if stage then
  if wanted and wanted < epoch then return {'stale', stage, status, tostring(epoch)} end
  if stage ~= ARGV[1] then return {'other', stage, status, tostring(epoch)} end
  if status == 'taken' and redis.call('EXISTS', KEYS[2]) == 1 then
    return {'held', stage, status, tostring(epoch)}
  end
end
if wanted and wanted > epoch then epoch = wanted end
redis.call('HSET', KEYS[1], 'stage', ARGV[1], 'status', 'taken', 'epoch', epoch,
           'token', ARGV[3], 'holder', ARGV[4], 'taken_at', ARGV[6])
redis.call('HDEL', KEYS[1], 'queued_at')
redis.call('EXPIRE', KEYS[1], ARGV[8])
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[5])
redis.call('ZADD', KEYS[3], ARGV[6], ARGV[7])
redis.call('ZREM', KEYS[4], ARGV[7])
return {'taken', ARGV[1], 'taken', tostring(epoch)}
"""

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

_HAND_OFF = (
    _QUEUED_NOW
    + """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[3])
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[4], ARGV[3])
else
  redis.call('HSET', KEYS[1], 'stage', ARGV[2])
  queued_now(ARGV[3])
  redis.call('EXPIRE', KEYS[1], ARGV[4])
end
return 1
"""
)

_QUEUE = (
    _QUEUED_NOW
    + """
local epoch = redis.call('INCR', KEYS[5])
redis.call('HSET', KEYS[1], 'stage', ARGV[1], 'epoch', epoch)
queued_now(ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[2])
return epoch
"""
)

_START = (
    _QUEUED_NOW
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
local raw = redis.call('GET', KEYS[6])
if not raw or cjson.decode(raw)['state'] ~= 'queued' then return false end
"""
    + _QUEUE.removeprefix(_QUEUED_NOW)
)

_CLAIM_LOST = """
local status, epoch, stage = unpack(redis.call('HMGET', KEYS[1], 'status', 'epoch', 'stage'))
if status ~= 'taken' or epoch ~= ARGV[1] or redis.call('EXISTS', KEYS[2]) == 1 then return false end
if not redis.call('SET', KEYS[5], '1', 'NX', 'EX', ARGV[2]) then return false end
return redis.call('HINCRBY', KEYS[1], 'requeues:' .. stage, 1)
"""

_CLAIM_UNSENT = """
local status, epoch = unpack(redis.call('HMGET', KEYS[1], 'status', 'epoch'))
if status ~= 'queued' or epoch ~= ARGV[1] then return 0 end
if not redis.call('SET', KEYS[5], '1', 'NX', 'EX', ARGV[2]) then return 0 end
return 1
"""

_REQUEUED = (
    _QUEUED_NOW
    + """
local status, epoch = unpack(redis.call('HMGET', KEYS[1], 'status', 'epoch'))
if status ~= ARGV[4] or epoch ~= ARGV[1] then return 0 end
if status == 'taken' and redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'epoch', ARGV[2])
queued_now(ARGV[3])
redis.call('ZREM', KEYS[3], ARGV[3])
return 1
"""
)

_CLEAR = """
local status, epoch = unpack(redis.call('HMGET', KEYS[1], 'status', 'epoch'))
if status and epoch ~= ARGV[1] then return 0 end
if status == 'taken' and redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[2])
redis.call('DEL', KEYS[1])
return 1
"""

_UNLIST = """
if redis.call('HGET', KEYS[1], 'status') ~= 'taken' then return redis.call('ZREM', KEYS[3], ARGV[1]) end
return 0
"""

_CLAIM_S = 60
"""How long a reaper's claim on one lost stage lasts; one that died meanwhile lets the next sweep retry."""


def _keys(ctx: ServiceContext, job_id: str) -> list[str]:
    return [ctx.key("run", job_id), ctx.key("lease", job_id), ctx.key("leased"), ctx.key("queued")]


def holder_id() -> str:
    """This process: ``host:pid``, what a run record names as its holder."""
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class Run:
    """A job's run record as read: the stage due or running, its state and the holder if taken."""

    stage: str
    status: Literal["queued", "taken"]
    epoch: int
    holder: str | None = None
    token: str | None = None
    taken_at: float | None = None
    queued_at: float | None = None
    requeues: int = 0
    """How often the reaper gave ``stage`` out again."""


def read_run(ctx: ServiceContext, job_id: str) -> Run | None:
    """The job's run record, or None when no stage of it is queued or running (or it predates runs)."""
    raw = cast(dict[str, str], ctx.redis.hgetall(ctx.key("run", job_id)))
    if "stage" not in raw:
        return None
    return Run(
        stage=raw["stage"],
        status="taken" if raw.get("status") == "taken" else "queued",
        epoch=int(raw.get("epoch") or 0),
        holder=raw.get("holder"),
        token=raw.get("token"),
        taken_at=float(raw["taken_at"]) if raw.get("taken_at") else None,
        queued_at=float(raw["queued_at"]) if raw.get("queued_at") else None,
        requeues=int(raw.get(f"requeues:{raw['stage']}") or 0),
    )


def new_epoch(ctx: ServiceContext) -> int:
    """A fencing number larger than every one given before (in this Redis)."""
    return int(ctx.redis.incr(ctx.key("epoch")))


def queue_run(ctx: ServiceContext, job_id: str, stage: str) -> int:
    """Record that ``stage`` of the job is queued under a new epoch; returns the epoch to send it with.

    Supersedes whatever ran: a holder of an older epoch loses its lease (its
    hand-off fails and it sends nothing on), and older messages become stale.
    """
    keys = [*_keys(ctx, job_id), ctx.key("epoch")]
    return int(cast(int, ctx.redis.eval(_QUEUE, 5, *keys, stage, job_id, RUN_TTL_S)))


def start_run(ctx: ServiceContext, job_id: str, stage: str) -> int | None:
    """Queue ``stage`` as the job's first run, as :func:`queue_run` does, unless it was ever started.

    The job was never started when its index entry says ``queued`` and it has no run record: a
    job just recorded, or one a submission recorded before it was refused (storage or Redis away
    mid-album), which the submission made again finds through its dedup claim. One script, so of
    any number of submissions that find the job at once one starts it. Returns the epoch to send
    the stage with, or None when the job was started before (or has ended, or is not indexed).
    """
    keys = [*_keys(ctx, job_id), ctx.key("epoch"), ctx.key("job", job_id)]
    epoch = ctx.redis.eval(_START, 6, *keys, stage, job_id, RUN_TTL_S)
    return None if epoch is None else int(cast(int, epoch))


class Lease:
    """A stage a worker holds: renewed by :meth:`heartbeat`, ended by :meth:`hand_off`."""

    def __init__(self, ctx: ServiceContext, job_id: str, stage: str, token: str, epoch: int) -> None:
        self.ctx, self.job_id, self.stage, self.token, self.epoch = ctx, job_id, stage, token, epoch
        self.ttl_ms = max(int(ctx.settings.lease_ttl_s * 1000), 1)

    def holds(self) -> bool:
        """Whether this holder still has the lease (False once it lapsed or the stage was given out again)."""
        return bool(self.ctx.redis.get(self.ctx.key("lease", self.job_id)) == self.token)

    def renew(self) -> bool:
        """Push the lease's expiry one TTL on; False when it is no longer this holder's."""
        key = self.ctx.key("lease", self.job_id)
        return bool(self.ctx.redis.eval(_RENEW, 1, key, self.token, self.ttl_ms))

    def hand_off(self, next_stage: str | None) -> bool:
        """End this stage: the run goes on as ``next_stage`` queued (None: the run ends).

        Call before sending ``next_stage``'s message, so the job is never taken
        without a lease in between. Returns False, changing nothing, when the
        lease is no longer this holder's: the stage was given out again and the
        new holder's run goes on, not this one.
        """
        ok = self.ctx.redis.eval(
            _HAND_OFF, 4, *_keys(self.ctx, self.job_id), self.token, next_stage or "", self.job_id, RUN_TTL_S
        )
        return bool(ok)

    def requeue(self) -> bool:
        """Give the stage back as queued (its retry is published next): the lease goes, the epoch stays."""
        return self.hand_off(self.stage)

    def release(self) -> bool:
        """End the run: the job ended, or the stage found nothing to do."""
        return self.hand_off(None)

    @contextmanager
    def heartbeat(self, *, limit_s: float) -> Iterator[None]:
        """Renew the lease every third of its TTL while the block runs, for at most ``limit_s``.

        After ``limit_s`` the lease is left to lapse, so a stage hung past its
        time limit (a threads pool cannot kill it) is given out again by the
        reaper, as if its worker had died.
        """
        stop = threading.Event()
        thread = threading.Thread(
            target=self._beat, args=(stop, limit_s), name=f"lease-{self.job_id}", daemon=True
        )
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=5)

    def _beat(self, stop: threading.Event, limit_s: float) -> None:
        started = time.monotonic()
        while not stop.wait(self.ttl_ms / 3000):
            if time.monotonic() - started > limit_s:
                log.warning(
                    "job %s: %s ran past %.0f s; its lease is left to lapse", self.job_id, self.stage, limit_s
                )
                return
            try:
                if not self.renew():
                    log.warning("job %s: %s lost its lease", self.job_id, self.stage)
                    return
            except Exception as exc:  # noqa: BLE001 - Redis away for a moment; the next beat tries again
                log.warning("job %s: could not renew the lease of %s: %s", self.job_id, self.stage, exc)


@dataclass(frozen=True)
class Taken:
    """What :func:`take` found: the lease when this message may run the stage, else why not.

    ``verdict``: ``taken``; ``held`` (another live holder runs it); ``stale`` (a
    newer epoch was enqueued); ``other`` (the run is at another stage, ``stage``).
    """

    verdict: Literal["taken", "held", "stale", "other"]
    stage: str
    status: str
    epoch: int
    lease: Lease | None = None


def take(ctx: ServiceContext, job_id: str, stage: str, epoch: int | None) -> Taken:
    """Take the lease of ``stage`` for a message of ``epoch`` (None: a message of any epoch).

    It is taken when the run is at that stage, queued or lost (taken, lease
    gone), and the message is not older than the run's epoch; a job without a
    run record (a stage called directly, or a message older than runs) gets one.
    """
    token = f"{holder_id()}:{secrets.token_hex(6)}"
    ttl_ms = max(int(ctx.settings.lease_ttl_s * 1000), 1)
    answer = cast(
        list[str],
        ctx.redis.eval(
            _TAKE,
            4,
            *_keys(ctx, job_id),
            stage,
            "" if epoch is None else str(epoch),
            token,
            holder_id(),
            ttl_ms,
            now_s(),
            job_id,
            RUN_TTL_S,
        ),
    )
    verdict, run_stage, status, run_epoch = answer[0], answer[1], answer[2] or "", int(answer[3])
    lease = Lease(ctx, job_id, stage, token, run_epoch) if verdict == "taken" else None
    return Taken(
        verdict=cast(Literal["taken", "held", "stale", "other"], verdict),
        stage=run_stage,
        status=status,
        epoch=run_epoch,
        lease=lease,
    )


# -- what the reaper reads and writes (its decisions are in choreo.service.reaper) ------------------------
def lost_jobs(ctx: ServiceContext) -> list[str]:
    """Jobs whose stage was taken and whose lease is gone: their holder died, froze or overran."""
    ids = cast(list[str], ctx.redis.zrange(ctx.key("leased"), 0, -1))
    if not ids:
        return []
    pipe = ctx.redis.pipeline(transaction=False)
    for job_id in ids:
        pipe.exists(ctx.key("lease", job_id))
    return [job_id for job_id, alive in zip(ids, pipe.execute(), strict=True) if not alive]


def claim_lost(ctx: ServiceContext, job_id: str, run: Run) -> int | None:
    """Claim the lost ``run`` for one reaper; returns how often its stage was lost now, or None.

    None when it is no longer lost as read (taken again, handed on, re-enqueued)
    or another reaper claimed it.
    """
    keys = [*_keys(ctx, job_id), ctx.key("reaping", job_id, str(run.epoch))]
    count = ctx.redis.eval(_CLAIM_LOST, 5, *keys, str(run.epoch), _CLAIM_S)
    return None if count is None else int(cast(int, count))


def waiting_since(ctx: ServiceContext, before_s: float) -> list[str]:
    """Jobs whose stage has been queued since before ``before_s`` (Redis server time, epoch seconds)."""
    return cast(list[str], ctx.redis.zrangebyscore(ctx.key("queued"), "-inf", before_s))


def claim_unsent(ctx: ServiceContext, job_id: str, run: Run) -> bool:
    """Claim a queued ``run`` whose message the broker does not hold, for one reaper (if still as read)."""
    keys = [*_keys(ctx, job_id), ctx.key("resending", job_id, str(run.epoch))]
    return bool(ctx.redis.eval(_CLAIM_UNSENT, 5, *keys, str(run.epoch), _CLAIM_S))


def mark_requeued(ctx: ServiceContext, job_id: str, run: Run, new_epoch: int) -> bool:
    """After its message of ``new_epoch`` was sent: the stage is queued under that epoch, unless the
    run changed meanwhile (a message took it, which is as good)."""
    args = (str(run.epoch), str(new_epoch), job_id, run.status)
    return bool(ctx.redis.eval(_REQUEUED, 4, *_keys(ctx, job_id), *args))


def unlist(ctx: ServiceContext, job_id: str) -> None:
    """Drop a ``leased`` entry left behind by a run that is not taken (any more)."""
    ctx.redis.eval(_UNLIST, 4, *_keys(ctx, job_id), job_id)


def clear_run(ctx: ServiceContext, job_id: str, run: Run | None) -> bool:
    """Drop the run of a job that ended or is gone, if it is still as read and not held."""
    return bool(ctx.redis.eval(_CLEAR, 4, *_keys(ctx, job_id), str(run.epoch) if run else "", job_id))
