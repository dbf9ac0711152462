"""A ``redis-server`` of one's own on a free loopback port, that a fault can kill and restart.

Append-only with ``appendfsync everysec`` by default, as compose runs Redis: a restart brings back
every write it acknowledged (the file is written before Redis answers; only a dying host loses up to
the last second, which this cannot test).
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import redis

from choreo.errors import ChoreoError

from .localstack import free_ports

__all__ = ["RedisServer"]


class RedisServer:
    """One ``redis-server`` process with its data in ``folder``; ``url`` is its database 0.

    ``fsync`` is the append-only file's ``appendfsync``; ``None`` keeps no file (a bench's scratch Redis,
    which nothing restarts)."""

    def __init__(self, folder: Path, *, fsync: str | None = "everysec") -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.port,) = free_ports(1)
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.command = [
            "redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder),
            "--save", "",
            *(["--appendonly", "yes", "--appendfsync", fsync] if fsync else ["--appendonly", "no"]),
        ]  # fmt: skip
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 30) -> None:
        """Start it (its append-only file brings the data back) and return once it answers."""
        self.proc = subprocess.Popen(self.command, stdout=subprocess.DEVNULL, start_new_session=True)
        client = redis.Redis.from_url(self.url, socket_connect_timeout=2)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if client.ping():
                    if self.proc.poll() is not None:
                        raise ChoreoError(f"another redis-server holds port {self.port}", code="startup")
                    return
            except redis.RedisError:
                time.sleep(0.1)
        raise ChoreoError(f"redis-server on port {self.port} did not answer in {timeout_s} s", code="startup")

    def kill(self) -> None:
        """SIGKILL it, as a crash would, and reap it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
