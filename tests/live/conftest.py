"""Two real service processes on one Redis, as behind a load balancer."""

import asyncio
import os
import subprocess
import sys
import threading
import time

import pytest
import uvicorn

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


class ThreadedServer:
    """A real uvicorn server for ``app`` in a thread of this process, so a test can read the app's
    counters (``app.state``) while clients stream from it; ``stop()`` is a server shutdown (SIGTERM's path)."""

    def __init__(self, app):
        self.app = app
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                                   lifespan="on", timeout_graceful_shutdown=5))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the threaded server did not start")
            time.sleep(0.02)

    def begin_shutdown(self) -> None:
        """What SIGTERM does in ``grimoire serve`` (service/app.py): streams end with "shutdown", then
        the server drains."""

        async def end_then_exit() -> None:
            await self.app.state.live.end_streams()
            self.server.should_exit = True

        asyncio.run_coroutine_threadsafe(end_then_exit(), self.app.state.live._reader.get_loop())

    def stop(self) -> None:
        if not self.thread.is_alive():
            return
        self.begin_shutdown()
        self.thread.join(timeout=20)
        assert not self.thread.is_alive(), "the server did not stop"
