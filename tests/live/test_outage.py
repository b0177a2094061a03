"""Redis killed or frozen under open streams (issue: "a live stream open across an outage is cut
mid-chunk"), with a real redis-server and a real uvicorn server.

Every stream in flight (NDJSON, SSE, GraphQL ``matchEvents`` and ``myTurns``) ends with its ``end``
message, reason ``store_unavailable``, within a bound set by the store's timeout; no message names
Redis's address or an exception; the pub/sub connection is read by one task only (no "readuntil"
in the logs); after Redis returns each client resumes with ``after`` and has seen every update
exactly once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import signal
import time

import httpx
import pytest

from service.app import create_app
from tests.live import clients
from tests.live.conftest import ThreadedServer
from tests.live.test_streams import new_match, play
from tests.support.processes import wait_ready

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _bound(live) -> float:
    """Killed: the next read fails at once. Frozen: no pong within ``timeout``, then a read that times out."""
    return live.ping_interval + 2 * live.timeout + 3.0


async def _collect(stream, into: list, stop_at: int | None = None) -> None:
    async for message in stream:
        into.append(message)
        if message["type"] in ("end", "problem", "closed"):
            return
        if stop_at is not None and message.get("version") == stop_at:
            return


def _versions(messages: list[dict]) -> list[int]:
    return [int(m["version"]) for m in messages if m["type"] == "action"]


@pytest.mark.parametrize("fault", ["killed", "frozen"])
async def test_streams_end_with_store_unavailable_and_resume_exactly_once(fault, own_redis, settings, games, caplog):
    caplog.set_level(logging.WARNING)
    app = create_app(dataclasses.replace(settings, redis_url=own_redis.url, stream_keepalive=1.0), games=games)
    server = ThreadedServer(app)
    try:
        base = server.base
        match_id, tokens = await asyncio.to_thread(new_match, base)
        assert await asyncio.to_thread(play, base, match_id, tokens, 5) == 5
        first = {name: [] for name in ("ndjson", "sse", "graphql", "turns_ndjson", "turns_graphql")}
        readers = [
            asyncio.create_task(_collect(clients.events(base, match_id, tokens[0]), first["ndjson"])),
            asyncio.create_task(_collect(clients.events(base, match_id, None, fmt="sse"), first["sse"])),
            asyncio.create_task(_collect(clients.match_subscription(base, match_id, {"token": tokens[1]}),
                                         first["graphql"])),
            asyncio.create_task(_collect(clients.turns(base, tokens), first["turns_ndjson"])),
            asyncio.create_task(_collect(clients.turns_subscription(base, tokens), first["turns_graphql"])),
        ]
        deadline = time.monotonic() + 20
        while not all(_versions(first[n])[-1:] == [5] for n in ("ndjson", "sse", "graphql")) \
                or app.state.live.followers < 5:
            assert time.monotonic() < deadline, {n: m[-3:] for n, m in first.items()}
            await asyncio.sleep(0.05)

        if fault == "killed":
            own_redis.stop()
        else:
            own_redis.process.send_signal(signal.SIGSTOP)
        faulted = time.monotonic()
        bound = _bound(app.state.live)
        await asyncio.wait_for(asyncio.gather(*readers), bound)
        ended_in = time.monotonic() - faulted
        for name, messages in first.items():
            assert messages[-1]["type"] == "end" and messages[-1]["reason"] == "store_unavailable", (name, messages)
            text = json.dumps(messages)
            for secret in (str(own_redis.port), "127.0.0.1", "Error", "Traceback", "redis"):
                assert secret not in text, (name, secret, messages[-1])

        if fault == "killed":
            own_redis.restart()
        else:
            own_redis.process.send_signal(signal.SIGCONT)
        await asyncio.to_thread(wait_ready, base, None, 20)
        assert await asyncio.to_thread(play, base, match_id, tokens, 5) == 10

        rest = {name: [] for name in ("ndjson", "sse", "graphql")}
        last = {name: _versions(first[name])[-1] for name in rest}
        await asyncio.wait_for(asyncio.gather(
            _collect(clients.events(base, match_id, tokens[0], after=last["ndjson"]), rest["ndjson"], 10),
            _collect(clients.events(base, match_id, None, fmt="sse", last_event_id=last["sse"]), rest["sse"], 10),
            _collect(clients.match_subscription(base, match_id, {"token": tokens[1]}, after=last["graphql"]),
                     rest["graphql"], 10),
        ), 20)
        for name in rest:
            assert _versions(first[name]) + _versions(rest[name]) == list(range(1, 11)), (name, rest[name])
        assert not [r for r in caplog.records if "readuntil" in r.getMessage()]
        print(f"{fault}: every stream ended within {ended_in:.2f} s (bound {bound:.0f} s)")
    finally:
        if fault == "frozen":
            own_redis.process.send_signal(signal.SIGCONT)
        server.stop()
