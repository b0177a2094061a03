"""Service and worker processes started by tests and benchmarks, waiting for them, and reading back what they logged."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from service.store.embedded import free_port, stop_process

ROOT = Path(__file__).resolve().parents[2]
#: how long a started service may take to answer /readyz; the mutation run (tests/mutation/run.py), niced on a
#: loaded machine, sets more
READY_TIMEOUT = float(os.environ.get("GRIMOIRE_TEST_READY_TIMEOUT", "30"))


def wait_ready(url: str, process: subprocess.Popen | None = None, timeout: float = READY_TIMEOUT) -> None:
    """Return once ``url``'s ``/readyz`` answers 200; raise if ``process`` exits or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if (process is not None and process.poll() is not None) or time.monotonic() > deadline:
            raise RuntimeError(f"the service at {url} did not become ready")
        time.sleep(0.1)


class Service:
    """``grimoire serve`` in a child process, no worker of its own, no rate limits; ``env`` adds settings.
    ``port``: a free one when None (a service started again on the port of a stopped one: its restart);
    ``ready_timeout``: how long it may take to answer /readyz (a loaded machine takes half a minute)."""

    def __init__(self, redis_url: str, prefix: str, log_path, port: int | None = None, ready_timeout: float = READY_TIMEOUT,
                 **env):
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(log_path, "a")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--port", str(self.port)],
            env={**os.environ, "REDIS_URL": redis_url, "GRIMOIRE_KEY_PREFIX": prefix,
                 "GRIMOIRE_EMBEDDED_WORKER": "0", "GRIMOIRE_RATE_LIMIT_PER_TOKEN": "0",
                 "GRIMOIRE_RATE_LIMIT_PER_ADDRESS": "0", "GRIMOIRE_LOG_LEVEL": "WARNING",
                 **{k: str(v) for k, v in env.items()}},
            stdout=subprocess.DEVNULL, stderr=self.log)
        wait_ready(self.base, self.process, ready_timeout)

    def stop(self) -> None:
        stop_process(self.process)
        self.log.close()


def start_worker(name: str, stderr=None, **env) -> subprocess.Popen:
    """``grimoire worker --name name`` in a child process; ``env`` (REDIS_URL, ...) on top of this one's.
    Its log goes to ``stderr``, by default this process's, which pytest captures and shows with a failure
    (a pipe nobody reads fills up after 64 KiB of log and then stalls the worker mid-match).
    Stop it with ``stop_process`` (SIGTERM first: RQ's warm shutdown releases its scheduler locks). It leads a
    process group of its own, with the work horse it forks for a job: ``os.killpg(worker.pid, SIGKILL)`` kills
    both, as a machine that dies does (a SIGKILL of the worker alone leaves its horse running, an orphan)."""
    full = dict(os.environ, PYTHONPATH=str(ROOT), **{k: str(v) for k, v in env.items()})
    return subprocess.Popen([sys.executable, "-m", "service.cli", "worker", "--name", name], env=full, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)


def logged_actions(http: httpx.Client, match_id: str, tokens: list[str]) -> dict[int, dict]:
    """Every accepted action of a match by version, read back through the history (each seat sees its own)."""
    actions: dict[int, dict] = {}
    for token in tokens:
        entries = http.get(f"/v1/matches/{match_id}/history", params={"limit": 1000},
                           headers={"Authorization": f"Bearer {token}"}).json()["entries"]
        actions.update({e["version"]: e["action"] for e in entries if e["action"] is not None})
    return actions
