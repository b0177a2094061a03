"""Fan-out costs that must not grow with the number of followers (issue 18, live delivery).

* A follower sends Redis nothing per update: the published message carries the update (commit.lua),
  so the commands Redis serves during a burst of updates are the same for 1 follower and for 40.
  (One ``HMGET`` per follower per update exhausted the store's pool at a thousand followers and their
  streams ended ``store_unavailable``.)
* One encoding per update and view: two spectators of a process get the same bytes, encoded once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time

import pytest
import redis.asyncio as aioredis

from service.app import create_app
from service.engine import Rng
from service.rest import streams
from service.store import MatchStore
from service.store.live import LiveUpdates
from tests.live import clients
from tests.live.conftest import ThreadedServer
from tests.live.test_streams import new_match, play

pytestmark = pytest.mark.anyio

GAME = "spells-and-potions"


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def _calls(client) -> int:
    """Every command Redis has served since it started (INFO commandstats), the INFO itself included."""
    stats = await client.info("commandstats")
    return sum(int(entry["calls"]) for entry in stats.values())


async def _play(store: MatchStore, match_id: str, tokens: list[str], actions: int, rng: Rng) -> int:
    version = 0
    for _ in range(actions):
        match = await store.get(match_id)
        seat = rng.choice(match.acting)
        accepted = await store.submit(match_id, tokens[seat], match.version, rng.choice(match.legal_actions(seat)))
        version = accepted.version
    return version


async def _burst_commands(redis_url: str, games: dict, followers: int, updates: int) -> int:
    """Redis commands served while ``followers`` followers of one match each receive ``updates`` updates."""
    prefix = f"fanout-{followers}-{time.monotonic_ns()}"
    reader_client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    writer_client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    # compaction off: it is the writer's work, and its cadence would differ between the runs
    reader = MatchStore(reader_client, games, prefix=prefix, compact_every=0)
    writer = MatchStore(writer_client, games, prefix=prefix, compact_every=0)
    # no idle ticks and no pub/sub pings inside the burst: only per-update work is left to count
    live = LiveUpdates(reader, ping_interval=60, timeout=5)
    await live.start()
    tasks: list[asyncio.Task] = []
    try:
        match = await writer.create(GAME, seats=2, seed=5)
        tokens = [(await writer.join(match.id, f"P{i}"))[2] for i in range(2)]
        received = [0] * followers

        async def follow(i: int) -> None:
            async with contextlib.aclosing(live.follow(match.id, 0, idle=60)) as updates:
                async for update in updates:
                    if update is not None:
                        received[i] = update.version

        tasks = [asyncio.create_task(follow(i)) for i in range(followers)]
        deadline = time.monotonic() + 10
        while live.followers < followers or not all(c.ready.is_set() for c in live._channels.values()):
            assert time.monotonic() < deadline, "the followers did not subscribe"
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)  # every follower waiting for its first update
        before = await _calls(writer_client)
        last = await _play(writer, match.id, tokens, updates, Rng(11))
        deadline = time.monotonic() + 10
        while min(received) < last:
            assert time.monotonic() < deadline, f"followers stuck at {sorted(set(received))}, last {last}"
            await asyncio.sleep(0.01)
        return await _calls(writer_client) - before
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await live.stop()
        await reader_client.aclose()
        await writer_client.aclose()


async def test_a_follower_sends_redis_nothing_per_update(own_redis, games):
    updates = 12
    one = await _burst_commands(own_redis.url, games, 1, updates)
    many = await _burst_commands(own_redis.url, games, 40, updates)
    # the writer's reads and commits are the same in both runs; a stray log read is allowed, not one per follower
    assert many - one <= 3, (one, many)


async def test_two_spectators_get_one_encoding_of_each_update(settings, games, monkeypatch):
    encoded: list[tuple] = []
    original = streams._encode

    def counting(kind, message, fmt, event_id=None):
        if kind == "action":
            encoded.append((fmt, message["version"], message["action"] is not None))
        return original(kind, message, fmt, event_id)

    monkeypatch.setattr(streams, "_encode", counting)
    server = ThreadedServer(create_app(dataclasses.replace(settings, stream_keepalive=1.0), games=games))
    try:
        base = server.base
        match_id, tokens = await asyncio.to_thread(new_match, base)
        actions = 4
        got: dict[str, list[dict]] = {name: [] for name in ("a", "b", "seat0")}

        async def read(name: str, token: str | None) -> None:
            async for message in clients.events(base, match_id, token):
                if message["type"] == "action":
                    got[name].append(message)
                    if message["version"] >= actions:
                        return

        readers = [asyncio.create_task(read("a", None)), asyncio.create_task(read("b", None)),
                   asyncio.create_task(read("seat0", tokens[0]))]
        deadline = time.monotonic() + 10
        while server.app.state.live.followers < 3:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        assert await asyncio.to_thread(play, base, match_id, tokens, actions) == actions
        await asyncio.wait_for(asyncio.gather(*readers), 20)
        assert [m["version"] for m in got["a"]] == list(range(1, actions + 1))
        assert got["a"] == got["b"]
        # per version: the spectators' view once (not once per spectator), and seat 0's
        per_version = {v: sorted(e for e in encoded if e[1] == v) for v in range(1, actions + 1)}
        for version, encodings in per_version.items():
            assert len(encodings) == 2, (version, encodings)
            assert [e[0] for e in encodings] == ["ndjson", "ndjson"]
        assert json.dumps(got["a"]) != json.dumps(got["seat0"])  # a seat's view is its own
    finally:
        server.stop()


async def test_a_disconnect_ends_the_stream_in_its_own_task_and_releases_it():
    """The stream writes in the request's task; a disconnect cancels that write and nothing else: the
    request ends normally (not cancelled), with the slot released and no end message."""
    from service.rest.streams import EventStream

    class Live:
        closing = asyncio.Event()

    waiting, disconnect, closed, sent = asyncio.Event(), asyncio.Event(), [], []

    async def items():
        waiting.set()
        await asyncio.Event().wait()  # no update ever comes
        yield b"never"

    async def receive():
        await disconnect.wait()
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    stream = EventStream(items(), "ndjson", 5.0, Live(), on_close=lambda: closed.append(True))
    request = asyncio.create_task(stream({"type": "http"}, receive, send))
    await asyncio.wait_for(waiting.wait(), 5)
    disconnect.set()
    await asyncio.wait_for(asyncio.shield(request), 5)
    assert not request.cancelled() and request.cancelling() == 0
    assert closed == [True] and [m["type"] for m in sent] == ["http.response.start"]
