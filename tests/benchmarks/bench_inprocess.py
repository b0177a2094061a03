"""Benchmark: the server's own cost of an action, with no HTTP server and no load generator.

Run it from the repository root (a real Redis: ``REDIS_URL``, else the app's embedded one)::

    .venv/bin/python -m tests.benchmarks.bench_inprocess [--path rest|graphql] [--actions 2000]
    .venv/bin/python -m tests.benchmarks.bench_inprocess --path graphql --profile /tmp/graphql.prof
    .venv/bin/python -m tests.benchmarks.bench_inprocess --path graphql --actions 100 --instructions

It prints figures and exits 0; it asserts nothing (issue #18: targets live in benchmarks, never in timed tests).

What is measured
----------------
The Grimoire app (``service.app.create_app``, every guard on, rate limits raised so that they never refuse)
is called in this process through ASGI, as uvicorn would call it, minus HTTP parsing and sockets. One action
is what bench_api's players do: the legal actions of a seat to act, then a submission of one of them
(``GET .../legal-actions`` and ``POST .../actions``, or the ``match`` query and the ``submitAction``
mutation with every field of the view and the actions selected). A finished match is replaced. After a
warm-up of 50 actions, ``--actions`` are timed.

* CPU ms per action: this process's CPU time (``time.process_time``) over the actions; the Redis server's
  own CPU is not in it. On a busy machine it varies; for a before/after on a busy machine use
* ``--instructions`` (with ``REDIS_URL``): the script runs itself twice under valgrind's callgrind, with
  ``--actions`` and with 0, and prints the difference per action; use 100 actions or more. An instruction count does not depend on what else the machine
  runs (two runs of the same code still differ by a few percent: match ids and timings vary). It is slow:
  about 2 s of valgrind per GraphQL action.
* ``--profile FILE``: cProfile of the timed actions, for ``python -m pstats FILE``.

bench_api is the benchmark of record (a real server saturated beside its floor); this one says where a
change moves the server's own cost.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import logging
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import uuid

from tests.benchmarks.bench_api import BOARD_SEAT, graphql_documents

WARM_UP = 50


def _guards_that_never_refuse() -> None:
    os.environ.update({"GRIMOIRE_KEY_PREFIX": f"bench-{uuid.uuid4().hex[:8]}", "GRIMOIRE_EMBEDDED_WORKER": "0",
                       "GRIMOIRE_RATE_LIMIT_PER_TOKEN": "1000000", "GRIMOIRE_RATE_LIMIT_PER_ADDRESS": "1000000",
                       "GRIMOIRE_MAX_CONNECTIONS_PER_ADDRESS": "100000"})


class InProcessClient:
    """Calls an ASGI app as uvicorn would for one HTTP request with a JSON body."""

    def __init__(self, app):
        self.app = app

    async def call(self, method: str, path: str, body=None, token: str | None = None,
                   if_match: int | None = None) -> tuple[int, dict]:
        raw = json.dumps(body).encode() if body is not None else b""
        headers = [(b"host", b"bench"), (b"content-type", b"application/json"),
                   (b"content-length", str(len(raw)).encode())]
        if token:
            headers.append((b"authorization", f"Bearer {token}".encode()))
        if if_match is not None:
            headers.append((b"if-match", f'"{if_match}"'.encode()))
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
                 "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
                 "headers": headers, "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000), "state": {}}
        messages = [{"type": "http.request", "body": raw, "more_body": False}]

        async def receive():
            if messages:
                return messages.pop()
            await asyncio.Event().wait()  # the request is whole: nothing more comes until the app returns

        status, chunks = 0, []

        async def send(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, send)
        return status, json.loads(b"".join(chunks) or b"null")


class RestPlayer:
    def __init__(self, client: InProcessClient, game: str, rng: random.Random):
        self.client, self.game, self.rng = client, game, rng
        self.match_id, self.tokens, self.to_act, self.needs_match = "", {}, [], True

    async def new_match(self) -> None:
        """A new match with every seat joined by this player."""
        self.match_id, seats = await self._create()
        self.tokens = {}
        for _ in seats:
            joined = await self._join()
            self.tokens[joined["seat"]] = joined["token"]
        self._absorb(joined["match"])

    async def _create(self) -> tuple[str, list]:
        _, created = await self.client.call("POST", "/v1/matches", {"game": self.game,
                                                                    "seed": self.rng.getrandbits(63)})
        return created["id"], created["seats"]

    async def _join(self) -> dict:
        _, joined = await self.client.call("POST", f"/v1/matches/{self.match_id}/seats", {"name": "bench"})
        return joined

    async def act(self) -> None:
        if self.needs_match:
            await self.new_match()
        seat = self.rng.choice(self.to_act)
        _, legal = await self.client.call("GET", f"/v1/matches/{self.match_id}/legal-actions",
                                          token=self.tokens[seat])
        status, answer = await self.client.call("POST", f"/v1/matches/{self.match_id}/actions",
                                                {"action": self.rng.choice(legal["actions"])},
                                                token=self.tokens[seat], if_match=legal["version"])
        if status != 200:
            raise RuntimeError(f"submission refused: {status} {answer}")
        self._absorb(answer["match"])

    def _absorb(self, match: dict) -> None:
        self.to_act = [seat for seat in match["to_act"] if seat != BOARD_SEAT]
        self.needs_match = match["status"] != "active" or not self.to_act


class GraphQLPlayer(RestPlayer):
    def __init__(self, client: InProcessClient, game: str, rng: random.Random):
        from service.games import all_games

        super().__init__(client, game, rng)
        self.docs = graphql_documents(all_games()[game])

    async def _call(self, document: str, variables: dict, field: str, token: str | None = None) -> dict:
        status, answer = await self.client.call("POST", "/graphql", {"query": document, "variables": variables},
                                                token=token)
        if status != 200 or answer.get("errors") or "__typename" in answer["data"][field] and \
                answer["data"][field]["__typename"] == "Problem":
            raise RuntimeError(f"{field}: {status} {answer}")
        return answer["data"][field]

    async def _create(self) -> tuple[str, list]:
        created = await self._call(self.docs["create"], {"input": {"game": self.game,
                                                                   "seed": str(self.rng.getrandbits(63))}},
                                   "createMatch")
        return created["match"]["id"], created["match"]["seats"]

    async def _join(self) -> dict:
        return await self._call(self.docs["join"], {"input": {"matchId": self.match_id, "name": "bench"}},
                                "joinMatch")

    async def act(self) -> None:
        if self.needs_match:
            await self.new_match()
        seat = self.rng.choice(self.to_act)
        match = await self._call(self.docs["read"], {"id": self.match_id}, "match", self.tokens[seat])
        chosen = self.rng.choice(match["legalActions"])
        action = {k: v for k, v in chosen.items() if k != "__typename" and v is not None}
        accepted = await self._call(self.docs["submit"], {"input": {
            "matchId": self.match_id, "expectedVersion": match["version"],
            "action": {self.docs["action_field"]: action}}}, "submitAction", self.tokens[seat])
        self._absorb(accepted["match"])

    def _absorb(self, match: dict) -> None:
        self.to_act = [seat for seat in match["toAct"] if seat != BOARD_SEAT]
        self.needs_match = match["status"] != "ACTIVE" or not self.to_act  # GraphQL enums are SCREAMING_CASE


async def measure(path: str, game: str, actions: int, profile: str | None) -> float:
    """CPU seconds of this process per action."""
    _guards_that_never_refuse()
    from service.app import create_app
    from service.cli import settle_garbage_collector
    from service.logs import configure_logging

    configure_logging()  # a JSON access line per request, as `grimoire serve` writes them; to /dev/null
    logging.getLogger().handlers[0].setStream(open(os.devnull, "w"))

    app = create_app()
    settle_garbage_collector()  # as `grimoire serve` does: its full collections are not the request path's cost
    async with app.router.lifespan_context(app):
        player = (GraphQLPlayer if path == "graphql" else RestPlayer)(InProcessClient(app), game, random.Random(1))
        for _ in range(WARM_UP):
            await player.act()
        profiler = cProfile.Profile() if profile else None
        started = time.process_time()
        if profiler:
            profiler.enable()
        for _ in range(actions):
            await player.act()
        if profiler:
            profiler.disable()
            profiler.dump_stats(profile)
        spent = time.process_time() - started
        store = app.state.store
        async for key in store.redis.scan_iter(match=f"{store.prefix}:*", count=1000):
            await store.redis.delete(key)
    return spent / max(actions, 1)


def instructions(args) -> int:
    """Instructions per action: two runs under callgrind, with ``--actions`` and with none."""
    counts = []
    for actions in (args.actions, 0):
        with tempfile.TemporaryDirectory() as scratch:
            run = subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out", sys.executable, "-m",
                 "tests.benchmarks.bench_inprocess", "--path", args.path, "--game", args.game,
                 "--actions", str(actions)], capture_output=True, text=True, check=True)
        counts.append(int(re.search(r"Collected : (\d+)", run.stderr).group(1)))
    return (counts[0] - counts[1]) // args.actions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", choices=("rest", "graphql"), default="rest")
    parser.add_argument("--game", default="casting-stones")
    parser.add_argument("--actions", type=int, default=2000)
    parser.add_argument("--profile", help="write a cProfile of the timed actions to this file")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions per action under valgrind (slow; repeatable on a busy machine)")
    args = parser.parse_args()
    if args.instructions and not os.environ.get("REDIS_URL"):
        parser.error("--instructions needs REDIS_URL (a running Redis): waiting for an embedded one to start "
                     "costs a number of instructions that varies from run to run")
    if args.instructions:
        print(f"{args.path} {args.game}: {instructions(args):,} instructions per action "
              f"({args.actions} actions, callgrind)")
        return 0
    cpu = asyncio.run(measure(args.path, args.game, args.actions, args.profile))
    print(f"{args.path} {args.game}: {cpu * 1000:.3f} ms CPU per action ({args.actions} actions; "
          f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
