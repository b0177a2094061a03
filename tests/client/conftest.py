"""The client against a running service: ``grimoire serve`` in a child process and a ``grimoire worker`` for
its server bots, on this run's Redis and keyspace (tests/conftest.py). The service can be restarted on its
port mid-test, as an operator would restart it under a bot."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from service.store.embedded import stop_process
from tests.support.processes import Service, start_worker
from workers.dispatch import _safe

#: server bots wait this long before each move, so that a match lasts long enough to restart the service in it
BOT_DELAY_MS = 100


class Stack:
    """A service and a worker sharing one Redis and key prefix."""

    def __init__(self, redis_url: str, prefix: str, logs: Path):
        self.redis_url, self.prefix, self.logs = redis_url, prefix, logs
        self.service = Service(redis_url, prefix, logs / "serve.log")
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
        self.service = Service(self.redis_url, self.prefix, self.logs / "serve.log", port=port)
        self.restarts += 1

    def stop(self) -> None:
        stop_process(self.worker)  # SIGTERM first: RQ's warm shutdown releases its scheduler locks
        self.worker_log.close()
        self.service.stop()


@pytest.fixture(scope="session")
def stack(redis_url, key_prefix, rq_connection, tmp_path_factory):
    """The running service and worker (rq_connection: its cleanup deletes the RQ keys they make)."""
    running = Stack(redis_url, key_prefix, tmp_path_factory.mktemp("client-stack"))
    yield running
    running.stop()
