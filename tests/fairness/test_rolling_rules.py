"""A rolling deployment of a rules change, with real processes on one Redis (issue 21, "Rules pinned per match").

Release A is this tree. Release B is a copy of it whose Quidditch is rules version 2 (the change a new
release would ship). Processes of A and B share a Redis, as during a rollout behind one load balancer:

* an action routed to the process without the match's version is refused -- 503
  ``rules_version_unavailable`` with Retry-After -- and nothing is written, either way round;
* a worker of B defers the bot moves of an A match, and a worker of A plays them;
* B with A's Quidditch frozen beside it (``grimoire freeze-rules``, an entry point on its path) plays
  matches of both versions: old versions are installable side by side.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from service.store.embedded import free_port, stop_process
from tests.support.processes import ROOT, wait_ready


class Release:
    """``grimoire serve`` or ``grimoire worker`` run from a code tree (``code``: its ``service`` package wins
    over this checkout's), with extra directories on its path (``extra``: frozen rules versions)."""

    def __init__(self, code: Path, extra: tuple[Path, ...] = ()):
        self.code, self.extra = code, extra

    def env(self, redis_url: str, prefix: str) -> dict:
        path = os.pathsep.join(str(p) for p in (self.code, *self.extra, ROOT))
        return {**os.environ, "PYTHONPATH": path, "REDIS_URL": redis_url, "GRIMOIRE_KEY_PREFIX": prefix,
                "GRIMOIRE_EMBEDDED_WORKER": "0", "GRIMOIRE_RATE_LIMIT_PER_TOKEN": "0",
                "GRIMOIRE_RATE_LIMIT_PER_ADDRESS": "0", "GRIMOIRE_LOG_LEVEL": "WARNING", "GRIMOIRE_LOG_FORMAT": "text"}

    def serve(self, redis_url: str, prefix: str, log: Path) -> tuple[subprocess.Popen, httpx.Client]:
        port = free_port()
        process = subprocess.Popen([sys.executable, "-m", "service.cli", "serve", "--port", str(port)],
                                   cwd=self.code, env=self.env(redis_url, prefix), stdout=subprocess.DEVNULL,
                                   stderr=open(log, "a"))
        base = f"http://127.0.0.1:{port}"
        wait_ready(base, process, 120)
        return process, httpx.Client(base_url=base, timeout=30)

    def worker(self, redis_url: str, prefix: str, log: Path, name: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "service.cli", "worker", "--name", name], cwd=self.code,
                                env=self.env(redis_url, prefix), stdout=subprocess.DEVNULL, stderr=open(log, "a"))


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    """Release A (this tree), release B (Quidditch at rules version 2) and A's Quidditch frozen for B."""
    root = tmp_path_factory.mktemp("releases")
    newer = root / "b"
    shutil.copytree(ROOT / "service", newer / "service", ignore=shutil.ignore_patterns("__pycache__"))
    version_file = newer / "service" / "games" / "quidditch" / "rules_version.json"
    data = json.loads(version_file.read_text())
    data["history"]["2"] = "A rules change rolled out (the test's)."
    data["version"] = "2"
    version_file.write_text(json.dumps(data))
    frozen = root / "frozen"
    made = subprocess.run([sys.executable, "-m", "service.cli", "freeze-rules", "quidditch", str(frozen)], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    assert (frozen / "grimoire_rules_quidditch_1" / "rules_version.json").exists()
    return {"a": Release(ROOT), "b": Release(newer), "b+a": Release(newer, (frozen,))}


def _raw(redis_url: str, prefix: str, match_id: str) -> tuple:
    import redis

    client = redis.Redis.from_url(redis_url)
    key = f"{prefix}:m:{{{match_id}}}"
    try:
        return client.hgetall(key), client.xrange(f"{key}:log"), client.get(f"{key}:log:z")
    finally:
        client.close()


def _seated(http: httpx.Client, **body) -> tuple[dict, list[str]]:
    match = http.post("/v1/matches", json={"game": "quidditch", **body}).json()
    tokens = [http.post(f"/v1/matches/{match['id']}/seats", json={"name": f"P{i}"}).json()["token"]
              for i, seat in enumerate(match["seats"]) if not seat["joined"]]
    return http.get(f"/v1/matches/{match['id']}").json(), tokens


def _act(http: httpx.Client, match_id: str, tokens: list[str]) -> httpx.Response:
    """One legal action of a seat to act, as read through ``http``."""
    match = http.get(f"/v1/matches/{match_id}")
    if match.status_code != 200:
        return match
    match = match.json()
    seat = match["to_act"][0]
    auth = {"Authorization": f"Bearer {tokens[seat]}"}
    legal = http.get(f"/v1/matches/{match_id}/legal-actions", headers=auth).json()["actions"]
    return http.post(f"/v1/matches/{match_id}/actions", json={"action": legal[0]},
                     headers={**auth, "If-Match": f'"{match["version"]}"'})


def _refused(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "1" and response.json()["code"] == "rules_version_unavailable"


def test_a_rules_change_rolls_out_across_processes_sharing_one_redis(releases, redis_url, key_prefix, tmp_path):
    # a keyspace of the test's own (deleted with the session's): its workers take no other test's jobs
    key_prefix = f"{key_prefix}:rolling"
    processes: list[subprocess.Popen] = []
    log = tmp_path / "processes.log"
    try:
        a_process, a = releases["a"].serve(redis_url, key_prefix, log)
        b_process, b = releases["b"].serve(redis_url, key_prefix, log)
        processes += [a_process, b_process]
        assert a.get("/v1/games/quidditch").json()["rules_version"] == "1"
        assert b.get("/v1/games/quidditch").json()["rules_version"] == "2"

        old, old_tokens = _seated(a)
        new, new_tokens = _seated(b)
        assert (old["rules_version"], new["rules_version"]) == ("1", "2")
        for http, match in ((b, old), (a, new)):  # routed to the wrong process: refused, nothing written
            before = _raw(redis_url, key_prefix, match["id"])
            _refused(http.get(f"/v1/matches/{match['id']}"))
            seat = match["to_act"][0]
            tokens = old_tokens if match is old else new_tokens
            _refused(http.post(f"/v1/matches/{match['id']}/actions", json={"action": {"type": "pass"}},
                               headers={"Authorization": f"Bearer {tokens[seat]}", "If-Match": '"0"'}))
            _refused(http.get(f"/v1/matches/{match['id']}/record"))
            assert _raw(redis_url, key_prefix, match["id"]) == before
        assert _act(a, old["id"], old_tokens).status_code == 200  # each version's own process plays it
        assert _act(b, new["id"], new_tokens).status_code == 200

        # workers: B's defers a bot move of an A match; A's plays it
        botted, _ = _seated(a, bots=[{"seat": 1, "level": "random"}])
        assert botted["status"] == "active"
        workers_log = tmp_path / "workers.log"
        b_worker = releases["b"].worker(redis_url, key_prefix, workers_log, f"{key_prefix}-rules-b")
        processes.append(b_worker)
        deadline = time.monotonic() + 120
        while "rules version" not in workers_log.read_text() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert "which this worker lacks" in workers_log.read_text() and "deferred" in workers_log.read_text()
        time.sleep(3)  # a deferral or two later, still untouched
        assert a.get(f"/v1/matches/{botted['id']}").json()["version"] == botted["version"]
        stop_process(b_worker)
        processes.append(releases["a"].worker(redis_url, key_prefix, workers_log, f"{key_prefix}-rules-a"))
        deadline = time.monotonic() + 120
        while a.get(f"/v1/matches/{botted['id']}").json()["version"] == botted["version"]:
            assert time.monotonic() < deadline, "a worker with the version never played the bot's move"
            time.sleep(0.5)

        # B with A's Quidditch frozen beside it plays both versions
        stop_process(b_process)
        both_process, both = releases["b+a"].serve(redis_url, key_prefix, log)
        processes.append(both_process)
        assert both.get("/v1/games/quidditch").json()["rules_version"] == "2"  # new matches get the new rules
        assert both.post("/v1/matches", json={"game": "quidditch"}).json()["rules_version"] == "2"
        for match, tokens in ((old, old_tokens), (new, new_tokens)):
            assert _act(both, match["id"], tokens).status_code == 200, match["rules_version"]
            assert both.get(f"/v1/matches/{match['id']}").json()["rules_version"] == match["rules_version"]
    finally:
        for process in processes:
            stop_process(process)
