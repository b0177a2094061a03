"""The rate limit where the mutation run (tests/mutation/run.py) found it untested: counting on a real
Redis Cluster, and a service whose lifespan runs again (a new Redis client under the same middleware)."""

from __future__ import annotations

import asyncio
import json
import types

import pytest
import redis
from redis.asyncio.cluster import RedisCluster
from starlette.testclient import TestClient

from service.app import create_app
from service.limits import RateLimit
from tests.hardening.test_limits import MUTANT_LIMIT, one_window  # noqa: F401 (a fixture)


def _limit_on_cluster(cluster_url: str, prefix: str, *, per_token: int, per_address: int,
                      requests: int, token: str | None) -> tuple[list[tuple[int, str | None]], list[str], list]:
    """``requests`` requests from one address through a RateLimit whose store is a RedisCluster client:
    each one's (status, refusal detail), the counter keys it left behind, and the bodies the app read."""
    passed = []

    async def app(scope, receive, send):
        passed.append((await receive())["body"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def run():
        client = RedisCluster.from_url(cluster_url, decode_responses=True)
        store = types.SimpleNamespace(prefix=prefix, redis=client)
        limit = RateLimit(app, per_token=per_token, per_address=per_address)
        headers = [(b"authorization", f"Bearer {token}".encode())] if token else []
        answers = []
        for _ in range(requests):
            sent = []

            async def send(message):
                sent.append(message)

            async def receive():
                return {"type": "http.request", "body": b"the body", "more_body": False}

            await limit({"type": "http", "path": "/v1/games", "client": ("10.0.9.1", 1000), "headers": headers,
                         "app": types.SimpleNamespace(state=types.SimpleNamespace(store=store))}, receive, send)
            body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
            answers.append((sent[0]["status"], json.loads(body)["detail"] if sent[0]["status"] != 200 else None))
        keys = [key async for key in client.scan_iter(match=f"{prefix}:rl:*")]
        await client.aclose()
        return answers, keys, passed

    return asyncio.run(run())


@pytest.mark.parametrize("with_token", [False, True])
def test_the_limits_count_on_a_redis_cluster(cluster, key_prefix, one_window, with_token):
    """On a cluster the address's and the token's counters sit in different slots, so they are counted in a
    pipeline (no MULTI: it cannot span slots). Against that pipeline becoming a transaction, losing its keys or
    their expiry, and the counts read from the wrong replies: request N+1 is the first refused, by the limit
    that is lower, saying which, and every counter expires."""
    token = "gt.cluster-limits.secret" if with_token else None
    prefix = f"{key_prefix}-{'t' if with_token else 'a'}"
    answers, keys, bodies = _limit_on_cluster(cluster.url, prefix, per_token=MUTANT_LIMIT if with_token else 0,
                                      per_address=MUTANT_LIMIT if not with_token else 100,
                                      requests=MUTANT_LIMIT + 2, token=token)
    kind = "token" if with_token else "address"
    refusal = (429, f"More than {MUTANT_LIMIT} requests a second from this {kind}.")
    assert answers == [(200, None)] * MUTANT_LIMIT + [refusal] * 2
    assert bodies == [b"the body"] * MUTANT_LIMIT  # each request let through gets its body
    assert len(keys) == (2 if with_token else 1)  # one per limit that is on (a 0 limit is not counted)
    nodes = redis.RedisCluster.from_url(cluster.url)
    try:
        if with_token:  # the two counters really are in two slots: the case a single script cannot serve
            assert len({nodes.keyslot(k) for k in keys}) == 2
        for key in keys:  # each expires (2 s or 3 s is the same: the key names its second)
            assert nodes.ttl(key) > 0
    finally:
        nodes.close()


def test_a_restarted_lifespan_limits_with_its_new_redis_client(settings, games, one_window):
    """A Starlette app's middleware outlives its lifespan: run again (a test client entered twice, a server
    restarting its lifespan), the app opens a new store and Redis client under the same RateLimit. Against
    the limiter keeping the script it registered with the first client (closed, and of a loop that is gone):
    its calls fail, are taken for a Redis outage, and the limit is silently off."""
    import dataclasses

    app = create_app(dataclasses.replace(settings, rate_limit_per_address=MUTANT_LIMIT), games=games)
    with TestClient(app, client=("10.0.8.1", 1000)) as first:
        assert first.get("/v1/games").status_code == 200
    with TestClient(app, client=("10.0.8.2", 1000)) as again:
        statuses = [again.get("/v1/games").status_code for _ in range(MUTANT_LIMIT + 1)]
    assert statuses == [200] * MUTANT_LIMIT + [429]


def test_an_unreachable_cluster_lets_the_request_through():
    """A Redis Cluster client that reaches no node raises RedisClusterException, which is no RedisError: the
    limiter must take it for the outage it is (the request's own answer, a 503 where it needs the store), not
    fail the request with a 500 of its own."""
    from service.store.embedded import free_port

    reached = []

    async def app(scope, receive, send):
        reached.append(scope["path"])

    async def run():
        client = RedisCluster.from_url(f"redis://127.0.0.1:{free_port()}/0", decode_responses=True)
        store = types.SimpleNamespace(prefix="p", redis=client)
        scope = {"type": "http", "path": "/v1/games", "client": ("10.0.9.2", 1000), "headers": [],
                 "app": types.SimpleNamespace(state=types.SimpleNamespace(store=store))}
        await RateLimit(app, per_token=0, per_address=2)(scope, None, None)

    asyncio.run(run())
    assert reached == ["/v1/games"]
