"""Fixtures for the worker tests: ``grimoire worker`` subprocesses (the
in-process ``drain`` worker and the RQ connection are in tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from service.store.embedded import stop_process
from workers.dispatch import _safe


ROOT = Path(__file__).resolve().parents[2]


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
