"""One command: ``grimoire serve`` with no REDIS_URL starts an embedded Redis and a worker,
and a match of bots plays itself to the end."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx

from service.store.embedded import free_port
from tests.workers.conftest import ROOT


def test_serve_without_redis_runs_a_worker(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "QUEUE_REDIS_URL")}
    env.update(GRIMOIRE_DATA_DIR=str(tmp_path), GRIMOIRE_PORT=str(port), PYTHONPATH=str(ROOT))
    server = subprocess.Popen([sys.executable, "-m", "service.cli", "serve"], env=env, cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "serve did not start"
            time.sleep(0.2)
        created = httpx.post(f"{base}/v1/matches", json={
            "game": "casting-stones", "seed": 1, "bots": [{"seat": 0, "level": "greedy"}, {"seat": 1, "level": "random"}]})
        assert created.status_code == 201, created.text
        match_id = created.json()["id"]
        deadline = time.monotonic() + 60
        while (match := httpx.get(f"{base}/v1/matches/{match_id}").json())["status"] != "finished":
            assert time.monotonic() < deadline, f"the bots did not finish: {match['version']}"
            time.sleep(0.3)
        assert match["result"] is not None
    finally:
        server.terminate()
        server.wait(timeout=20)
