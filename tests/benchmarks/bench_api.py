"""Benchmark: action submission over HTTP, REST and GraphQL, beside bare baselines.

Run it from the repository root (a real Redis: ``REDIS_URL``, else an embedded one)::

    python -m tests.benchmarks.bench_api [--seconds N] [--concurrency C] [--game GAME]

It prints figures and exits 0; it asserts nothing about speed.

What is measured
----------------
Four servers run one after the other, each a real uvicorn HTTP server on
127.0.0.1 in its own process (so the load generator does not share its GIL):

``baseline-starlette``
    a bare Starlette app: ``POST /records/{id}/actions`` does the Redis round
    trips of a real submission (one ``HGETALL`` of a hash the size of a match
    record, one ``EVALSHA`` of a script doing the same writes as
    ``commit.lua``: version check, ``HSET``, ``XADD``, ``EXPIRE``, ``PUBLISH``);
``rest``
    the real service (``service.app.create_app``): ``POST /v1/matches/{id}/actions``;
``baseline-strawberry``
    a bare strawberry schema served by ``strawberry.asgi.GraphQL`` (routed by
    Starlette and with the parser and validation caches, as in the real app)
    whose one mutation does the same round trips;
``graphql``
    the real service: the ``submitAction`` mutation.

The load is C asyncio workers on one ``httpx.AsyncClient``. Against a real API
each worker plays its own match of GAME: it creates it, joins every seat, then
loops: read the legal actions of a seat that is to act, pick one (seeded
random), submit it at the version read; a finished match is replaced by a new
one. Only the submission request is timed. Against a baseline each worker owns
one record and loops the same way: an untimed read (``GET /records/{id}``, or
a ``record`` query: one ``HGETALL``), then the timed submission. So every run
has the same shape, one read and one submission per action, and the ratio
API / baseline is the cost of everything Grimoire adds to a bare framework
with the same Redis traffic (marshmallow, authentication, rules, typed views
and schemas, ...). Real workers also create and join matches (not timed,
but on the clock); the "matches" column shows how many.

After a warm-up, submissions that start and end inside the measured window
are counted: ``actions/s`` is that count over the window, p50/p99 their
latency. Errors (any unexpected status, GraphQL error or problem) are counted
over the whole run; none are expected, since each worker owns its match.
CPU columns are the share of one core used during the window by the server
process, this client process, Redis, and everything else on the machine
("other", from /proc/stat). A client near 100% means the load generator, not
the server, is the limit (the ratio then understates the difference); a large
"other" means the machine was busy with something else and the figures are
noise. "server CPU ms/action" is the server's CPU time per action (its read,
its submission, its share of match set-up); the second ratio printed,
baseline / API of that figure, is what the throughput ratio would be if the
server were the only limit. The target, reported and not asserted, is each
API at 60% or more of its baseline's throughput.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional
from urllib.parse import urlsplit

import httpx
import redis
import redis.asyncio as aioredis
import strawberry
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
from strawberry.asgi import GraphQL
from strawberry.extensions import ParserCache, ValidationCache
from strawberry.scalars import JSON

from schema.game_types import pascal
from service.engine import BOARD_SEAT, Game
from service.games import all_games
from service.store.embedded import EmbeddedRedis, free_port, stop_process
from tests.support.high_card import GAME as HIGH_CARD

ROOT = Path(__file__).resolve().parents[2]
MODULE = "tests.benchmarks.bench_api"
SERVER_ENV = "GRIMOIRE_BENCH_SERVER"  # the JSON config a server process reads
APIS = ("baseline-starlette", "rest", "baseline-strawberry", "graphql")
RATIOS = (("rest", "baseline-starlette"), ("graphql", "baseline-strawberry"))
TARGET_RATIO = 0.60
CLIENT_BOUND = 0.90  # client CPU during a window, above which the load generator is the limit
BUSY_MACHINE = 0.25  # CPU used by other processes during a window, above which figures are noise
TTL = 3600


# -- games and records ----------------------------------------------------------


def bench_games(game_id: str) -> dict[str, Game]:
    """The games a server hosts: every registered game, plus high-card when asked for."""
    games = all_games()
    if game_id == HIGH_CARD.id:
        games = {**games, HIGH_CARD.id: HIGH_CARD}
    return games


def default_game() -> str:
    return "casting-stones" if "casting-stones" in all_games() else HIGH_CARD.id


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


def sample_record(game: Game, seed: int) -> tuple[dict[str, str], dict]:
    """A match record (the fields ``MatchStore`` writes) of a game played a few
    random actions in, and one of those actions: what a baseline reads and writes."""
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
        "game": game.id, "variant": options["variant"], "options": _dumps(options), "seed": str(seed),
        "seats": str(seats), "state": _dumps(state), "version": "0", "status": "active",
        "to_act": _dumps(sorted(game.to_act(state))), "result": "", "created": str(now), "updated": str(now),
    }
    for i in range(seats):
        token_hash = hashlib.sha256(os.urandom(32)).hexdigest()
        record[f"seat:{i}"] = _dumps({"name": f"bench-{i}", "token": token_hash, "joined": now})
    return record, action


def record_key(prefix: str, record_id: str) -> str:
    return f"{prefix}:b:{{{record_id}}}"


# -- the baseline servers --------------------------------------------------------

BASELINE_COMMIT = """
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


class BareRecords:
    """The Redis work of a submission and nothing else: one HGETALL, one EVALSHA."""

    def __init__(self, redis_url: str, prefix: str):
        self.redis_url = redis_url
        self.prefix = prefix
        self.client = None
        self.commit_script = None

    @contextlib.asynccontextmanager
    async def lifespan(self, app):
        self.client = aioredis.Redis.from_url(self.redis_url, decode_responses=True, socket_timeout=5,
                                              socket_connect_timeout=2, health_check_interval=10)
        self.commit_script = self.client.register_script(BASELINE_COMMIT)
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
                  _dumps(action), "[]", int(time.time() * 1000), f"{key}:events", TTL])
        return reply[0], int(reply[1]) if len(reply) > 1 else None


def baseline_starlette_app(records: BareRecords) -> Starlette:
    async def read(request):
        record = await records.read(request.path_params["id"])
        if not record:
            return JSONResponse({"code": "missing"}, status_code=404)
        return JSONResponse({"version": int(record["version"])})

    async def submit(request):
        expected = int(request.headers["if-match"].strip('"'))
        body = await request.json()
        outcome, version = await records.submit(request.path_params["id"], expected, body["action"])
        if outcome != "ok":
            return JSONResponse({"code": outcome, "current_version": version}, status_code=412)
        return JSONResponse({"version": version}, headers={"ETag": f'"{version}"'})

    return Starlette(routes=[Route("/records/{id}", read, methods=["GET"]),
                             Route("/records/{id}/actions", submit, methods=["POST"])],
                     lifespan=records.lifespan)


def baseline_strawberry_app(records: BareRecords) -> Starlette:
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

    # The parse and validation caches the real schema has too: without them strawberry parses and
    # validates every request again (about 20 times slower here) and the baseline would be no floor.
    caches = [lambda: ParserCache(maxsize=256), lambda: ValidationCache(maxsize=256)]
    graphql = GraphQL(strawberry.Schema(query=Query, mutation=Mutation, extensions=caches), graphql_ide=None)
    return Starlette(routes=[Route("/graphql", graphql, methods=["POST"])], lifespan=records.lifespan)


def server_app():
    """The uvicorn factory every server process runs; configured by $GRIMOIRE_BENCH_SERVER."""
    config = json.loads(os.environ[SERVER_ENV])
    if config["api"] in ("rest", "graphql"):
        from service.app import create_app
        from service.settings import Settings

        return create_app(Settings(redis_url=config["redis_url"], key_prefix=config["key_prefix"],
                                   rate_limit_per_token=0, rate_limit_per_address=0),  # the baselines have none
                          games=bench_games(config["game"]))
    records = BareRecords(config["redis_url"], config["key_prefix"])
    if config["api"] == "baseline-starlette":
        return baseline_starlette_app(records)
    return baseline_strawberry_app(records)


@contextlib.contextmanager
def serving(api: str, redis_url: str, key_prefix: str, game_id: str):
    """Run one server in its own process; yield (base URL, pid)."""
    port = free_port()
    config = {"api": api, "redis_url": redis_url, "key_prefix": key_prefix, "game": game_id}
    command = [sys.executable, "-m", "uvicorn", f"{MODULE}:server_app", "--factory",
               "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--no-access-log"]
    process = subprocess.Popen(command, cwd=ROOT, env={**os.environ, SERVER_ENV: json.dumps(config)})
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, process)
        yield url, process.pid
    finally:
        stop_process(process, timeout=15)


def _wait_until_up(url: str, process: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with status {process.returncode}")
        try:
            httpx.get(f"{url}/bench-ready", timeout=1)  # any answer, 404 included, means it is up
            return
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server at {url} did not come up")
            time.sleep(0.05)


# -- players: one worker's view of one API ----------------------------------------


class Failure(Exception):
    """An unexpected answer; ``key`` is how it is counted (e.g. ``412 version_conflict``)."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _problem_key(response: httpx.Response) -> str:
    try:
        code = response.json().get("code", "")
    except ValueError:
        code = response.text[:60]
    return f"{response.status_code} {code}".strip()


def expect(response: httpx.Response, status: int) -> dict:
    if response.status_code != status:
        raise Failure(_problem_key(response))
    return response.json()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class RestPlayer:
    """Plays its own matches through ``/v1``."""

    def __init__(self, http: httpx.AsyncClient, game: Game, rng: random.Random):
        self.http, self.game, self.rng = http, game, rng
        self.needs_match = True
        self.match_id = ""
        self.tokens: dict[int, str] = {}
        self.to_act: list[int] = []

    async def setup(self) -> None:
        created = expect(await self.http.post("/v1/matches", json={"game": self.game.id,
                                                                   "seed": self.rng.getrandbits(63)}), 201)
        self.match_id, self.tokens = created["id"], {}
        for _ in created["seats"]:
            joined = expect(await self.http.post(f"/v1/matches/{self.match_id}/seats", json={"name": "bench"}), 201)
            self.tokens[joined["seat"]] = joined["token"]
        self._absorb(joined["match"])

    async def read(self) -> tuple:
        seat = self.rng.choice(self.to_act)
        legal = expect(await self.http.get(f"/v1/matches/{self.match_id}/legal-actions",
                                           headers=bearer(self.tokens[seat])), 200)
        if not legal["actions"]:
            raise Failure("read: no legal actions for a seat to act")
        return seat, legal["version"], self.rng.choice(legal["actions"])

    async def send(self, prepared: tuple) -> httpx.Response:
        seat, version, action = prepared
        return await self.http.post(f"/v1/matches/{self.match_id}/actions", json={"action": action},
                                    headers={**bearer(self.tokens[seat]), "If-Match": f'"{version}"'})

    def settle(self, response: httpx.Response) -> None:
        self._absorb(expect(response, 200)["match"])

    def _absorb(self, match: dict) -> None:
        self.to_act = [seat for seat in match["to_act"] if seat != BOARD_SEAT]  # no worker plays the board here:
        self.needs_match = match["status"] != "active" or not self.to_act  # a match waiting on it is replaced


def selection(schema: dict) -> str:
    """A GraphQL selection set asking for every field of a JSON Schema object."""
    fields = []
    for key, prop in schema["properties"].items():
        item = prop
        while "array" in _kinds(item):
            item = item.get("items", {})
        fields.append(f"{key} {selection(item)}" if "object" in _kinds(item) else key)
    return "{ " + " ".join(fields) + " }"


def _kinds(prop: dict) -> list:
    kind = prop.get("type")
    return kind if isinstance(kind, list) else [kind]


@dataclass
class GraphQLDocuments:
    """The operations a GraphQL player sends, with selections generated from the game's schemas."""

    create: str
    join: str
    read: str
    submit: str
    action_field: str  # the ActionInput field named after the game

    @classmethod
    def for_game(cls, game: Game) -> "GraphQLDocuments":
        prefix = pascal(game.id)
        actions = " ".join(f"... on {prefix}{pascal(t)}Action {selection(s)}"
                           for t, s in sorted(game.action_schemas.items()))
        match = f"id version status toAct mySeat view {{ ... on {prefix}View {selection(game.view_schema)} }}"
        problem = "... on Problem { code message }"
        return cls(
            create=("mutation($input: CreateMatchInput!) { createMatch(input: $input) { __typename "
                    f"... on MatchCreated {{ match {{ id seats {{ seat }} }} }} {problem} }} }}"),
            join=("mutation($input: JoinMatchInput!) { joinMatch(input: $input) { __typename "
                  f"... on SeatJoined {{ seat token match {{ status toAct }} }} {problem} }} }}"),
            read=("query($id: ID!) { match(id: $id) { __typename "
                  f"... on Match {{ version status toAct legalActions {{ __typename {actions} }} }} {problem} }} }}"),
            submit=("mutation($input: SubmitActionInput!) { submitAction(input: $input) { __typename "
                    f"... on ActionAccepted {{ version events duplicate match {{ {match} }} }} {problem} }} }}"),
            action_field=prefix[0].lower() + prefix[1:],
        )


def graphql_payload(response: httpx.Response, field_name: str, typename: str | None = None) -> Any:
    """``data[field_name]`` of a GraphQL response, or a Failure naming what went wrong."""
    if response.status_code != 200:
        raise Failure(f"HTTP {response.status_code}")
    body = response.json()
    if body.get("errors"):
        raise Failure(f"GraphQL error: {body['errors'][0].get('message', '')[:80]}")
    payload = body["data"][field_name]
    if typename is not None and payload.get("__typename") != typename:
        raise Failure(f"{payload.get('__typename')} {payload.get('code', '')}".strip())
    return payload


class GraphQLPlayer:
    """Plays its own matches through ``/graphql``."""

    def __init__(self, http: httpx.AsyncClient, game: Game, rng: random.Random, docs: GraphQLDocuments):
        self.http, self.game, self.rng, self.docs = http, game, rng, docs
        self.needs_match = True
        self.match_id = ""
        self.tokens: dict[int, str] = {}
        self.to_act: list[int] = []

    async def _call(self, document: str, variables: dict, field_name: str, typename: str,
                    token: str | None = None) -> dict:
        response = await self.http.post("/graphql", json={"query": document, "variables": variables},
                                        headers=bearer(token) if token else None)
        return graphql_payload(response, field_name, typename)

    async def setup(self) -> None:
        created = await self._call(self.docs.create, {"input": {"game": self.game.id,
                                                                "seed": str(self.rng.getrandbits(63))}},
                                   "createMatch", "MatchCreated")
        self.match_id, self.tokens = created["match"]["id"], {}
        for _ in created["match"]["seats"]:
            joined = await self._call(self.docs.join, {"input": {"matchId": self.match_id, "name": "bench"}},
                                      "joinMatch", "SeatJoined")
            self.tokens[joined["seat"]] = joined["token"]
        self._absorb(joined["match"])

    async def read(self) -> tuple:
        seat = self.rng.choice(self.to_act)
        match = await self._call(self.docs.read, {"id": self.match_id}, "match", "Match", self.tokens[seat])
        if not match["legalActions"]:
            raise Failure("read: no legal actions for a seat to act")
        chosen = self.rng.choice(match["legalActions"])
        action = {k: v for k, v in chosen.items() if k != "__typename" and v is not None}
        return seat, match["version"], action

    async def send(self, prepared: tuple) -> httpx.Response:
        seat, version, action = prepared
        variables = {"input": {"matchId": self.match_id, "expectedVersion": version,
                               "action": {self.docs.action_field: action}}}
        return await self.http.post("/graphql", json={"query": self.docs.submit, "variables": variables},
                                    headers=bearer(self.tokens[seat]))

    def settle(self, response: httpx.Response) -> None:
        self._absorb(graphql_payload(response, "submitAction", "ActionAccepted")["match"])

    def _absorb(self, match: dict) -> None:
        self.to_act = [seat for seat in match["toAct"] if seat != BOARD_SEAT]  # no worker plays the board here:
        self.needs_match = match["status"] != "active" or not self.to_act  # a match waiting on it is replaced


class BaselineStarlettePlayer:
    """Reads and submits to its own pre-seeded record on the bare Starlette app."""

    def __init__(self, http: httpx.AsyncClient, record_id: str, action: dict):
        self.http, self.record_id, self.action = http, record_id, action
        self.needs_match = False

    async def setup(self) -> None:
        self.needs_match = False

    async def read(self) -> int:
        return expect(await self.http.get(f"/records/{self.record_id}"), 200)["version"]

    async def send(self, version: int) -> httpx.Response:
        return await self.http.post(f"/records/{self.record_id}/actions", json={"action": self.action},
                                    headers={"If-Match": f'"{version}"'})

    def settle(self, response: httpx.Response) -> None:
        expect(response, 200)


class BaselineStrawberryPlayer:
    """Reads and submits to its own pre-seeded record on the bare strawberry app."""

    READ = "query($id: String!) { record(id: $id) }"
    SUBMIT = ("mutation($id: String!, $expectedVersion: Int!, $action: JSON!) "
              "{ submit(id: $id, expectedVersion: $expectedVersion, action: $action) }")

    def __init__(self, http: httpx.AsyncClient, record_id: str, action: dict):
        self.http, self.record_id, self.action = http, record_id, action
        self.needs_match = False

    async def setup(self) -> None:
        self.needs_match = False

    async def read(self) -> int:
        response = await self.http.post("/graphql", json={"query": self.READ, "variables": {"id": self.record_id}})
        version = graphql_payload(response, "record")
        if version is None:
            raise Failure("read: no record")
        return version

    async def send(self, version: int) -> httpx.Response:
        variables = {"id": self.record_id, "expectedVersion": version, "action": self.action}
        return await self.http.post("/graphql", json={"query": self.SUBMIT, "variables": variables})

    def settle(self, response: httpx.Response) -> None:
        if graphql_payload(response, "submit") is None:
            raise Failure("version conflict or missing record")


# -- the load ---------------------------------------------------------------------


@dataclass
class Window:
    """The measured interval, in ``time.perf_counter()`` seconds."""

    start: float
    end: float

    def contains(self, started: float, ended: float) -> bool:
        return self.start <= started and ended <= self.end

    def over(self) -> bool:
        return time.perf_counter() >= self.end


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)
    matches: int = 0


async def worker(player, window: Window, stats: Stats) -> None:
    """Read (untimed), submit (timed), until the window closes; a new match when one ends."""
    while not window.over():
        try:
            if player.needs_match:
                await player.setup()
                stats.matches += 1
            prepared = await player.read()
            started = time.perf_counter()
            response = await player.send(prepared)
            ended = time.perf_counter()
            player.settle(response)
        except Failure as failure:
            stats.errors[failure.key] += 1
            player.needs_match = True
            continue
        except httpx.HTTPError as error:
            stats.errors[type(error).__name__] += 1
            player.needs_match = True
            await asyncio.sleep(0.05)
            continue
        if window.contains(started, ended):
            stats.latencies.append(ended - started)


class CpuMeter:
    """CPU seconds used so far by the server process, this process and Redis."""

    def __init__(self, server_pid: int, redis_client: redis.Redis):
        self.server_pid = server_pid
        self.redis = redis_client

    def sample(self) -> dict[str, float]:
        return {"wall": time.perf_counter(), "server": _process_cpu(self.server_pid),
                "client": time.process_time(), "redis": _redis_cpu(self.redis), "machine": _machine_cpu()}


def _process_cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _machine_cpu() -> float:
    """CPU seconds the whole machine has been busy (all cores, every process)."""
    try:
        ticks = [int(t) for t in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    except OSError:
        return float("nan")
    idle = ticks[3] + ticks[4]  # idle + iowait
    return (sum(ticks) - idle) / os.sysconf("SC_CLK_TCK")


def _redis_cpu(client: redis.Redis) -> float:
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


@dataclass
class Outcome:
    api: str
    stats: Stats
    seconds: float
    cpu: dict[str, float]  # share of one core, by process

    @property
    def throughput(self) -> float:
        return len(self.stats.latencies) / self.seconds

    @property
    def server_ms_per_action(self) -> float:
        """Server CPU per action (its read and submission, and its share of match set-up)."""
        return 1000 * self.cpu["server"] / self.throughput if self.throughput else float("nan")


async def run_load(api: str, make_player, base_url: str, concurrency: int, warmup: float, seconds: float,
                   meter: CpuMeter) -> Outcome:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=30) as http:
        now = time.perf_counter()
        window = Window(now + warmup, now + warmup + seconds)
        stats = Stats()
        tasks = [asyncio.create_task(worker(make_player(http, i), window, stats)) for i in range(concurrency)]
        await asyncio.sleep(max(0.0, window.start - time.perf_counter()))
        before = meter.sample()
        await asyncio.sleep(max(0.0, window.end - time.perf_counter()))
        after = meter.sample()
        await asyncio.gather(*tasks)
    wall = after["wall"] - before["wall"]
    cpu = {name: (after[name] - before[name]) / wall for name in ("server", "client", "redis", "machine")}
    cpu["other"] = cpu.pop("machine") - cpu["server"] - cpu["client"] - cpu["redis"]
    return Outcome(api, stats, seconds, cpu)


def player_factory(api: str, game: Game, seed: int, action: dict):
    """A function (http client, worker index) -> player for ``api``."""
    if api == "rest":
        return lambda http, i: RestPlayer(http, game, random.Random(seed * 1000 + i))
    if api == "graphql":
        docs = GraphQLDocuments.for_game(game)
        return lambda http, i: GraphQLPlayer(http, game, random.Random(seed * 1000 + i), docs)
    if api == "baseline-starlette":
        return lambda http, i: BaselineStarlettePlayer(http, f"starlette-{i}", action)
    return lambda http, i: BaselineStrawberryPlayer(http, f"strawberry-{i}", action)


def seed_records(client: redis.Redis, prefix: str, api: str, concurrency: int, record: dict) -> None:
    """One record per baseline worker, at version 0."""
    kind = api.removeprefix("baseline-")
    with client.pipeline(transaction=False) as pipe:
        for i in range(concurrency):
            key = record_key(prefix, f"{kind}-{i}")
            pipe.delete(key, f"{key}:log")
            pipe.hset(key, mapping=record)
            pipe.expire(key, TTL)
        pipe.execute()


# -- redis --------------------------------------------------------------------------


@contextlib.contextmanager
def redis_server():
    """Yield (URL, description): $REDIS_URL, or an embedded redis-server for the run."""
    url = os.environ.get("REDIS_URL")
    if url:
        parts = urlsplit(url)
        yield url, f"REDIS_URL ({parts.hostname}:{parts.port or 6379})"
        return
    with tempfile.TemporaryDirectory(prefix="grimoire-bench-") as data_dir:
        server = EmbeddedRedis(data_dir, persist=False)
        try:
            yield server.url, f"embedded ({server.url})"
        finally:
            server.stop()


def delete_keys(client: redis.Redis, prefix: str) -> int:
    deleted = 0
    batch = []
    for key in client.scan_iter(match=f"{prefix}:*", count=1000):
        batch.append(key)
        if len(batch) >= 500:
            deleted += client.delete(*batch)
            batch = []
    if batch:
        deleted += client.delete(*batch)
    return deleted


# -- report -------------------------------------------------------------------------


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
        return "?"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def print_header(args, redis_desc: str, redis_version: str, record: dict) -> None:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    http_impl = "httptools" if importlib.util.find_spec("httptools") else "h11"
    size = sum(len(k) + len(v) for k, v in record.items())
    print("Grimoire API benchmark: action submission over HTTP")
    print(f"  machine   {os.cpu_count()} cores ({usable} usable), {_cpu_model()}, {platform.system()} "
          f"{platform.release()}")
    print(f"  load      {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min averages, before the run)")
    print(f"  python    {platform.python_version()} ({platform.python_implementation()})")
    print(f"  stack     uvicorn {_version('uvicorn')} ({loop} loop, {http_impl}), starlette {_version('starlette')}, "
          f"strawberry-graphql {_version('strawberry-graphql')}, redis-py {_version('redis')}, "
          f"client httpx {_version('httpx')}")
    print(f"  redis     {redis_version}, {redis_desc}")
    print(f"  settings  game={args.game}, concurrency={args.concurrency}, warm-up={args.warmup:g} s, "
          f"measured={args.seconds:g} s per API, seed={args.seed}, match record ~{size} bytes")
    print()


def print_table(outcomes: dict[str, Outcome]) -> None:
    header = (f"{'API':<20} {'actions/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} {'matches':>8}"
              f" {'server CPU ms/action':>21}   CPU % of a core: server / client / redis / other")
    print(header)
    print("-" * len(header))
    for api, o in outcomes.items():
        lat = o.stats.latencies
        matches = str(o.stats.matches) if api in ("rest", "graphql") else "-"
        cpu = " / ".join(f"{100 * o.cpu[k]:3.0f}" for k in ("server", "client", "redis", "other"))
        print(f"{api:<20} {o.throughput:>10.1f} {1000 * percentile(lat, 0.50):>8.2f} "
              f"{1000 * percentile(lat, 0.99):>8.2f} {sum(o.stats.errors.values()):>7} {matches:>8}"
              f" {o.server_ms_per_action:>21.2f}   {cpu}")
    print()
    print_ratios(outcomes)
    for api, o in outcomes.items():
        for key, count in o.stats.errors.most_common():
            print(f"error  {api}: {key} x{count}")
    busy = [api for api, o in outcomes.items() if o.cpu["other"] > BUSY_MACHINE]
    if busy:
        print(f"warning: other processes kept the machine busy during {', '.join(busy)} "
              f"(more than {BUSY_MACHINE:.0%} of a core): those figures are noise, run again on a quiet machine")
    client_bound = [api for api, o in outcomes.items() if o.cpu["client"] > CLIENT_BOUND]
    if client_bound:
        print(f"note: the load generator used more than {CLIENT_BOUND:.0%} of a core during {', '.join(client_bound)}: "
              "that throughput is capped by the client, not the server; the server-CPU ratio is the better guide")


def print_ratios(outcomes: dict[str, Outcome]) -> None:
    """API / baseline by throughput (the target) and by server CPU per action (the server-bound estimate)."""
    for api, baseline in RATIOS:
        if api not in outcomes or baseline not in outcomes or not outcomes[baseline].throughput:
            continue
        ratio = outcomes[api].throughput / outcomes[baseline].throughput
        cpu_ratio = outcomes[baseline].server_ms_per_action / outcomes[api].server_ms_per_action
        verdict = "meets" if ratio >= TARGET_RATIO else "below"
        print(f"{api + ' / ' + baseline:<32} throughput {ratio:5.2f} ({verdict} the {TARGET_RATIO:.0%} target);"
              f" server CPU per action {cpu_ratio:5.2f}")


# -- main ---------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.bench_api",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per API (default 10)")
    parser.add_argument("--warmup", type=float, default=2.0, help="warm-up seconds per API (default 2)")
    parser.add_argument("--concurrency", type=int, default=16, help="concurrent workers (default 16)")
    parser.add_argument("--game", default=None,
                        help="game to play (default casting-stones when registered, else high-card)")
    parser.add_argument("--apis", default=",".join(APIS), help=f"comma-separated subset of {','.join(APIS)}")
    parser.add_argument("--seed", type=int, default=1, help="seed of matches and action choices (default 1)")
    args = parser.parse_args(argv)
    args.game = args.game or default_game()
    args.apis = [a.strip() for a in args.apis.split(",") if a.strip()]
    unknown = set(args.apis) - set(APIS)
    if unknown:
        parser.error(f"unknown API(s): {', '.join(sorted(unknown))}")
    if args.game not in bench_games(args.game):
        parser.error(f"unknown game {args.game!r}; registered: {', '.join(bench_games(HIGH_CARD.id))}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    game = bench_games(args.game)[args.game]
    record, action = sample_record(game, args.seed)
    key_prefix = f"bench-{uuid.uuid4().hex[:12]}"
    with redis_server() as (redis_url, redis_desc):
        client = redis.Redis.from_url(redis_url, decode_responses=True)
        try:
            print_header(args, redis_desc, client.info("server")["redis_version"], record)
            outcomes = {}
            for api in args.apis:
                if api.startswith("baseline-"):
                    seed_records(client, key_prefix, api, args.concurrency, record)
                with serving(api, redis_url, key_prefix, args.game) as (url, pid):
                    outcomes[api] = asyncio.run(run_load(
                        api, player_factory(api, game, args.seed, action), url, args.concurrency,
                        args.warmup, args.seconds, CpuMeter(pid, client)))
            print_table(outcomes)
        finally:
            delete_keys(client, key_prefix)
            client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
