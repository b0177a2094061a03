"""Waiting for a service process started by a test or a benchmark."""

from __future__ import annotations

import subprocess
import time

import httpx


def wait_ready(url: str, process: subprocess.Popen | None = None, timeout: float = 30.0) -> None:
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
