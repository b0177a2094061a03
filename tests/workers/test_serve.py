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


def test_serve_freezes_what_it_built_and_spaces_full_collections(tmp_path):
    """``grimoire serve`` hands uvicorn a process whose start-up objects are out of the garbage collector's
    reach and whose full collections are ten times rarer than CPython's default (service/cli.py: their pauses
    were the p99 of live delivery, issue 18). Against either being dropped from the serve path."""
    probe = ("import gc, sys, uvicorn\n"
             "uvicorn.Server.run = lambda self, sockets=None: print(gc.get_freeze_count(), *gc.get_threshold())\n"
             "from service.cli import main\n"
             "sys.exit(main(['serve', '--port', '0']))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "QUEUE_REDIS_URL")}
    env.update(GRIMOIRE_DATA_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", probe], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    frozen, youngest, middle, full = map(int, done.stdout.split())
    assert frozen > 100_000  # the schema, the games and the libraries
    assert (youngest, middle, full) == (700, 10, 100)
