"""The client against a running service: ``grimoire serve`` in a child process and a ``grimoire worker`` for
its server bots, on this run's Redis and keyspace (tests/conftest.py). The service can be restarted on its
port mid-test, as an operator would restart it under a bot."""

from __future__ import annotations

import random
import socket
import time
from pathlib import Path

import pytest

from service.store.embedded import stop_process
from tests.support.processes import Service, start_worker
from workers.dispatch import _safe

#: server bots wait this long before each move, so that a match lasts long enough to restart the service in it
BOT_DELAY_MS = 100

#: a service may take this long to start on a loaded machine (half a minute seen with six test runs at once)
READY_TIMEOUT = 120.0


def steady_port() -> int:
    """A free port below the kernel's ephemeral range, for a service that is restarted: in the seconds it
    is unbound, an ephemeral port can be handed to another process's connection or free_port(); this one not."""
    ephemeral = Path("/proc/sys/net/ipv4/ip_local_port_range")
    low = int(ephemeral.read_text().split()[0]) if ephemeral.exists() else 32768
    for _ in range(200):
        port = random.randrange(20000, low)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below the ephemeral range")


class Stack:
    """A service and a worker sharing one Redis and key prefix."""

    def __init__(self, redis_url: str, prefix: str, logs: Path):
        self.redis_url, self.prefix, self.logs = redis_url, prefix, logs
        self.service = Service(redis_url, prefix, logs / "serve.log", port=steady_port(), ready_timeout=READY_TIMEOUT)
        self.worker_log = open(logs / "worker.log", "a")
        self.worker = start_worker(f"{_safe(prefix)}-client-{time.monotonic_ns()}", stderr=self.worker_log,
                                   REDIS_URL=redis_url, GRIMOIRE_KEY_PREFIX=prefix,
                                   GRIMOIRE_BOT_DELAY_MS=BOT_DELAY_MS)
        self.restarts = 0

    @property
    def url(self) -> str:
        return self.service.base

    def restart(self) -> None:
        """Stop the service (SIGTERM: its streams end with ``shutdown``, new connections are refused) and
        start another on the same port and Redis. The worker goes on: server bots play meanwhile."""
        port = self.service.port
        self.service.stop()
        self.service = Service(self.redis_url, self.prefix, self.logs / "serve.log", port=port,
                               ready_timeout=READY_TIMEOUT)
        self.restarts += 1

    def stop(self) -> None:
        stop_process(self.worker)  # SIGTERM first: RQ's warm shutdown releases its scheduler locks
        self.worker_log.close()
        self.service.stop()


@pytest.fixture(scope="session")
def stack(redis_url, key_prefix, rq_connection, tmp_path_factory):
    """The running service and worker, under a key prefix of their own (``<key_prefix>:client``): the
    worker lives for the rest of the session, and on the session's own queues it would play (or fail)
    the bot moves, timers and replays that later tests hand to their in-process ``drain``. The
    session's cleanup deletes its keys, and rq_connection's the RQ keys they make."""
    running = Stack(redis_url, f"{key_prefix}:client", tmp_path_factory.mktemp("client-stack"))
    yield running
    running.stop()
