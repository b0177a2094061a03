"""Fixtures for the worker tests: this run's queues (named after its key prefix),
real RQ workers -- in this process (``SimpleWorker.work(burst=True)``) or as
``grimoire worker`` subprocesses -- and the cleanup of every RQ key they made."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from rq import SimpleWorker
from rq.scheduler import RQScheduler

from service.logs import RequestIdJob  # as `grimoire worker` runs jobs
from service.store.embedded import stop_process
from workers import runtime
from workers.dispatch import _safe, queue_names


ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def rq_connection(redis_url, key_prefix):
    connection = redis.Redis.from_url(redis_url)
    yield connection
    for pattern in (f"rq:*{_safe(key_prefix)}*", f"{key_prefix}:*"):
        for key in connection.scan_iter(match=pattern, count=1000):
            connection.delete(key)
    connection.close()


@pytest.fixture(scope="session")
def worker_runtime(settings, games):
    return runtime.configure(settings, games)


@pytest.fixture
def drain(worker_runtime, rq_connection, key_prefix):
    """Run a real RQ worker in this process until the queues are empty; returns the jobs' results."""

    def run(*, scheduler: bool = False) -> None:
        runtime.configure(worker_runtime.settings, worker_runtime.games)
        names = queue_names(key_prefix)
        worker = SimpleWorker([names["bots"], names["timers"], names["replays"]], connection=rq_connection,
                              name=f"{_safe(key_prefix)}-burst-{time.monotonic_ns()}", job_class=RequestIdJob)
        if scheduler:
            # what a worker's scheduler does every second: move the due turn timers to their queue
            # (called directly: a worker killed by another test may hold the scheduler lock for a minute)
            RQScheduler([names["timers"]], connection=rq_connection).enqueue_scheduled_jobs()
        worker.work(burst=True, logging_level="WARNING")

    return run


@pytest.fixture
def spawn_worker(redis_url, key_prefix):
    """Start ``grimoire worker`` subprocesses (env overrides as keyword arguments); killed at the end."""
    processes: list[subprocess.Popen] = []

    def spawn(**env) -> subprocess.Popen:
        full = dict(os.environ, REDIS_URL=redis_url, GRIMOIRE_KEY_PREFIX=key_prefix, PYTHONPATH=str(ROOT),
                    **{k: str(v) for k, v in env.items()})
        name = f"{_safe(key_prefix)}-sub-{len(processes)}-{time.monotonic_ns()}"
        process = subprocess.Popen([sys.executable, "-m", "service.cli", "worker", "--name", name], env=full,
                                   cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        processes.append(process)
        return process

    yield spawn
    for process in processes:
        stop_process(process)  # SIGTERM first: RQ's warm shutdown releases its scheduler locks
