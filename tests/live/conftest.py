"""Two real service processes on one Redis, as behind a load balancer."""

import os
import subprocess
import sys
import time

import httpx
import pytest
from service.store.embedded import free_port


def start_service(redis_url: str, key_prefix: str, **env) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "service.app:create_app", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning"],
        env={**os.environ, "REDIS_URL": redis_url, "GRIMOIRE_KEY_PREFIX": key_prefix,
             "GRIMOIRE_STREAM_KEEPALIVE": "1", "GRIMOIRE_RATE_LIMIT_PER_TOKEN": "0",
             "GRIMOIRE_RATE_LIMIT_PER_ADDRESS": "0", **env},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError("service process did not start")
        time.sleep(0.1)


@pytest.fixture(scope="session")
def two_services(redis_url, key_prefix):
    started = [start_service(redis_url, key_prefix) for _ in range(2)]
    yield [url for _, url in started]
    for process, _ in started:
        process.terminate()
        process.wait(timeout=10)
