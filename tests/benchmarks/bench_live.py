"""Benchmark: many live subscribers on one service process.

Starts one real service process (uvicorn, on REDIS_URL or an embedded Redis),
creates a few Casting Stones matches, opens N subscribers spread over them
(NDJSON streams and GraphQL websocket subscriptions, from this process), then
submits actions at a steady rate and measures, for every delivered update,
the delay from the moment the action was accepted (the commit time the server
stamps on each update, ``at``) to its delivery to the subscriber. It also
reads the service process's resident memory before and after the subscribers
connect.

Run: ``python -m tests.benchmarks.bench_live [--subscribers 1000] [--matches 10]
[--websocket-share 0.2] [--seconds 20] [--rate 20]``. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
import uuid

import httpx
import redis
import websockets

from service.store.embedded import EmbeddedRedis, stop_process
from tests.live.conftest import start_service


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def ndjson_subscriber(base: str, match_id: str, delays: list[float], ready: asyncio.Event,
                            client: httpx.AsyncClient) -> None:
    async with client.stream("GET", f"{base}/v1/matches/{match_id}/events",
                             params={"format": "ndjson"}) as response:
        ready.set()
        async for line in response.aiter_lines():
            message = json.loads(line)
            if message["type"] == "action":
                delays.append(time.time() * 1000 - message["at"])
            elif message["type"] == "end":
                return


async def websocket_subscriber(base: str, match_id: str, delays: list[float], ready: asyncio.Event) -> None:
    query = "subscription($id: ID!) { matchEvents(matchId: $id, after: 0) { ... on MatchEvent { at } } }"
    async with websockets.connect(base.replace("http", "ws") + "/graphql", subprotocols=["graphql-transport-ws"],
                                  open_timeout=30) as ws:
        await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
        await ws.recv()
        await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": query,
                                                                             "variables": {"id": match_id}}}))
        ready.set()
        async for raw in ws:
            message = json.loads(raw)
            if message["type"] == "next":
                delays.append(time.time() * 1000 - message["payload"]["data"]["matchEvents"]["at"])
            elif message["type"] == "complete":
                return


async def driver(base: str, matches: list[tuple[str, list[str]]], seconds: float, rate: float) -> int:
    """Submit legal actions round-robin over the matches at ``rate`` per second."""
    chooser = random.Random(1)
    submitted = 0
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            started = time.monotonic()
            match_id, tokens = matches[submitted % len(matches)]
            match = (await http.get(f"/v1/matches/{match_id}")).json()
            if match["status"] == "active":
                seat = chooser.choice(match["to_act"])
                headers = {"Authorization": f"Bearer {tokens[seat]}"}
                legal = (await http.get(f"/v1/matches/{match_id}/legal-actions", headers=headers)).json()
                response = await http.post(f"/v1/matches/{match_id}/actions",
                                           json={"action": chooser.choice(legal["actions"])},
                                           headers={**headers, "If-Match": f'"{legal["version"]}"'})
                submitted += response.status_code == 200
            await asyncio.sleep(max(0.0, 1 / rate - (time.monotonic() - started)))
    return submitted


async def run(args) -> None:
    embedded = None
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        embedded = EmbeddedRedis(tempfile.mkdtemp(prefix="bench-live-"), persist=False)
        redis_url = embedded.url
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    process, base = start_service(redis_url, prefix, GRIMOIRE_MAX_STREAMS_PER_TOKEN="100000",
                                  GRIMOIRE_STREAM_KEEPALIVE="15")
    try:
        matches = []
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            for i in range(args.matches):
                match_id = (await http.post("/v1/matches", json={"game": "casting-stones", "seed": i,
                                                                 "options": {"max_turns": 0}})).json()["id"]
                tokens = [(await http.post(f"/v1/matches/{match_id}/seats", json={"name": n})).json()["token"]
                          for n in ("A", "B")]
                matches.append((match_id, tokens))
        await asyncio.sleep(1)
        rss_before = rss_kib(process.pid)
        delays: list[float] = []
        websocket_count = int(args.subscribers * args.websocket_share)
        limits = httpx.Limits(max_connections=args.subscribers + 10, max_keepalive_connections=0)
        async with httpx.AsyncClient(timeout=httpx.Timeout(60, connect=60), limits=limits) as streams:
            readies, tasks = [], []
            for n in range(args.subscribers):
                ready = asyncio.Event()
                match_id = matches[n % len(matches)][0]
                if n < websocket_count:
                    tasks.append(asyncio.create_task(websocket_subscriber(base, match_id, delays, ready)))
                else:
                    tasks.append(asyncio.create_task(ndjson_subscriber(base, match_id, delays, ready, streams)))
                readies.append(ready)
                if n % 50 == 49:
                    await asyncio.sleep(0.05)  # do not stampede the accept queue
            connect_started = time.monotonic()
            await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 120)
            connect_seconds = time.monotonic() - connect_started
            await asyncio.sleep(2)
            rss_after = rss_kib(process.pid)
            submitted = await driver(base, matches, args.seconds, args.rate)
            await asyncio.sleep(2)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        expected = submitted * args.subscribers // args.matches
        delays.sort()
        print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
              f"Redis {redis.Redis.from_url(redis_url).info('server')['redis_version']}")
        print(f"subscribers: {args.subscribers} on one process ({websocket_count} GraphQL websocket, "
              f"{args.subscribers - websocket_count} NDJSON), over {args.matches} matches; "
              f"connected in {connect_seconds:.1f} s")
        print(f"actions accepted: {submitted} in {args.seconds} s; deliveries: {len(delays)} "
              f"(expected about {expected})")
        if delays:
            print(f"accept-to-delivery delay: p50 {statistics.median(delays):.1f} ms, "
                  f"p99 {delays[int(len(delays) * 0.99) - 1]:.1f} ms, max {delays[-1]:.1f} ms")
        print(f"service memory: {rss_before / 1024:.1f} MiB before, {rss_after / 1024:.1f} MiB with subscribers: "
              f"{(rss_after - rss_before) / args.subscribers:.1f} KiB per subscriber")
    finally:
        stop_process(process, timeout=15)
        client = redis.Redis.from_url(redis_url)
        for key in client.scan_iter(match=f"{prefix}:*", count=1000):
            client.delete(key)
        if embedded:
            embedded.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--websocket-share", type=float, default=0.2)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--rate", type=float, default=20, help="actions per second, over all matches")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
