"""A server shutdown ends every stream at once with ``end: shutdown`` (docs/api.md, "Streams"), not when the
next keep-alive falls due: with the default keep-alive of 15 s, uvicorn's graceful shutdown cut turn streams
first, and clients saw a dropped connection instead of the reason."""

from __future__ import annotations

import asyncio
import dataclasses
import time

import httpx
import pytest

from service.app import create_app
from tests.live import clients
from tests.live.conftest import ThreadedServer

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def _until_following(server: ThreadedServer, n: int) -> None:
    deadline = time.monotonic() + 20
    while server.app.state.live.followers < n:
        assert time.monotonic() < deadline, server.app.state.live.followers
        await asyncio.sleep(0.02)


async def _collect(stream, into: list) -> None:
    async for message in stream:
        into.append(message)


@pytest.mark.parametrize("kind", ["turns", "events", "turns_subscription"])
async def test_shutdown_ends_streams_at_once(own_redis, settings, games, kind):
    server = ThreadedServer(create_app(dataclasses.replace(settings, redis_url=own_redis.url, stream_keepalive=15.0),
                                       games=games))
    try:
        async with httpx.AsyncClient(base_url=server.base, timeout=10) as http:
            match_id = (await http.post("/v1/matches", json={"game": "high-card"})).json()["id"]
            token = (await http.post(f"/v1/matches/{match_id}/seats", json={"name": "Ann"})).json()["token"]
        stream = {"turns": lambda: clients.turns(server.base, [token]),
                  "events": lambda: clients.events(server.base, match_id, token),
                  "turns_subscription": lambda: clients.turns_subscription(server.base, [token])}[kind]()
        seen: list[dict] = []
        reading = asyncio.create_task(_collect(stream, seen))
        await _until_following(server, 1)
        asked = time.monotonic()
        server.begin_shutdown()
        async with asyncio.timeout(8):
            await reading
        took = time.monotonic() - asked
        ends = [m for m in seen if m["type"] not in ("keepalive", "turn")]
        assert ends and ends[-1]["type"] == "end" and ends[-1].get("reason") == "shutdown", seen
        assert took < 5, f"the stream ended {took:.1f} s after the shutdown began"
    finally:
        server.stop()
