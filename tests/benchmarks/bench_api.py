"""Benchmark: action submission over HTTP, REST and GraphQL, beside their framework's floor.

Run it from the repository root (a real Redis: ``REDIS_URL``, else an embedded one)::

    .venv/bin/python -m tests.benchmarks.bench_api [--seconds 10] [--concurrency 16] [--clients 3]

It prints one table and exits 0; it asserts nothing about speed (issue #18: targets live in benchmarks,
never in timed tests).

The floor needs the fast stack
------------------------------
The floor apps run on uvicorn with ``loop="uvloop"``, ``http="httptools"``, redis-py with hiredis and orjson
responses: the fastest stack of the same libraries. They need ``uvloop httptools hiredis orjson``. Grimoire
is measured as the README installs it, so those packages must not be slipped into the Grimoire venv
behind its back (uvicorn and redis-py pick them up by themselves when present). Two ways:

* a floor interpreter of its own (recommended: the project venv stays exactly the README install)::

      python3 -m venv .venv/floor
      .venv/bin/python -c "import site; print(site.getsitepackages()[0])" \\
          > .venv/floor/lib/python3.11/site-packages/grimoire-venv.pth
      .venv/floor/bin/pip install uvloop httptools hiredis orjson

  (the ``.pth`` line lends it the project venv's packages; ``.venv/`` is git-ignored). The script uses
  ``--floor-python``, else ``$GRIMOIRE_FLOOR_PYTHON``, else ``.venv/floor/bin/python`` when it exists,
  else its own interpreter;
* or ``.venv/bin/pip install uvloop httptools hiredis orjson`` into the project venv: then Grimoire runs
  on them too, and the header says "Grimoire stack: ... NOT the README install" (as the issue's row
  "Grimoire REST with uvloop/httptools/hiredis added by hand").

Since issue 18 the README install itself brings uvloop, httptools, hiredis and orjson (pyproject.toml's
dependencies): the header calls Grimoire's stack "NOT the README install" only for fast packages its venv has
beyond what the project declares.

The header prints what each side actually ran on (the floor apps report their loop, HTTP protocol and
Redis parser; Grimoire's is what ``uvicorn`` and ``redis-py`` find in its venv).

What is measured
----------------
Four paths, one after the other, each a real HTTP server on 127.0.0.1 in its own process:

``floor-rest``
    a bare Starlette app: ``GET /records/{id}`` (one ``HGETALL``) and ``POST /records/{id}/actions`` doing
    the Redis round trips of a real submission: one ``HGETALL`` of a hash the size of a match record, one
    ``EVALSHA`` of a script doing the writes of ``commit.lua`` (version check, ``HSET``, ``XADD``,
    ``EXPIRE``, ``PUBLISH``);
``grimoire-rest``
    ``grimoire serve`` itself (a subprocess running ``python -m service.cli serve`` with ``REDIS_URL``):
    ``GET /v1/matches/{id}/legal-actions`` then ``POST /v1/matches/{id}/actions``;
``floor-graphql``
    a bare strawberry schema (``strawberry.asgi.GraphQL`` routed by Starlette, with the parser and
    validation caches the real schema has) whose query and mutation do the same round trips;
``grimoire-graphql``
    ``grimoire serve``: the ``match { legalActions }`` query then the ``submitAction`` mutation.

Grimoire runs with every guard on. Its settings are the defaults except three limits raised so that they
never refuse the benchmark's single client address (the work of checking them stays on the path):
``GRIMOIRE_RATE_LIMIT_PER_TOKEN``, ``GRIMOIRE_RATE_LIMIT_PER_ADDRESS`` and
``GRIMOIRE_MAX_CONNECTIONS_PER_ADDRESS``. Its logs go to /dev/null.

The load generator
------------------
``--clients`` processes (default 3), each an asyncio loop (uvloop when the floor interpreter has it) with a
minimal keep-alive HTTP/1.1 client on raw streams: a prebuilt request per route, ``Content-Length``
responses, orjson. Every action is one read and one submission: against Grimoire each player plays its own
match (created and joined once; a finished match is replaced, on the clock), reads the legal actions of a
seat to act, picks one (seeded), submits it at the version read; against a floor each player owns a
pre-seeded record, reads its version and submits at it. Only the submission is timed.

The server is pinned to one core and the clients (and an embedded Redis) to the others
(``os.sched_setaffinity``), so the server's CPU share is its own. A server below 90% of a core during the
window makes the row ``INVALID``: ``(client-bound)`` when the clients and Redis filled their cores (add
``--clients``, or run on a machine with more cores), ``(machine busy)`` when other processes took more than a
quarter of a core (run again on a quiet machine), ``(not saturated)`` otherwise (add ``--concurrency``). Only
valid rows compare frameworks; the ratio of server CPU ms per action is printed too, as the server-bound estimate.

Why not ``wrk``: its Lua ``request()`` is not told which connection it is building for, so the loop "read
the version (and, for Grimoire, the legal actions, which need a JSON parser wrk's Lua lacks), then submit
at it" cannot be written without one connection per thread; the Python driver above saturates the server
on two cores (its CPU is printed), so it is the one driver (``apt-get install wrk`` gives wrk 4.1 if a
future variant wants it).

Two modes per path, in the same server process:

closed loop
    ``--concurrency`` players (default 16, split over the client processes) each doing read, submit, read,
    submit... as fast as answers come: the saturated rate (actions/s), server CPU, latency at saturation;
open loop
    actions started on a fixed schedule at half the floor's saturated rate measured just before (REST paths
    at half of floor-rest's, GraphQL paths at half of floor-graphql's; ``--open-rate`` to fix it), over a
    pool of players; an action whose player is still busy waits for a free one. ``submit`` latency is the
    submission's own; ``action`` latency runs from the scheduled start to the submission's answer
    (waiting for a player, the read, the submission), so a stall is never hidden by the schedule sliding
    (coordinated omission). Actions still unanswered 5 s after the window count as late, with their
    latency so far. Target (issue #18): submit p50 <= 5 ms, p99 <= 25 ms.

CPU columns are shares of one core during the window: the server process, the client processes, Redis
(``INFO cpu``) and everything else on the machine ("other", from /proc/stat): a large "other" means others
were using the machine and the figures are noise.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import importlib.metadata
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from pathlib import Path
from typing import Any, Optional
from urllib.parse import urlsplit

from strawberry.scalars import JSON  # module level: strawberry resolves the floor schema's annotations here

try:
    import orjson

    def dumps(data: Any) -> bytes:
        return orjson.dumps(data)

    loads = orjson.loads
except ImportError:  # the driver still works without it (slower); the floor refuses to start
    orjson = None

    def dumps(data: Any) -> bytes:
        return json.dumps(data, separators=(",", ":")).encode()

    loads = json.loads

ROOT = Path(__file__).resolve().parents[2]
MODULE = "tests.benchmarks.bench_api"
SERVER_ENV = "GRIMOIRE_BENCH_SERVER"  # the JSON config a floor server process reads
PATHS = ("floor-rest", "grimoire-rest", "floor-graphql", "grimoire-graphql")
FLOOR_OF = {"grimoire-rest": "floor-rest", "grimoire-graphql": "floor-graphql"}
FAST_STACK = ("uvloop", "httptools", "hiredis", "orjson")
TARGET_RATIO = 0.60
SATURATED = 0.90  # server share of a core for a valid row
BUSY_MACHINE = 0.25  # other processes' CPU during a window (share of a core) above which figures are noise
OPEN_P50_MS, OPEN_P99_MS = 5.0, 25.0
LATE_AFTER = 5.0  # seconds after the window that unanswered open-loop actions are given
IDLE_RECONNECT = 4.0  # uvicorn closes keep-alive connections idle 5 s: reopen before that
BOARD_SEAT = -1
TTL = 3600


def _json_text(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


# -- the floor apps (run by the floor interpreter: uvloop, httptools, hiredis, orjson) -------------------

FLOOR_COMMIT = """
-- The writes of commit.lua: version check, HSET, XADD, EXPIRE, PUBLISH.
-- KEYS[1] record hash  KEYS[2] log stream
-- ARGV: expected version, state, status, to_act, result, seat, action, events, now, channel, ttl
local current = redis.call('HGET', KEYS[1], 'version')
if not current then return {'missing'} end
current = tonumber(current)
if current ~= tonumber(ARGV[1]) then return {'conflict', current} end
local version = current + 1
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'version', version, 'status', ARGV[3],
           'to_act', ARGV[4], 'result', ARGV[5], 'updated', ARGV[9])
redis.call('XADD', KEYS[2], version .. '-0', 'seat', ARGV[6], 'action', ARGV[7],
           'events', ARGV[8], 'at', ARGV[9])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[11]))
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[11]))
redis.call('PUBLISH', ARGV[10], version)
return {'ok', version}
"""


def record_key(prefix: str, record_id: str) -> str:
    return f"{prefix}:b:{{{record_id}}}"


class FloorRecords:
    """The Redis work of a submission and nothing else: one HGETALL, one EVALSHA (redis-py + hiredis)."""

    def __init__(self, redis_url: str, prefix: str):
        self.redis_url, self.prefix = redis_url, prefix
        self.client = None
        self.commit_script = None

    @contextlib.asynccontextmanager
    async def lifespan(self, app):
        import redis.asyncio as aioredis

        self.client = aioredis.Redis.from_url(self.redis_url, decode_responses=True, socket_timeout=5,
                                              socket_connect_timeout=2)
        self.commit_script = self.client.register_script(FLOOR_COMMIT)
        try:
            yield
        finally:
            await self.client.aclose()

    async def read(self, record_id: str) -> dict[str, str]:
        return await self.client.hgetall(record_key(self.prefix, record_id))

    async def submit(self, record_id: str, expected_version: int, action: Any) -> tuple[str, int | None]:
        """("ok", new version), ("conflict", current version) or ("missing", None)."""
        key = record_key(self.prefix, record_id)
        record = await self.client.hgetall(key)
        if not record:
            return "missing", None
        reply = await self.commit_script(
            keys=[key, f"{key}:log"],
            args=[expected_version, record["state"], record["status"], record["to_act"], record["result"], 0,
                  orjson.dumps(action), "[]", int(time.time() * 1000), f"{key}:events", TTL])
        return reply[0], int(reply[1]) if len(reply) > 1 else None

    def stack(self) -> dict[str, str]:
        """What this process actually runs on: its event loop, and redis-py's parser."""
        parser = self.client.connection_pool.connection_class(**self.client.connection_pool.connection_kwargs)
        return {"loop": type(asyncio.get_running_loop()).__module__.split(".")[0],
                "redis_parser": type(parser._parser).__name__}


def floor_rest_app(records: FloorRecords):
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    class OrjsonResponse(Response):
        media_type = "application/json"

        def render(self, content: Any) -> bytes:
            return orjson.dumps(content)

    async def read(request):
        record = await records.read(request.path_params["id"])
        if not record:
            return OrjsonResponse({"code": "missing"}, status_code=404)
        return OrjsonResponse({"version": int(record["version"])})

    async def submit(request):
        expected = int(request.headers["if-match"].strip('"'))
        body = orjson.loads(await request.body())
        outcome, version = await records.submit(request.path_params["id"], expected, body["action"])
        if outcome != "ok":
            return OrjsonResponse({"code": outcome, "current_version": version}, status_code=412)
        return OrjsonResponse({"version": version}, headers={"ETag": f'"{version}"'})

    async def stack(request):
        return OrjsonResponse(records.stack())

    return Starlette(routes=[Route("/records/{id}", read, methods=["GET"]),
                             Route("/records/{id}/actions", submit, methods=["POST"]),
                             Route("/bench-stack", stack, methods=["GET"])],
                     lifespan=records.lifespan)


def floor_graphql_app(records: FloorRecords):
    import strawberry
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route
    from strawberry.asgi import GraphQL
    from strawberry.extensions import ParserCache, ValidationCache

    @strawberry.type
    class Query:
        @strawberry.field
        async def record(self, id: str) -> Optional[int]:
            record = await records.read(id)
            return int(record["version"]) if record else None

    @strawberry.type
    class Mutation:
        @strawberry.mutation
        async def submit(self, id: str, expected_version: int, action: JSON) -> Optional[int]:
            outcome, version = await records.submit(id, expected_version, action)
            return version if outcome == "ok" else None

    class OrjsonGraphQL(GraphQL):
        def decode_json(self, data: str | bytes) -> object:
            return orjson.loads(data)

        def encode_json(self, data: object) -> str | bytes:
            return orjson.dumps(data)

    # The parse and validation caches the real schema has too: without them strawberry parses and
    # validates every request again and the floor would be no floor.
    caches = [lambda: ParserCache(maxsize=256), lambda: ValidationCache(maxsize=256)]
    graphql = OrjsonGraphQL(strawberry.Schema(query=Query, mutation=Mutation, extensions=caches), graphql_ide=None)

    async def stack(request):
        return JSONResponse(records.stack())

    return Starlette(routes=[Route("/graphql", graphql, methods=["POST"]),
                             Route("/bench-stack", stack, methods=["GET"])], lifespan=records.lifespan)


def floor_app():
    """The uvicorn factory a floor server process runs; configured by $GRIMOIRE_BENCH_SERVER."""
    config = json.loads(os.environ[SERVER_ENV])
    records = FloorRecords(config["redis_url"], config["key_prefix"])
    return floor_rest_app(records) if config["path"] == "floor-rest" else floor_graphql_app(records)


# -- the load generator's HTTP client: keep-alive HTTP/1.1 on raw asyncio streams --------------------------


class Failure(Exception):
    """An unexpected answer; ``key`` is how it is counted (e.g. ``412 version_conflict``)."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


class Conn:
    """One keep-alive connection; ``request`` sends prebuilt bytes and returns (status, body)."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.reader = self.writer = None
        self.used = 0.0

    async def open(self) -> None:
        self.close()
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.used = time.monotonic()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    async def request(self, data: bytes) -> tuple[int, bytes]:
        if self.writer is None or time.monotonic() - self.used > IDLE_RECONNECT:
            await self.open()
        self.writer.write(data)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        lower = head.lower()
        at = lower.find(b"\r\ncontent-length:")
        if at >= 0:
            body = await self.reader.readexactly(int(lower[at + 17:lower.index(b"\r\n", at + 17)]))
        elif b"transfer-encoding: chunked" in lower:
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")
                    break
                parts.append(await self.reader.readexactly(size))
                await self.reader.readexactly(2)
            body = b"".join(parts)
        else:
            raise Failure("response without a length")
        if b"\r\nconnection: close" in lower:
            self.close()
        self.used = time.monotonic()
        return status, body


def http_request(method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: bench"]
    if body or method == "POST":
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _problem(status: int, body: bytes) -> str:
    try:
        code = loads(body).get("code", "")
    except Exception:
        code = body[:60].decode(errors="replace")
    return f"{status} {code}".strip()


def expect(answer: tuple[int, bytes], status: int) -> Any:
    if answer[0] != status:
        raise Failure(_problem(*answer))
    return loads(answer[1])


def graphql_payload(answer: tuple[int, bytes], field_name: str, typename: str | None = None) -> Any:
    if answer[0] != 200:
        raise Failure(f"HTTP {answer[0]}")
    body = loads(answer[1])
    if body.get("errors"):
        raise Failure(f"GraphQL error: {body['errors'][0].get('message', '')[:80]}")
    payload = body["data"][field_name]
    if typename is not None and (payload or {}).get("__typename") != typename:
        raise Failure(f"{(payload or {}).get('__typename')} {(payload or {}).get('code', '')}".strip())
    return payload


# -- players: one connection, one match (or record) each -----------------------------------------------


class FloorRestPlayer:
    def __init__(self, conn: Conn, cfg: dict, record_id: str, rng: random.Random):
        self.conn, self.needs_match = conn, False
        self.read_request = http_request("GET", f"/records/{record_id}")
        self.path = f"/records/{record_id}/actions"
        self.body = dumps({"action": cfg["action"]})

    async def setup(self) -> None:
        self.needs_match = False

    async def read(self) -> int:
        return expect(await self.conn.request(self.read_request), 200)["version"]

    async def submit(self, version: int) -> None:
        expect(await self.conn.request(http_request("POST", self.path, self.body, {"If-Match": f'"{version}"'})),
               200)


class FloorGraphQLPlayer:
    READ = "query($id: String!) { record(id: $id) }"
    SUBMIT = ("mutation($id: String!, $expectedVersion: Int!, $action: JSON!) "
              "{ submit(id: $id, expectedVersion: $expectedVersion, action: $action) }")

    def __init__(self, conn: Conn, cfg: dict, record_id: str, rng: random.Random):
        self.conn, self.needs_match, self.record_id, self.action = conn, False, record_id, cfg["action"]
        self.read_request = http_request("POST", "/graphql", dumps({"query": self.READ,
                                                                    "variables": {"id": record_id}}))

    async def setup(self) -> None:
        self.needs_match = False

    async def read(self) -> int:
        version = graphql_payload(await self.conn.request(self.read_request), "record")
        if version is None:
            raise Failure("read: no record")
        return version

    async def submit(self, version: int) -> None:
        body = dumps({"query": self.SUBMIT, "variables": {"id": self.record_id, "expectedVersion": version,
                                                          "action": self.action}})
        if graphql_payload(await self.conn.request(http_request("POST", "/graphql", body)), "submit") is None:
            raise Failure("version conflict or missing record")


class GrimoireRestPlayer:
    """Plays its own matches through ``/v1``."""

    def __init__(self, conn: Conn, cfg: dict, record_id: str, rng: random.Random):
        self.conn, self.game, self.rng = conn, cfg["game"], rng
        self.needs_match = True
        self.match_id, self.tokens, self.to_act = "", {}, []

    async def setup(self) -> None:
        created = expect(await self.conn.request(http_request(
            "POST", "/v1/matches", dumps({"game": self.game, "seed": self.rng.getrandbits(63)}))), 201)
        self.match_id, self.tokens = created["id"], {}
        joined = None
        for _ in created["seats"]:
            joined = expect(await self.conn.request(http_request(
                "POST", f"/v1/matches/{self.match_id}/seats", dumps({"name": "bench"}))), 201)
            self.tokens[joined["seat"]] = joined["token"]
        self._absorb(joined["match"])

    async def read(self) -> tuple:
        seat = self.rng.choice(self.to_act)
        legal = expect(await self.conn.request(http_request(
            "GET", f"/v1/matches/{self.match_id}/legal-actions",
            headers={"Authorization": f"Bearer {self.tokens[seat]}"})), 200)
        if not legal["actions"]:
            raise Failure("read: no legal actions for a seat to act")
        return seat, legal["version"], self.rng.choice(legal["actions"])

    async def submit(self, prepared: tuple) -> None:
        seat, version, action = prepared
        answer = await self.conn.request(http_request(
            "POST", f"/v1/matches/{self.match_id}/actions", dumps({"action": action}),
            {"Authorization": f"Bearer {self.tokens[seat]}", "If-Match": f'"{version}"'}))
        self._absorb(expect(answer, 200)["match"])

    def _absorb(self, match: dict) -> None:
        self.to_act = [seat for seat in match["to_act"] if seat != BOARD_SEAT]  # nobody plays the board here:
        self.needs_match = match["status"] != "active" or not self.to_act  # a match waiting on it is replaced


class GrimoireGraphQLPlayer:
    """Plays its own matches through ``/graphql`` (documents generated from the game's schemas)."""

    def __init__(self, conn: Conn, cfg: dict, record_id: str, rng: random.Random):
        self.conn, self.game, self.rng, self.docs = conn, cfg["game"], rng, cfg["documents"]
        self.needs_match = True
        self.match_id, self.tokens, self.to_act = "", {}, []

    async def _call(self, document: str, variables: dict, field_name: str, typename: str,
                    token: str | None = None) -> dict:
        headers = {"Authorization": f"Bearer {token}"} if token else None
        answer = await self.conn.request(http_request("POST", "/graphql", dumps({"query": document,
                                                                                 "variables": variables}), headers))
        return graphql_payload(answer, field_name, typename)

    async def setup(self) -> None:
        created = await self._call(self.docs["create"], {"input": {"game": self.game,
                                                                   "seed": str(self.rng.getrandbits(63))}},
                                   "createMatch", "MatchCreated")
        self.match_id, self.tokens = created["match"]["id"], {}
        joined = None
        for _ in created["match"]["seats"]:
            joined = await self._call(self.docs["join"], {"input": {"matchId": self.match_id, "name": "bench"}},
                                      "joinMatch", "SeatJoined")
            self.tokens[joined["seat"]] = joined["token"]
        self._absorb(joined["match"])

    async def read(self) -> tuple:
        seat = self.rng.choice(self.to_act)
        match = await self._call(self.docs["read"], {"id": self.match_id}, "match", "Match", self.tokens[seat])
        if not match["legalActions"]:
            raise Failure("read: no legal actions for a seat to act")
        chosen = self.rng.choice(match["legalActions"])
        return seat, match["version"], {k: v for k, v in chosen.items() if k != "__typename" and v is not None}

    async def submit(self, prepared: tuple) -> None:
        seat, version, action = prepared
        variables = {"input": {"matchId": self.match_id, "expectedVersion": version,
                               "action": {self.docs["action_field"]: action}}}
        self._absorb((await self._call(self.docs["submit"], variables, "submitAction", "ActionAccepted",
                                       self.tokens[seat]))["match"])

    def _absorb(self, match: dict) -> None:
        self.to_act = [seat for seat in match["toAct"] if seat != BOARD_SEAT]
        self.needs_match = match["status"] != "ACTIVE" or not self.to_act  # GraphQL enums are SCREAMING_CASE


PLAYERS = {"floor-rest": FloorRestPlayer, "floor-graphql": FloorGraphQLPlayer,
           "grimoire-rest": GrimoireRestPlayer, "grimoire-graphql": GrimoireGraphQLPlayer}
NETWORK_ERRORS = (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError)


# -- a client process: reads commands on stdin, answers one JSON line each --------------------------------


class Tally:
    def __init__(self):
        self.submit: list[float] = []  # seconds
        self.action: list[float] = []  # open loop: from the scheduled start
        self.errors: Counter = Counter()
        self.matches = 0
        self.late = 0

    def as_dict(self) -> dict:
        return {"submit": self.submit, "action": self.action, "errors": dict(self.errors),
                "matches": self.matches, "late": self.late}


async def _one_action(player, tally: Tally) -> tuple[float, float] | None:
    """Read then submit; (submit sent, submit answered) in monotonic seconds, or None after an error."""
    try:
        if player.needs_match:
            await player.setup()
            tally.matches += 1
        prepared = await player.read()
        sent = time.monotonic()
        await player.submit(prepared)
        return sent, time.monotonic()
    except Failure as failure:
        tally.errors[failure.key] += 1
        player.needs_match = True
    except NETWORK_ERRORS as error:
        tally.errors[type(error).__name__] += 1
        player.needs_match = True
        player.conn.close()
        await asyncio.sleep(0.05)
    return None


async def closed_loop(players: list, start: float, end: float) -> Tally:
    tally = Tally()

    async def run(player):
        while time.monotonic() < end:
            timed = await _one_action(player, tally)
            if timed and start <= timed[1] <= end:
                tally.submit.append(timed[1] - timed[0])

    await asyncio.gather(*(run(p) for p in players))
    return tally


async def open_loop(players: list, warm_start: float, start: float, end: float, rate: float,
                    phase: float) -> Tally:
    """Actions scheduled every 1/rate s from ``warm_start``; counted when scheduled inside [start, end]."""
    tally = Tally()
    free: asyncio.Queue = asyncio.Queue()
    for player in players:
        free.put_nowait(player)
    pending: set[asyncio.Task] = set()
    scheduled: dict[asyncio.Task, float] = {}

    async def act(at: float):
        player = await free.get()
        try:
            timed = await _one_action(player, tally)
            if player.needs_match:  # replace a finished match before the player is free again (untimed)
                await _one_setup(player, tally)
        except asyncio.CancelledError:  # late: its answer may still come, so the connection is not reused
            player.conn.close()
            player.needs_match = True
            raise
        finally:
            free.put_nowait(player)
        if timed and start <= at <= end:
            tally.submit.append(timed[1] - timed[0])
            tally.action.append(timed[1] - at)

    interval = 1.0 / rate
    k = 0
    while True:
        at = warm_start + (k + phase) * interval
        if at > end:
            break
        delay = at - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        task = asyncio.create_task(act(at))
        pending.add(task)
        scheduled[task] = at
        task.add_done_callback(pending.discard)
        k += 1
    if pending:
        await asyncio.wait(set(pending), timeout=max(0.0, end + LATE_AFTER - time.monotonic()))
    now = time.monotonic()
    for task in list(pending):  # unanswered: late, counted with their latency so far
        at = scheduled[task]
        if start <= at <= end:
            tally.late += 1
            tally.action.append(now - at)
            tally.submit.append(now - at)
        task.cancel()
    return tally


async def _one_setup(player, tally: Tally) -> None:
    try:
        await player.setup()
        tally.matches += 1
    except (Failure, *NETWORK_ERRORS) as error:
        tally.errors[getattr(error, "key", type(error).__name__)] += 1


async def client_main() -> None:
    loop = asyncio.get_running_loop()
    readline = lambda: loop.run_in_executor(None, sys.stdin.readline)  # noqa: E731
    cfg = json.loads(await readline())
    host, port = cfg["host"], cfg["port"]
    players = []
    for i in range(cfg["players"]):
        rng = random.Random(cfg["seed"] * 100_000 + cfg["index"] * 1000 + i)
        record_id = f"{cfg['path']}-{cfg['index']}-{i}"
        players.append(PLAYERS[cfg["path"]](Conn(host, port), cfg, record_id, rng))
    setup = Tally()
    for player in players:
        await player.conn.open()
        if player.needs_match:
            await _one_setup(player, setup)
    answer({"ready": True, "errors": dict(setup.errors)})
    while True:
        line = await readline()
        if not line:
            return
        command = json.loads(line)
        if command["mode"] == "quit":
            return
        if command["mode"] == "closed":
            tally = await closed_loop(players[:command["players"]], command["start"], command["end"])
        else:
            tally = await open_loop(players, command["warm_start"], command["start"], command["end"],
                                    command["rate"], command["phase"])
        answer(tally.as_dict())


def answer(data: dict) -> None:
    """A client process's report to the coordinator: one JSON line on stdout."""
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


def run_with_fastest_loop(main) -> None:
    """Run the coroutine function ``main`` on uvloop where the interpreter has it (the floor's does)."""
    try:
        import uvloop

        uvloop.run(main())
    except ImportError:
        asyncio.run(main())


def run_client() -> None:
    run_with_fastest_loop(client_main)


# -- the coordinator (runs on the project's own venv) ----------------------------------------------------


def sample_record(game, seed: int) -> tuple[dict[str, str], dict]:
    """A match record (the fields ``MatchStore`` writes) of a game played a few random actions in, and one
    of those actions: what a floor reads and writes."""
    rng = random.Random(seed)
    seats = game.min_seats
    options = game.check_options(None, None, seats)
    state = game.setup(options, seats, seed)
    action: dict = {"type": "noop"}
    for _ in range(12):
        acting = sorted(game.to_act(state))
        if not acting:
            break
        seat = rng.choice(acting)
        legal = game.legal_actions(state, seat)
        if not legal:
            break
        action = rng.choice(legal)
        after, _ = game.apply(state, seat, action)
        if game.result(after) is not None:
            break
        state = after
    now = int(time.time() * 1000)
    record = {
        "game": game.id, "variant": options["variant"], "options": _json_text(options), "seed": str(seed),
        "seats": str(seats), "state": _json_text(state), "version": "0", "status": "active",
        "to_act": _json_text(sorted(game.to_act(state))), "result": "", "created": str(now),
        "updated": str(now),
    }
    for i in range(seats):
        record[f"seat:{i}"] = _json_text({"name": f"bench-{i}", "token": hashlib.sha256(os.urandom(32)).hexdigest(),
                                          "joined": now})
    return record, action


def graphql_documents(game) -> dict[str, str]:
    """The operations a Grimoire GraphQL player sends, with selections generated from the game's schemas."""
    from schema.game_types import pascal
    from tests.api.test_play_through import selection  # every field by its GraphQL name (x-graphql-name)

    prefix = pascal(game.id)
    actions = " ".join(f"... on {prefix}{pascal(t)}Action {selection(s)}"
                       for t, s in sorted(game.action_schemas.items()))
    match = f"id version status toAct mySeat view {{ ... on {prefix}View {selection(game.view_schema)} }}"
    problem = "... on Problem { code message }"
    return {
        "create": ("mutation($input: CreateMatchInput!) { createMatch(input: $input) { __typename "
                   f"... on MatchCreated {{ match {{ id seats {{ seat }} }} }} {problem} }} }}"),
        "join": ("mutation($input: JoinMatchInput!) { joinMatch(input: $input) { __typename "
                 f"... on SeatJoined {{ seat token match {{ status toAct }} }} {problem} }} }}"),
        "read": ("query($id: ID!) { match(id: $id) { __typename "
                 f"... on Match {{ version status toAct legalActions {{ __typename {actions} }} }} {problem} }} }}"),
        "submit": ("mutation($input: SubmitActionInput!) { submitAction(input: $input) { __typename "
                   f"... on ActionAccepted {{ version events duplicate match {{ {match} }} }} {problem} }} }}"),
        "action_field": prefix[0].lower() + prefix[1:],
    }


def free_port() -> int:
    from service.store.embedded import free_port as _free_port

    return _free_port()


def stop_process(process: subprocess.Popen, timeout: float) -> None:
    from service.store.embedded import stop_process as _stop_process  # the server side's only

    _stop_process(process, timeout)


def server_log():
    """A temporary file for a server's output (Grimoire logs a JSON line per request: kept off the terminal,
    shown when the server fails)."""
    return tempfile.TemporaryFile(mode="w+")


def log_tail(log, lines: int = 15) -> str:
    if log is None:
        return ""
    log.flush()
    log.seek(0)
    return ":\n" + "".join(log.readlines()[-lines:])


def _get(url: str, timeout: float = 1.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def wait_up(url: str, process: subprocess.Popen, ready_path: str, timeout: float = 40.0, log=None) -> None:
    """Return once ``url + ready_path`` answers below 500; raise (with the tail of ``log``, the server's
    output file) if the process exits or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with status {process.returncode}{log_tail(log)}")
        try:
            if _get(url + ready_path)[0] < 500:
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server at {url} did not come up{log_tail(log)}")
        time.sleep(0.1)


def grimoire_command(profile: str | None = None) -> list[str]:
    """Exactly what `grimoire serve` runs, on the project's own interpreter; with ``profile`` (a file), under
    cProfile, which writes its statistics there when the server stops."""
    if not profile:
        return [sys.executable, "-m", "service.cli", "serve"]
    # uvicorn re-raises the SIGTERM it stopped on once it has shut down: made a SystemExit here, so that the
    # profile is written
    return [sys.executable, "-c", "import cProfile, signal, sys; from service import cli\n"
            "signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))\n"
            f"profiler = cProfile.Profile(); profiler.enable()\n"
            f"try: cli.main(['serve'])\nfinally: profiler.disable(); profiler.dump_stats({profile!r})"]


def grimoire_env(redis_url: str, key_prefix: str, port: int, **extra: str) -> dict[str, str]:
    """Default settings, but for the limits that would refuse the benchmark's one client address (raised, so
    they are still checked on every request)."""
    return {**os.environ, "REDIS_URL": redis_url, "GRIMOIRE_KEY_PREFIX": key_prefix, "GRIMOIRE_HOST": "127.0.0.1",
            "GRIMOIRE_PORT": str(port), "GRIMOIRE_RATE_LIMIT_PER_TOKEN": "1000000",
            "GRIMOIRE_RATE_LIMIT_PER_ADDRESS": "1000000", "GRIMOIRE_MAX_CONNECTIONS_PER_ADDRESS": "1000000", **extra}


@contextlib.contextmanager
def serving(path: str, redis_url: str, key_prefix: str, floor_python: str, profile: str | None = None):
    """Run one server in its own process; yield (port, pid). ``profile``: see :func:`grimoire_command`."""
    port = free_port()
    if path.startswith("floor-"):
        config = {"path": path, "redis_url": redis_url, "key_prefix": key_prefix}
        command = [floor_python, "-m", "uvicorn", f"{MODULE}:floor_app", "--factory", "--loop", "uvloop",
                   "--http", "httptools", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
                   "--no-access-log"]
        env = {**os.environ, SERVER_ENV: json.dumps(config)}
        ready = "/bench-stack"
    else:
        command, env, ready = grimoire_command(profile), grimoire_env(redis_url, key_prefix, port), "/readyz"
    log = server_log()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_up(f"http://127.0.0.1:{port}", process, ready, log=log)
        yield port, process.pid
    finally:
        stop_process(process, timeout=15)
        log.close()


class Clients:
    """The client processes of one path, on the floor interpreter, pinned to the client cores."""

    def __init__(self, floor_python: str, count: int, cores: set[int] | None, base_cfg: dict):
        self.processes = []
        for index in range(count):
            process = subprocess.Popen([floor_python, "-m", MODULE, "--client"], cwd=ROOT, stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, text=True)
            if cores:
                os.sched_setaffinity(process.pid, cores)
            process.stdin.write(json.dumps({**base_cfg, "index": index}) + "\n")
            process.stdin.flush()
            self.processes.append(process)
        self.setup_errors: Counter = Counter()
        for answer in self._answers():
            self.setup_errors.update(answer["errors"])

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]

    def _answers(self) -> list[dict]:
        answers = []
        for process in self.processes:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"a client process exited (status {process.poll()})")
            answers.append(json.loads(line))
        return answers

    def send(self, commands: list[dict]) -> None:
        for process, command in zip(self.processes, commands):
            process.stdin.write(json.dumps(command) + "\n")
            process.stdin.flush()

    def collect(self) -> dict:
        merged = {"submit": [], "action": [], "errors": Counter(), "matches": 0, "late": 0}
        for answer in self._answers():
            merged["submit"] += answer["submit"]
            merged["action"] += answer["action"]
            merged["errors"].update(answer["errors"])
            merged["matches"] += answer["matches"]
            merged["late"] += answer["late"]
        return merged

    def close(self) -> None:
        for process in self.processes:
            with contextlib.suppress(OSError):
                process.stdin.write(json.dumps({"mode": "quit"}) + "\n")
                process.stdin.close()
        for process in self.processes:
            stop_process(process, timeout=10)


# -- CPU ---------------------------------------------------------------------------------------------------


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_cpu() -> float:
    """CPU seconds the whole machine has been busy (all cores, every process)."""
    ticks = [int(t) for t in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def redis_cpu(client) -> float:
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


class CpuMeter:
    def __init__(self, server_pid: int, client_pids: list[int], redis_client):
        self.server_pid, self.client_pids, self.redis = server_pid, client_pids, redis_client

    def sample(self) -> dict[str, float]:
        return {"wall": time.monotonic(), "server": process_cpu(self.server_pid),
                "client": sum(process_cpu(p) for p in self.client_pids), "redis": redis_cpu(self.redis),
                "machine": machine_cpu()}

    @staticmethod
    def shares(before: dict, after: dict) -> dict[str, float]:
        wall = after["wall"] - before["wall"]
        cpu = {k: (after[k] - before[k]) / wall for k in ("server", "client", "redis", "machine")}
        cpu["other"] = max(0.0, cpu.pop("machine") - cpu["server"] - cpu["client"] - cpu["redis"])
        return cpu


# -- running a path ----------------------------------------------------------------------------------------


def split(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def run_path(path: str, args, port: int, server_pid: int, redis_client, cores, cfg: dict,
             open_rate_of) -> dict:
    """The closed loop, then the open loop at ``open_rate_of(closed actions/s)`` (None: no open loop)."""
    server_core, client_cores = cores
    if server_core is not None:
        os.sched_setaffinity(server_pid, {server_core})
    per_client = split(args.concurrency, args.clients)
    players = max(max(per_client), args.open_pool)
    clients = Clients(args.floor_python, args.clients, client_cores,
                      {**cfg, "path": path, "host": "127.0.0.1", "port": port, "players": players})
    meter = CpuMeter(server_pid, clients.pids, redis_client)
    try:
        row = {"path": path, "setup_errors": clients.setup_errors}
        now = time.monotonic() + 0.2
        start, end = now + args.warmup, now + args.warmup + args.seconds
        clients.send([{"mode": "closed", "players": n, "start": start, "end": end} for n in per_client])
        time.sleep(max(0.0, start - time.monotonic()))
        before = meter.sample()
        time.sleep(max(0.0, end - time.monotonic()))
        after = meter.sample()
        row["closed"] = clients.collect()
        row["closed_cpu"] = CpuMeter.shares(before, after)
        row["closed_seconds"] = args.seconds
        row["closed_rate"] = len(row["closed"]["submit"]) / args.seconds
        open_rate = open_rate_of(row["closed_rate"])
        if open_rate:
            now = time.monotonic() + 0.2
            start, end = now + args.warmup, now + args.warmup + args.seconds
            n = args.clients
            clients.send([{"mode": "open", "warm_start": now, "start": start, "end": end, "rate": open_rate / n,
                           "phase": i / n} for i in range(n)])
            time.sleep(max(0.0, start - time.monotonic()))
            before = meter.sample()
            time.sleep(max(0.0, end - time.monotonic()))
            after = meter.sample()
            row["open"] = clients.collect()
            row["open_cpu"] = CpuMeter.shares(before, after)
            row["open_rate"] = open_rate
        return row
    finally:
        clients.close()


def seed_records(client, prefix: str, path: str, args, record: dict) -> None:
    """One record per floor player, at version 0."""
    players = max(max(split(args.concurrency, args.clients)), args.open_pool)
    with client.pipeline(transaction=False) as pipe:
        for index in range(args.clients):
            for i in range(players):
                key = record_key(prefix, f"{path}-{index}-{i}")
                pipe.delete(key, f"{key}:log")
                pipe.hset(key, mapping=record)
                pipe.expire(key, TTL)
        pipe.execute()


@contextlib.contextmanager
def redis_server(cores):
    """Yield (URL, description): $REDIS_URL, or an embedded redis-server pinned to the client cores."""
    url = os.environ.get("REDIS_URL")
    if url:
        parts = urlsplit(url)
        yield url, f"REDIS_URL ({parts.hostname}:{parts.port or 6379}; not pinned)"
        return
    from service.store.embedded import EmbeddedRedis

    with tempfile.TemporaryDirectory(prefix="grimoire-bench-") as data_dir:
        server = EmbeddedRedis(data_dir, persist=False)
        if cores[1]:
            os.sched_setaffinity(server.process.pid, cores[1])
        try:
            yield server.url, f"embedded ({server.url}, pinned with the clients)"
        finally:
            server.stop()


def delete_keys(client, prefix: str) -> None:
    batch = []
    for key in client.scan_iter(match=f"{prefix}:*", count=1000):
        batch.append(key)
        if len(batch) >= 500:
            client.delete(*batch)
            batch = []
    if batch:
        client.delete(*batch)


# -- report ------------------------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile, ``q`` in [0, 1]; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.machine()


def interpreter_stack(python: str) -> dict[str, bool]:
    """Which of the fast packages ``python`` can import (what uvicorn's and redis-py's "auto" would use)."""
    code = ("import importlib.util, json; "
            f"print(json.dumps({{m: importlib.util.find_spec(m) is not None for m in {list(FAST_STACK)!r}}}))")
    out = subprocess.run([python, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def default_floor_python() -> str:
    if os.environ.get("GRIMOIRE_FLOOR_PYTHON"):
        return os.environ["GRIMOIRE_FLOOR_PYTHON"]
    floor = ROOT / ".venv" / "floor" / "bin" / "python"
    return str(floor) if floor.exists() else sys.executable


def choose_cores() -> tuple[int | None, set[int] | None]:
    usable = sorted(os.sched_getaffinity(0))
    if len(usable) < 2:
        return None, None
    return usable[0], set(usable[1:])


def row_validity(cpu: dict, client_cores: int) -> str:
    if cpu["server"] >= SATURATED:
        return "valid"
    if cpu["client"] + cpu["redis"] >= SATURATED * client_cores:
        return "INVALID (client-bound)"
    if cpu["other"] > BUSY_MACHINE:
        return "INVALID (machine busy)"
    return "INVALID (not saturated)"


def declared_dependencies() -> set[str]:
    """The packages the README's ``pip install -e .`` brings (pyproject.toml; since issue 18 the fast stack)."""
    import re

    names = set()
    for requirement in importlib.metadata.requires("grimoire") or ():
        if "extra ==" in requirement:
            continue
        name, _, rest = re.match(r"([A-Za-z0-9_.\-]+)(\[([^\]]*)\])?", requirement).group(1, 2, 3)
        names.add(name.lower())
        names.update(x.strip().lower() for x in (rest or "").split(",") if x.strip())  # redis[hiredis]
    return names


def print_header(args, redis_desc: str, redis_version: str, record: dict, stacks: dict, cores) -> None:
    grimoire = stacks["grimoire"]
    extra = [m for m, present in grimoire.items() if present and m not in declared_dependencies()]
    readme = "the README install" if not extra else f"NOT the README install: {', '.join(extra)} added to its venv"
    size = sum(len(k) + len(v) for k, v in record.items())
    print("Grimoire API benchmark: action submission over HTTP, beside the framework's floor")
    print(f"  machine   {os.cpu_count()} cores ({len(os.sched_getaffinity(0))} usable), {_cpu_model()}, "
          f"{platform.system()} {platform.release()}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          "(1/5/15 min, before the run)")
    print(f"  pinning   server on core {cores[0]}, {args.clients} client processes and an embedded Redis on "
          f"{sorted(cores[1]) if cores[1] else '-'}")
    print(f"  python    {platform.python_version()}; uvicorn {_version('uvicorn')}, starlette {_version('starlette')}, "
          f"strawberry-graphql {_version('strawberry-graphql')}, redis-py {_version('redis')}")
    print(f"  grimoire  `python -m service.cli serve` on {sys.executable}: "
          f"{'uvloop' if grimoire['uvloop'] else 'asyncio'} loop, {'httptools' if grimoire['httptools'] else 'h11'}, "
          f"{'hiredis' if grimoire['hiredis'] else 'pure-Python RESP'} ({readme})")
    floor = stacks.get("floor_reported")
    reported = ", ".join(f"{k}={v}" for k, v in floor.items()) if floor else "(no floor path run)"
    print(f"  floor     uvicorn --loop uvloop --http httptools on {args.floor_python}: reports {reported}, "
          "orjson responses")
    print(f"  redis     {redis_version}, {redis_desc}")
    print(f"  settings  game={args.game}, concurrency={args.concurrency} over {args.clients} client processes, "
          f"open-loop pool {args.open_pool} per process, warm-up {args.warmup:g} s, {args.seconds:g} s measured "
          f"per mode, seed={args.seed}, match record ~{size} bytes")
    print()


def _ms(values: list[float], q: float) -> float:
    return 1000 * percentile(values, q)


def print_table(rows: dict[str, dict], client_cores: int) -> None:
    header = (f"{'path':<17} {'actions/s':>9} {'ratio':>6} {'srv CPU':>7} {'ms/act':>6} {'ratio':>6} "
              f"{'p50':>6} {'p99':>7} {'client':>6} {'redis':>5} {'other':>5} {'err':>4} {'verdict':<24}| "
              f"{'open rate':>9} {'done/s':>7} {'sub p50':>7} {'sub p99':>7} {'act p50':>7} {'act p99':>7} "
              f"{'late':>4} {'srv CPU':>7}")
    print("closed loop (saturated)" + " " * 78 + "| open loop at half the floor's rate (ms)")
    print(header)
    print("-" * len(header))
    for path, row in rows.items():
        closed, cpu = row["closed"], row["closed_cpu"]
        rate = len(closed["submit"]) / row["closed_seconds"]
        ms_per_action = 1000 * cpu["server"] / rate if rate else float("nan")
        row["rate"], row["ms_per_action"] = rate, ms_per_action
        floor = rows.get(FLOOR_OF.get(path, ""))
        ratio = f"{rate / floor['rate']:.2f}" if floor and floor.get("rate") else "-"
        cpu_ratio = f"{floor['ms_per_action'] / ms_per_action:.2f}" if floor and floor.get("rate") else "-"
        errors = sum(closed["errors"].values()) + sum(row["setup_errors"].values())
        line = (f"{path:<17} {rate:>9.0f} {ratio:>6} {100 * cpu['server']:>6.0f}% {ms_per_action:>6.2f} "
                f"{cpu_ratio:>6} {_ms(closed['submit'], .5):>6.2f} {_ms(closed['submit'], .99):>7.2f} "
                f"{100 * cpu['client']:>5.0f}% {100 * cpu['redis']:>4.0f}% {100 * cpu['other']:>4.0f}% "
                f"{errors:>4} {row_validity(cpu, client_cores):<24}| ")
        if "open" in row:
            o, ocpu = row["open"], row["open_cpu"]
            line += (f"{row['open_rate']:>9.0f} {(len(o['action']) - o['late']) / row['closed_seconds']:>7.0f} "
                     f"{_ms(o['submit'], .5):>7.2f} {_ms(o['submit'], .99):>7.2f} {_ms(o['action'], .5):>7.2f} "
                     f"{_ms(o['action'], .99):>7.2f} {o['late']:>4} {100 * ocpu['server']:>6.0f}%")
        print(line)
    print()
    print("ratio: Grimoire / its floor, actions/s (target >= 0.60, valid rows only) and floor / Grimoire server CPU "
          "ms per action (the server-bound estimate). p50/p99: submission latency in the closed loop, ms.")
    print(f"open loop: target submit p50 <= {OPEN_P50_MS:g} ms and p99 <= {OPEN_P99_MS:g} ms; 'act' is from the "
          "scheduled start (wait for a free player + read + submit); 'late': unanswered 5 s after the window.")
    for path, row in rows.items():
        for label, counter in (("set-up", row["setup_errors"]), ("closed", row["closed"]["errors"]),
                               ("open", row.get("open", {}).get("errors", {}))):
            for key, count in Counter(counter).most_common(5):
                print(f"error  {path} ({label}): {key} x{count}")
    for path, row in rows.items():
        verdict = []
        floor = rows.get(FLOOR_OF.get(path, ""))
        if floor and row_validity(row["closed_cpu"], client_cores) == "valid" \
                and row_validity(floor["closed_cpu"], client_cores) == "valid":
            verdict.append(f"{row['rate'] / floor['rate']:.2f}x its floor "
                           f"({'meets' if row['rate'] / floor['rate'] >= TARGET_RATIO else 'below'} 0.60)")
        elif floor:
            verdict.append("no ratio verdict: a row is INVALID")
        if "open" in row and path in FLOOR_OF:
            p50, p99 = _ms(row["open"]["submit"], .5), _ms(row["open"]["submit"], .99)
            ok = p50 <= OPEN_P50_MS and p99 <= OPEN_P99_MS
            verdict.append(f"open-loop submit p50 {p50:.1f} / p99 {p99:.1f} ms ({'meets' if ok else 'misses'} "
                           f"{OPEN_P50_MS:g}/{OPEN_P99_MS:g})")
        if verdict:
            print(f"{path}: " + "; ".join(verdict))
    busy = [p for p, r in rows.items() if r["closed_cpu"]["other"] > BUSY_MACHINE]
    if busy:
        print(f"warning: other processes used more than {BUSY_MACHINE:.0%} of a core during {', '.join(busy)}: "
              "those figures are noise; run again on a quiet machine")


# -- main --------------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.bench_api", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per path and mode (default 10)")
    parser.add_argument("--warmup", type=float, default=2.0, help="warm-up seconds per path and mode (default 2)")
    parser.add_argument("--concurrency", type=int, default=16, help="closed-loop players in all (default 16)")
    parser.add_argument("--clients", type=int, default=3, help="client processes (default 3)")
    parser.add_argument("--open-pool", type=int, default=16, help="open-loop players per client process (default 16)")
    parser.add_argument("--open-rate", type=float, default=None,
                        help="open-loop actions/s for every path (default: half the floor's saturated rate)")
    parser.add_argument("--no-open-loop", action="store_true", help="closed loop only")
    parser.add_argument("--game", default="casting-stones", help="game Grimoire plays (default casting-stones)")
    parser.add_argument("--paths", default=",".join(PATHS), help=f"comma-separated subset of {','.join(PATHS)}")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--floor-python", default=default_floor_python(),
                        help="interpreter with uvloop/httptools/hiredis/orjson for the floor apps and the clients "
                             "(default $GRIMOIRE_FLOOR_PYTHON, else .venv/floor/bin/python, else this one)")
    parser.add_argument("--profile", metavar="DIR", default=None,
                        help="run Grimoire's servers under cProfile, writing DIR/<path>.pstats (figures are then "
                             "slower: read the profile, not the table)")
    args = parser.parse_args(argv)
    args.paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    if set(args.paths) - set(PATHS):
        parser.error(f"unknown path(s): {', '.join(sorted(set(args.paths) - set(PATHS)))}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import redis

    from service.games import all_games

    games = all_games()
    if args.game not in games:
        print(f"unknown game {args.game!r}; registered: {', '.join(games)}", file=sys.stderr)
        return 2
    floor_stack = interpreter_stack(args.floor_python)
    missing = [m for m, present in floor_stack.items() if not present]
    if missing:
        print(f"The floor needs {', '.join(FAST_STACK)}; {args.floor_python} lacks {', '.join(missing)}. "
              "See this script's docstring: a floor venv (.venv/floor), or "
              "`.venv/bin/pip install uvloop httptools hiredis orjson`.", file=sys.stderr)
        return 2
    game = games[args.game]
    record, action = sample_record(game, args.seed)
    cfg = {"game": game.id, "action": action, "documents": graphql_documents(game), "seed": args.seed}
    stacks = {"grimoire": interpreter_stack(sys.executable)}
    cores = choose_cores()
    client_cores = len(cores[1]) if cores[1] else 1
    key_prefix = f"bench-{uuid.uuid4().hex[:12]}"
    rows: dict[str, dict] = {}
    with redis_server(cores) as (redis_url, redis_desc):
        client = redis.Redis.from_url(redis_url, decode_responses=True)
        try:
            for path in args.paths:
                if path.startswith("floor-"):
                    seed_records(client, key_prefix, path, args, record)
                floor = rows.get(FLOOR_OF.get(path, path))
                if args.no_open_loop:
                    open_rate_of = lambda rate: None  # noqa: E731
                elif args.open_rate:
                    open_rate_of = lambda rate: args.open_rate  # noqa: E731
                elif path.startswith("floor-"):
                    open_rate_of = lambda rate: rate / 2  # noqa: E731
                else:
                    open_rate_of = lambda rate, floor=floor: floor["closed_rate"] / 2 if floor else None  # noqa: E731
                profile = os.path.join(args.profile, f"{path}.pstats") if args.profile and path.startswith("grimoire-") \
                    else None
                with serving(path, redis_url, key_prefix, args.floor_python, profile) as (port, pid):
                    if path.startswith("floor-") and "floor_reported" not in stacks:
                        stacks["floor_reported"] = json.loads(_get(f"http://127.0.0.1:{port}/bench-stack")[1])
                    row = run_path(path, args, port, pid, client, cores, cfg, open_rate_of)
                rows[path] = row
                print(f"  ... {path}: {row['closed_rate']:.0f} actions/s, server "
                      f"{100 * row['closed_cpu']['server']:.0f}% of a core", file=sys.stderr, flush=True)
            print_header(args, redis_desc, client.info("server")["redis_version"], record, stacks, cores)
            print_table(rows, client_cores)
        finally:
            delete_keys(client, key_prefix)
            client.close()
    return 0


if __name__ == "__main__":
    if "--client" in sys.argv[1:]:
        run_client()
    else:
        sys.exit(main())
