"""Fixtures for the worker tests: ``grimoire worker`` subprocesses (the
in-process ``drain`` worker and the RQ connection are in tests/conftest.py)."""

from __future__ import annotations

import subprocess
import time

import pytest
from rq import Queue

from service.store.embedded import stop_process
from tests.support.processes import ROOT, start_worker  # noqa: F401 (ROOT: test_serve.py takes it from here)
from workers.dispatch import _safe, queue_names


@pytest.fixture(autouse=True)
def empty_queues(rq_connection, key_prefix):
    """Each worker test starts with the session's queues, scheduled timers and bot-move notes empty: jobs
    that another test left (a match with bots it never drained) would be played by this test's ``drain``,
    counted by its assertions, and swept by its watchdog."""
    for name in queue_names(key_prefix).values():
        queue = Queue(name, connection=rq_connection)
        queue.empty()
        for job_id in queue.scheduled_job_registry.get_job_ids():
            queue.scheduled_job_registry.remove(job_id, delete_job=True)
    rq_connection.delete(f"{key_prefix}:bots:pending", f"{key_prefix}:bots:attempts")


@pytest.fixture
def spawn_worker(redis_url, key_prefix):
    """Start ``grimoire worker`` subprocesses (env overrides as keyword arguments); killed at the end."""
    processes: list[subprocess.Popen] = []

    def spawn(**env) -> subprocess.Popen:
        name = f"{_safe(key_prefix)}-sub-{len(processes)}-{time.monotonic_ns()}"
        process = start_worker(name, **{"REDIS_URL": redis_url, "GRIMOIRE_KEY_PREFIX": key_prefix, **env})
        processes.append(process)
        return process

    yield spawn
    for process in processes:
        stop_process(process)  # SIGTERM first: RQ's warm shutdown releases its scheduler locks
