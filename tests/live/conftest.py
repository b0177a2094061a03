"""Two real service processes on one Redis, as behind a load balancer."""

import os
import subprocess
import sys

import pytest
from service.store.embedded import free_port
from tests.support.processes import wait_ready


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
    try:
        wait_ready(url, process, timeout=20)
    except RuntimeError:
        process.kill()
        raise
    return process, url


@pytest.fixture(scope="session")
def two_services(redis_url, key_prefix):
    started = [start_service(redis_url, key_prefix) for _ in range(2)]
    yield [url for _, url in started]
    for process, _ in started:
        process.terminate()
        process.wait(timeout=10)
