"""Issue #23, item 12: with ``GRIMOIRE_REPLICA_ACKS`` an action is acknowledged only once a replica has it.

A real master and a real replica (redis-server, ``REPLICAOF``); the replica is frozen (SIGSTOP) so
that it cannot confirm. Then a submission is applied on the master but answered 503 with
Retry-After, on REST and GraphQL, and its Idempotency-Key tells its fate: repeated while the
replica is still frozen it is 503 again (a success now would acknowledge what a failover could
lose), repeated once the replica is back it is the first outcome, and the replica has it. A bot's
move during the freeze is retried by its job and lands exactly once. (On a Redis Cluster, with
failovers: tests/ops/test_failover.py.)
"""

from __future__ import annotations

import dataclasses
import os
import signal
import threading
import time

import pytest
import redis
from starlette.testclient import TestClient

from schema.game_types import screaming
from service.app import create_app
from service.settings import Settings
from service.store.embedded import EmbeddedRedis
from workers import jobs, runtime

GAME = "casting-stones"
WAIT_MS = 300


@pytest.fixture
def pair(tmp_path):
    """A master and its replica, in sync."""
    master = EmbeddedRedis(tmp_path / "master")
    replica = EmbeddedRedis(tmp_path / "replica", persist=False)
    redis.Redis.from_url(replica.url).replicaof("127.0.0.1", master.port)
    deadline = time.monotonic() + 10
    while redis.Redis.from_url(replica.url, decode_responses=True).info("replication").get(
            "master_link_status") != "up":
        assert time.monotonic() < deadline, "the replica never synced"
        time.sleep(0.05)
    yield master, replica
    os.kill(replica.process.pid, signal.SIGCONT)
    replica.stop()
    master.stop()


class Frozen:
    """The replica stopped (SIGSTOP): it holds its link but confirms nothing."""

    def __init__(self, server: EmbeddedRedis):
        self.pid = server.process.pid

    def __enter__(self):
        os.kill(self.pid, signal.SIGSTOP)

    def __exit__(self, *exc):
        os.kill(self.pid, signal.SIGCONT)


def test_an_action_is_acknowledged_only_once_a_replica_has_it(pair, key_prefix, games):
    master, replica = pair
    settings = Settings(redis_url=master.url, key_prefix=key_prefix, replica_acks=1, replica_wait_ms=WAIT_MS,
                        embedded_worker=False, rate_limit_per_token=0, rate_limit_per_address=0)
    on_master = redis.Redis.from_url(master.url, decode_responses=True)
    on_replica = redis.Redis.from_url(replica.url, decode_responses=True)
    with TestClient(create_app(settings, games=games)) as client:
        match_id = client.post("/v1/matches", json={"game": GAME, "seed": 3}).json()["id"]
        tokens = [client.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}"}).json()["token"]
                  for i in range(2)]
        key = f"{key_prefix}:m:{{{match_id}}}"

        def next_action():
            body = client.get(f"/v1/matches/{match_id}").json()
            auth = {"Authorization": f"Bearer {tokens[body['to_act'][0]]}"}
            legal = client.get(f"/v1/matches/{match_id}/legal-actions", headers=auth).json()
            return body["version"], auth, legal["actions"][0]

        def rest(version, auth, action, idem):
            return client.post(f"/v1/matches/{match_id}/actions", json={"action": action},
                               headers={**auth, "If-Match": f'"{version}"', "Idempotency-Key": idem})

        def graphql(version, auth, action, idem):
            return client.post("/graphql", headers=auth, json={
                "query": """mutation($input: SubmitActionInput!) { submitAction(input: $input) {
                  __typename ... on ActionAccepted { version duplicate } ... on Problem { code } } }""",
                "variables": {"input": {"matchId": match_id, "expectedVersion": version,
                                        "action": {"castingStones": {**action, "type": screaming(action["type"])}},
                                        "idempotencyKey": idem}}})

        version, auth, action = next_action()  # the replica in sync: an ordinary success
        ok = rest(version, auth, action, "in-sync")
        assert ok.status_code == 200 and not ok.json()["duplicate"], ok.text
        assert on_replica.hget(key, "version") == str(version + 1), "acknowledged before the replica had it"

        for api, submit in (("rest", rest), ("graphql", graphql)):
            version, auth, action = next_action()
            with Frozen(replica):
                first = submit(version, auth, action, f"frozen-{api}")
                assert first.status_code == 503 and first.headers["retry-after"] == "1", first.text
                if api == "rest":
                    problem = first.json()
                    assert problem["code"] == "service_unavailable"
                    assert "applied" in problem["detail"] and "Idempotency-Key" in problem["detail"]
                else:
                    error = first.json()["errors"][0]
                    assert error["extensions"]["code"] == "service_unavailable"
                    assert "applied" in error["message"] and "idempotencyKey" in error["message"]
                # applied on the master all the same: the key is what tells the client
                assert on_master.hget(key, "version") == str(version + 1)
                again = submit(version, auth, action, f"frozen-{api}")
                assert again.status_code == 503, "a repeat acknowledged an action no replica had confirmed"
            settled = submit(version, auth, action, f"frozen-{api}")
            assert settled.status_code == 200, settled.text
            outcome = settled.json() if api == "rest" else settled.json()["data"]["submitAction"]
            assert outcome["version"] == version + 1 and outcome["duplicate"] is True, outcome
            assert on_replica.hget(key, "version") == str(version + 1)
        assert client.get(f"/v1/matches/{match_id}").json()["version"] == version + 1


def test_a_bot_move_unconfirmed_by_a_replica_is_retried_and_lands_once(pair, key_prefix, games, settings):
    from service.store.bots import create_match

    master, replica = pair
    previous = runtime.runtime()
    rt = runtime.configure(dataclasses.replace(settings, redis_url=master.url, queue_redis_url="",
                                               replica_acks=1, replica_wait_ms=WAIT_MS), games)

    async def new_match() -> str:
        async with rt.store() as store:
            match = await create_match(store, "high-card", bots=[{"seat": 0, "level": "random"}])
            await store.join(match.id, "Ann")
            return match.id

    import asyncio

    try:
        match_id = asyncio.run(new_match())
        outcomes = []
        with Frozen(replica):
            job = threading.Thread(target=lambda: outcomes.append(jobs.play_bot(match_id, 0, 0)))
            job.start()
            time.sleep(1.0)  # the job's first attempt has met the timeout and is waiting to try again
            assert not outcomes, "the job ended while no replica could confirm its move"
        job.join(timeout=15)
        assert outcomes and outcomes[0]["outcome"] in ("stale", "duplicate", "played"), outcomes
        key = f"{settings.key_prefix}:m:{{{match_id}}}"
        assert redis.Redis.from_url(master.url).hget(key, "version") == b"1"  # one move, not two
        assert redis.Redis.from_url(replica.url).hget(key, "version") == b"1"
    finally:
        runtime.configure(previous.settings, previous.games)
