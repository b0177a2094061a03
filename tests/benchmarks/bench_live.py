"""Benchmark: live delivery to many subscribers, Grimoire SSE and GraphQL websocket beside an SSE fan-out floor.

Run it from the repository root (a real Redis: ``REDIS_URL``, else an embedded one)::

    .venv/bin/python -m tests.benchmarks.bench_live [--subscribers 100,1000] [--seconds 10] [--rate 5]
        [--ws-3000] [--two-process 10000] [--kinds floor-sse,sse,ws]

It prints one table and exits 0; it asserts nothing (issue #18: targets live in benchmarks, not in tests).
The floor needs ``uvloop httptools hiredis orjson`` in its interpreter: see ``bench_api``'s docstring (a
floor venv at ``.venv/floor``, ``--floor-python`` or ``$GRIMOIRE_FLOOR_PYTHON``).

What is measured
----------------
For each N in ``--subscribers`` and each kind, in the same run, one after the other, each on a fresh server
process pinned to one core (subscriber client processes and an embedded Redis on the other):

``floor-sse``
    a bare Starlette SSE fan-out on uvicorn with uvloop and httptools, redis-py with hiredis, orjson: one
    Redis subscription per process (``PSUBSCRIBE``); per update it reads the log entry once (``XRANGE``),
    encodes it once and queues the same bytes to every follower's ``StreamingResponse``. Its writes are
    the floor submission of ``bench_api`` (``HGETALL`` + the ``EVALSHA`` that ``PUBLISH``\\ es);
``sse``
    ``grimoire serve`` (``python -m service.cli serve``, as the README installs it): N spectators on
    ``GET /v1/matches/{id}/events`` (Server-Sent Events);
``ws``
    the same, on the GraphQL websocket (``graphql-transport-ws``): N ``matchEvents`` subscriptions selecting
    ``version seat events status toAct at``.

All N follow one match (a Casting Stones match with no turn limit; for the floor, one record). A writer in
this process submits one action every 1/``--rate`` s (default 5/s; a schedule, not back-to-back) for
``--seconds``: against Grimoire over REST (legal actions, then the submission), against the floor its
submit route. The delay of a delivery runs from the writer's acknowledgement (the answer to its submission)
to the subscriber's receipt of that version (both ``time.time()`` on this machine); a delivery that beat the
acknowledgement counts as 0 ms (and is counted: "early"). "lost": versions acknowledged in the window that a
subscriber had not received 2 s after the last write, summed over subscribers.

Memory per subscriber: the server's resident set (``VmRSS``) once all N are connected and idle, less
before they connected, over N. Server CPU: its share of one core during the writes. Subscriber clients are
raw asyncio (uvloop) processes, ``--per-client`` subscribers each (default 1000), that parse nothing but the
SSE ``id:`` line or a regex on the websocket frame; their CPU is printed ("client", share of one core, all
processes) so a client-bound run shows: with the client core full, delays measure the clients.

``--ws-3000`` adds N=3000 (floor-sse and ws); ``--two-process N`` adds N subscribers split over two server
processes on the same Redis (one per core; the writer talks to the first, so the second's updates come
through Redis), every kind.

Targets (issue #18): at N=1000, p99 <= 50 ms on SSE and on the websocket (the floor: 37 ms), <= 24 KiB server
memory per subscriber; at N=3000 on the websocket, nothing lost at 5 updates/s.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import math
import os
import random
import re
import struct
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

from tests.benchmarks.bench_api import (
    FAST_STACK, ROOT, SERVER_ENV, Conn, FloorRecords, _get, choose_cores, default_floor_python, delete_keys,
    declared_dependencies, dumps, expect, free_port, grimoire_command, grimoire_env, http_request, interpreter_stack,
    machine_cpu, percentile, process_cpu, record_key, redis_cpu, redis_server, sample_record, server_log,
    stop_process, wait_up, answer, run_with_fastest_loop,
)

MODULE = "tests.benchmarks.bench_live"
KINDS = ("floor-sse", "sse", "ws")
P99_TARGET_MS, MEMORY_TARGET_KIB = 50.0, 24.0
DRAIN = 2.0  # seconds after the last write before deliveries are counted
TTL = 3600
WS_QUERY = ("subscription($id: ID!) { matchEvents(matchId: $id, after: 0) { __typename "
            "... on MatchEvent { version seat events status toAct at } ... on StreamEnded { reason } } }")
VERSION = re.compile(rb'"version":(\d+)')


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# -- the SSE fan-out floor (run by the floor interpreter) -------------------------------------------------


def floor_live_app():
    """A bare Starlette SSE fan-out: one Redis subscription per process, each update encoded once."""
    import orjson
    from starlette.applications import Starlette
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    config = json.loads(os.environ[SERVER_ENV])
    prefix = config["key_prefix"]
    records = FloorRecords(config["redis_url"], prefix)
    followers: dict[str, set[asyncio.Queue]] = {}

    async def fan_out() -> None:
        pubsub = records.client.pubsub()
        await pubsub.psubscribe(f"{prefix}:b:*")
        async for message in pubsub.listen():
            if message["type"] != "pmessage":
                continue
            key = message["channel"].removesuffix(":events")
            queues = followers.get(key[key.index("{") + 1:key.rindex("}")])
            if not queues:
                continue
            version = int(message["data"])
            entries = await records.client.xrange(f"{key}:log", f"{version}-0", f"{version}-0")
            fields = entries[0][1] if entries else {}
            data = orjson.dumps({"version": version, "seat": int(fields.get("seat", 0)),
                                 "action": orjson.loads(fields.get("action", "null")),
                                 "events": orjson.loads(fields.get("events", "[]")), "at": int(fields.get("at", 0))})
            frame = b"id: %d\nevent: action\ndata: %s\n\n" % (version, data)
            for queue in queues:
                queue.put_nowait(frame)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        async with records.lifespan(app):
            task = asyncio.create_task(fan_out())
            try:
                yield
            finally:
                task.cancel()

    async def events(request):
        record_id = request.path_params["id"]
        queue: asyncio.Queue = asyncio.Queue()
        followers.setdefault(record_id, set()).add(queue)

        async def stream():
            try:
                while True:
                    yield await queue.get()
            finally:
                followers[record_id].discard(queue)

        return StreamingResponse(stream(), media_type="text/event-stream")

    async def submit(request):
        expected = int(request.headers["if-match"].strip('"'))
        body = orjson.loads(await request.body())
        outcome, version = await records.submit(request.path_params["id"], expected, body["action"])
        status = 200 if outcome == "ok" else 412
        return Response(orjson.dumps({"version": version, "code": outcome}), status, media_type="application/json")

    async def stack(request):
        return Response(orjson.dumps(records.stack()), media_type="application/json")

    return Starlette(routes=[Route("/records/{id}/events", events), Route("/records/{id}/actions", submit,
                                                                           methods=["POST"]),
                             Route("/bench-stack", stack)], lifespan=lifespan)


# -- subscriber client processes ---------------------------------------------------------------------------


async def sse_subscriber(host: str, port: int, path: str, received: list, ready: asyncio.Event) -> None:
    reader, writer = await asyncio.open_connection(host, port, limit=1 << 20)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n".encode())
        head = await reader.readuntil(b"\r\n\r\n")
        if int(head[9:12]) != 200:
            raise ConnectionError(f"HTTP {int(head[9:12])}")
        chunked = b"transfer-encoding: chunked" in head.lower()
        ready.set()
        buffer = b""
        while True:
            if chunked:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    raise ConnectionError("stream ended by the server")
                data = (await reader.readexactly(size + 2))[:-2]
            else:
                data = await reader.read(65536)
                if not data:
                    raise ConnectionError("stream ended by the server")
            now = time.time()
            buffer += data
            while (end := buffer.find(b"\n\n")) >= 0:
                event, buffer = buffer[:end], buffer[end + 2:]
                if event.startswith(b"id: ") and b"\nevent: action" in event:
                    received.append((int(event[4:event.index(b"\n")]), now))
                elif b"event: end" in event:
                    raise ConnectionError(f"end event: {event[-60:].decode(errors='replace')}")
    finally:
        writer.close()


def _ws_frame(opcode: int, payload: bytes) -> bytes:
    """A masked client frame."""
    mask = os.urandom(4)
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    masked = (int.from_bytes(payload, "big") ^ int.from_bytes((mask * (n // 4 + 1))[:n], "big")).to_bytes(n, "big") \
        if n else b""
    return head + mask + masked


async def _ws_read(reader) -> tuple[int, bytes]:
    b0, b1 = await reader.readexactly(2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", await reader.readexactly(2))[0]
    elif n == 127:
        n = struct.unpack("!Q", await reader.readexactly(8))[0]
    return b0 & 0x0F, await reader.readexactly(n)  # a server's frames are not masked


async def ws_subscriber(host: str, port: int, match_id: str, received: list, ready: asyncio.Event) -> None:
    reader, writer = await asyncio.open_connection(host, port, limit=1 << 20)
    try:
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write((f"GET /graphql HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                      "Sec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n").encode())
        head = await reader.readuntil(b"\r\n\r\n")
        if int(head[9:12]) != 101:
            raise ConnectionError(f"HTTP {int(head[9:12])}")
        writer.write(_ws_frame(1, b'{"type":"connection_init","payload":{}}'))
        opcode, payload = await _ws_read(reader)
        if b"connection_ack" not in payload:
            raise ConnectionError(f"no connection_ack: {payload[:80]!r}")
        writer.write(_ws_frame(1, json.dumps({"id": "1", "type": "subscribe", "payload": {
            "query": WS_QUERY, "variables": {"id": match_id}}}).encode()))
        ready.set()
        while True:
            opcode, payload = await _ws_read(reader)
            now = time.time()
            if opcode == 1 and b'"next"' in payload:
                found = VERSION.search(payload)
                if found:
                    received.append((int(found.group(1)), now))
                elif b"StreamEnded" in payload:
                    raise ConnectionError(f"StreamEnded: {payload[-80:].decode(errors='replace')}")
            elif opcode == 1 and (b'"complete"' in payload or b'"error"' in payload):
                raise ConnectionError(f"subscription ended: {payload[:80].decode(errors='replace')}")
            elif opcode == 8:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 0
                raise ConnectionError(f"closed by the server: {code} {payload[2:60].decode(errors='replace')}")
            elif opcode == 9:
                writer.write(_ws_frame(10, payload))
    finally:
        writer.close()


async def client_main() -> None:
    loop = asyncio.get_running_loop()
    readline = lambda: loop.run_in_executor(None, sys.stdin.readline)  # noqa: E731
    cfg = json.loads(await readline())
    receipts: list[list] = []
    tasks, errors = [], Counter()
    readies = []
    for i in range(cfg["count"]):
        host, port = cfg["targets"][(cfg["first"] + i) % len(cfg["targets"])]
        received: list = []
        receipts.append(received)
        ready = asyncio.Event()
        readies.append(ready)
        if cfg["kind"] == "ws":
            coroutine = ws_subscriber(host, port, cfg["match_id"], received, ready)
        else:
            coroutine = sse_subscriber(host, port, cfg["path"], received, ready)
        tasks.append(asyncio.create_task(coroutine))
        if i % 50 == 49:
            await asyncio.sleep(0.02)  # do not stampede the accept queue
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not all(r.is_set() or t.done() for r, t in zip(readies, tasks)):
        await asyncio.sleep(0.05)
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception():
            errors[(type(task.exception()).__name__ + ": " + str(task.exception())).replace("\n", " ")[:110]] += 1
    answer({"connected": sum(r.is_set() for r in readies), "errors": dict(errors)})
    command = json.loads(await readline())
    acks = {int(v): t for v, t in command["acks"].items()}
    delays, lost, early, closed = [], 0, 0, Counter()
    for received, task in zip(receipts, tasks):
        got = {}
        for version, at in received:
            got.setdefault(version, at)
        for version, ack in acks.items():
            if version in got:
                delay = got[version] - ack
                early += delay < 0
                delays.append(round(max(0.0, delay) * 1000, 3))
            else:
                lost += 1
        if task.done():
            error = None if task.cancelled() else task.exception()
            closed[f"{type(error).__name__}: {error}".replace("\n", " ")[:110] if error else "returned"] += 1
    for task in tasks:
        task.cancel()
    answer({"delays": delays, "lost": lost, "early": early, "closed": closed})


def run_client() -> None:
    run_with_fastest_loop(client_main)


# -- the coordinator ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def servers(kind: str, count: int, redis_url: str, prefix: str, floor_python: str, cores,
            profile_dir: str | None = None):
    """``count`` server processes; yield [(port, pid)]. One process: pinned to the server core; two: one a core.
    ``profile_dir``: Grimoire's servers run under cProfile, writing ``<kind>-<index>.pstats`` there."""
    started = []
    try:
        for index in range(count):
            port = free_port()
            if kind == "floor-sse":
                command = [floor_python, "-m", "uvicorn", f"{MODULE}:floor_live_app", "--factory", "--loop", "uvloop",
                           "--http", "httptools", "--host", "127.0.0.1", "--port", str(port), "--log-level",
                           "warning", "--no-access-log", "--backlog", "4096"]
                env = {**os.environ, SERVER_ENV: json.dumps({"redis_url": redis_url, "key_prefix": prefix})}
                ready = "/bench-stack"
            else:
                profile = os.path.join(profile_dir, f"{kind}-{index}.pstats") if profile_dir else None
                command, env, ready = grimoire_command(profile), grimoire_env(redis_url, prefix, port), "/readyz"
            log = server_log()
            process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
            started.append((process, port, log))
            wait_up(f"http://127.0.0.1:{port}", process, ready, log=log)
            if cores[0] is not None:
                usable = sorted(os.sched_getaffinity(0) | cores[1] | {cores[0]})
                os.sched_setaffinity(process.pid, {cores[0]} if count == 1 else {usable[index % len(usable)]})
        yield [(port, process.pid) for process, port, _ in started]
    finally:
        for process, _, log in started:
            stop_process(process, timeout=15)
            log.close()


class Writer:
    """Submits actions on a schedule and records each acknowledgement: {version: time.time()}."""

    def __init__(self, kind: str, port: int, target: dict):
        self.kind, self.conn, self.target = kind, Conn("127.0.0.1", port), target
        self.acks: dict[int, float] = {}
        self.errors: Counter = Counter()
        self.rng = random.Random(1)
        self.version = 0
        self.to_act = list(target.get("to_act", []))

    async def act(self) -> None:
        if self.kind == "floor-sse":
            answer = await self.conn.request(http_request(
                "POST", f"/records/{self.target['record']}/actions", dumps({"action": self.target["action"]}),
                {"If-Match": f'"{self.version}"'}))
            now = time.time()
            self.version = expect(answer, 200)["version"]
        else:
            match_id, tokens = self.target["match_id"], self.target["tokens"]
            seat = self.rng.choice(self.to_act)
            auth = {"Authorization": f"Bearer {tokens[str(seat)]}"}
            legal = expect(await self.conn.request(http_request(
                "GET", f"/v1/matches/{match_id}/legal-actions", headers=auth)), 200)
            answer = await self.conn.request(http_request(
                "POST", f"/v1/matches/{match_id}/actions", dumps({"action": self.rng.choice(legal["actions"])}),
                {**auth, "If-Match": f'"{legal["version"]}"'}))
            now = time.time()
            match = expect(answer, 200)["match"]
            self.version, self.to_act = match["version"], [s for s in match["to_act"] if s >= 0]
            if match["status"] != "active" or not self.to_act:
                raise RuntimeError("the followed match ended during the run: use a longer game")
        self.acks[self.version] = now

    async def run(self, seconds: float, rate: float) -> None:
        start = time.monotonic()
        for k in range(int(seconds * rate)):
            delay = start + k / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            try:
                await self.act()
            except Exception as error:  # counted and shown; the run goes on
                self.errors[f"{type(error).__name__}: {str(error)[:60]}"] += 1


async def prepare_target(kind: str, port: int, redis_client, prefix: str, record: dict, action: dict) -> dict:
    if kind == "floor-sse":
        record_id = f"live-{uuid.uuid4().hex[:8]}"
        key = record_key(prefix, record_id)
        redis_client.hset(key, mapping=record)
        redis_client.expire(key, TTL)
        return {"record": record_id, "action": action, "path": f"/records/{record_id}/events"}
    conn = Conn("127.0.0.1", port)
    created = expect(await conn.request(http_request("POST", "/v1/matches", dumps(
        {"game": "casting-stones", "seed": 7, "options": {"max_turns": 0}}))), 201)
    tokens, joined = {}, None
    for _ in created["seats"]:
        joined = expect(await conn.request(http_request("POST", f"/v1/matches/{created['id']}/seats",
                                                        dumps({"name": "bench"}))), 201)
        tokens[str(joined["seat"])] = joined["token"]
    conn.close()
    return {"match_id": created["id"], "tokens": tokens, "to_act": joined["match"]["to_act"],
            "path": f"/v1/matches/{created['id']}/events"}


def run_one(kind: str, n: int, processes: int, args, redis_url: str, redis_client, prefix: str, record: dict,
            action: dict, cores) -> dict:
    row = {"kind": kind, "n": n, "processes": processes}
    with servers(kind, processes, redis_url, prefix, args.floor_python, cores, args.profile) as started:
        target = asyncio.run(prepare_target(kind, started[0][0], redis_client, prefix, record, action))
        time.sleep(0.5)
        rss_before = [rss_kib(pid) for _, pid in started]
        per = args.per_client
        clients = []
        targets = [["127.0.0.1", port] for port, _ in started]
        for index in range(math.ceil(n / per)):
            count = min(per, n - index * per)
            process = subprocess.Popen([args.floor_python, "-m", MODULE, "--client"], cwd=ROOT, stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, text=True)
            if processes == 1 and cores[1]:
                os.sched_setaffinity(process.pid, cores[1])
            process.stdin.write(json.dumps({"kind": kind, "count": count, "first": index * per, "targets": targets,
                                            "path": target["path"], "match_id": target.get("match_id")}) + "\n")
            process.stdin.flush()
            clients.append(process)
        try:
            connect_started = time.monotonic()
            hello = [json.loads(p.stdout.readline() or "{}") for p in clients]
            row["connect_s"] = time.monotonic() - connect_started
            row["connected"] = sum(h.get("connected", 0) for h in hello)
            row["connect_errors"] = sum((Counter(h.get("errors", {})) for h in hello), Counter())
            time.sleep(2)
            row["kib_per_sub"] = (sum(rss_kib(pid) for _, pid in started) - sum(rss_before)) / n
            pids = [pid for _, pid in started]
            writer = Writer(kind, started[0][0], target)
            before = _cpu(pids, [p.pid for p in clients], redis_client)
            asyncio.run(writer.run(args.seconds, args.rate))
            after = _cpu(pids, [p.pid for p in clients], redis_client)
            time.sleep(DRAIN)
            row["cpu"] = _shares(before, after)
            row["writes"], row["write_errors"] = len(writer.acks), writer.errors
            for process in clients:
                process.stdin.write(json.dumps({"acks": writer.acks}) + "\n")
                process.stdin.flush()
            reports = [json.loads(p.stdout.readline() or "{}") for p in clients]
            row["delays"] = [d for r in reports for d in r.get("delays", [])]
            row["lost"] = sum(r.get("lost", 0) for r in reports) + (n - row["connected"]) * len(writer.acks)
            row["early"] = sum(r.get("early", 0) for r in reports)
            row["closed"] = sum((Counter(r.get("closed", {})) for r in reports), Counter())
        finally:
            for process in clients:
                with contextlib.suppress(OSError):
                    process.stdin.close()
                stop_process(process, timeout=10)
    return row


def _cpu(server_pids: list[int], client_pids: list[int], redis_client) -> dict:
    return {"wall": time.monotonic(), "server": sum(process_cpu(p) for p in server_pids),
            "client": sum(process_cpu(p) for p in client_pids), "redis": redis_cpu(redis_client),
            "machine": machine_cpu()}


def _shares(before: dict, after: dict) -> dict:
    wall = after["wall"] - before["wall"]
    cpu = {k: (after[k] - before[k]) / wall for k in ("server", "client", "redis", "machine")}
    cpu["other"] = max(0.0, cpu.pop("machine") - cpu["server"] - cpu["client"] - cpu["redis"])
    return cpu


def print_table(rows: list[dict], args, stack: dict, redis_desc: str) -> None:
    grimoire = [m for m, present in interpreter_stack(sys.executable).items()
                if present and m not in declared_dependencies()]
    print("Grimoire live benchmark: acknowledgement-to-delivery, one match followed by N subscribers")
    print(f"  machine  {os.cpu_count()} cores, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}; writer "
          f"{args.rate:g} actions/s for {args.seconds:g} s; {args.per_client} subscribers per client process")
    print(f"  grimoire `python -m service.cli serve` on {sys.executable} "
          f"({'README install' if not grimoire else 'NOT the README install: ' + ', '.join(grimoire) + ' added'})")
    print(f"  floor    uvicorn --loop uvloop --http httptools on {args.floor_python}: "
          + (", ".join(f"{k}={v}" for k, v in stack.items()) if stack else "not run") + ", orjson")
    print(f"  redis    {redis_desc}")
    print()
    header = (f"{'N':>6} {'procs':>5} {'kind':<10} {'conn':>6} {'writes':>6} {'deliveries':>10} {'lost':>6} "
              f"{'early':>5} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>8} {'p99/floor':>9} {'srv CPU':>7} "
              f"{'KiB/sub':>7} {'client':>6} {'other':>5}  verdict")
    print(header)
    print("-" * len(header))
    floors = {(r["n"], r["processes"]): r for r in rows if r["kind"] == "floor-sse"}
    for r in rows:
        d = r["delays"]
        p99 = percentile(d, .99)
        floor = floors.get((r["n"], r["processes"]))
        ratio = f"{p99 / percentile(floor['delays'], .99):.1f}x" if floor and floor is not r and floor["delays"] \
            and percentile(floor["delays"], .99) > 0 else "-"
        cpu = r["cpu"]
        verdict = []
        if r["kind"] != "floor-sse" and r["n"] == 1000 and r["processes"] == 1:
            verdict.append(f"p99 {'ok' if p99 <= P99_TARGET_MS else 'MISS'}, "
                           f"memory {'ok' if r['kib_per_sub'] <= MEMORY_TARGET_KIB else 'MISS'}")
        if r["kind"] == "ws" and r["n"] >= 3000 and r["processes"] == 1:
            verdict.append("nothing lost" if r["lost"] == 0 else "LOST updates")
        if r["lost"]:
            verdict.append("latencies of the delivered only")
        if cpu["client"] >= 0.9 * max(1, len(choose_cores()[1] or {0})):
            verdict.append("INVALID: client-bound")
        if cpu["other"] > 0.25:
            verdict.append("noisy: machine busy")
        print(f"{r['n']:>6} {r['processes']:>5} {r['kind']:<10} {r['connected']:>6} {r['writes']:>6} {len(d):>10} "
              f"{r['lost']:>6} {r['early']:>5} {percentile(d, .5):>7.1f} {p99:>7.1f} {max(d, default=float('nan')):>8.1f} "
              f"{ratio:>9} {100 * cpu['server']:>6.0f}% {r['kib_per_sub']:>7.1f} {100 * cpu['client']:>5.0f}% "
              f"{100 * cpu['other']:>4.0f}%  {'; '.join(verdict)}")
    print()
    print(f"targets: N=1000 on one process, sse and ws p99 <= {P99_TARGET_MS:g} ms (floor 37 ms on the issue's "
          f"machine), <= {MEMORY_TARGET_KIB:g} KiB/subscriber; ws at N=3000: nothing lost. srv CPU: all server "
          "processes, share of one core. 'early': deliveries before the writer's acknowledgement (counted as 0 ms).")
    for r in rows:
        for key, count in (r["connect_errors"] + r["write_errors"]).most_common(5):
            print(f"error  N={r['n']} {r['kind']}: {key} x{count}")
        for reason, count in r["closed"].most_common(5):
            print(f"ended  N={r['n']} {r['kind']}: {count} streams ended before the report: {reason}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}", description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", default="100,1000", help="comma-separated N (default 100,1000)")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated subset of {','.join(KINDS)}")
    parser.add_argument("--ws-3000", action="store_true", help="add N=3000 on floor-sse and ws")
    parser.add_argument("--two-process", type=int, default=0, metavar="N",
                        help="add N subscribers over two server processes, every kind (e.g. 10000)")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of writes per run (default 10)")
    parser.add_argument("--rate", type=float, default=5.0, help="actions per second (default 5)")
    parser.add_argument("--per-client", type=int, default=1000, help="subscribers per client process (default 1000)")
    parser.add_argument("--floor-python", default=default_floor_python())
    parser.add_argument("--profile", metavar="DIR", default=None,
                        help="run Grimoire's servers under cProfile, writing DIR/<kind>-<index>.pstats (each run "
                             "overwrites the last of its kind; figures are then slower: read the profile)")
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    if set(kinds) - set(KINDS):
        parser.error(f"unknown kind(s): {', '.join(sorted(set(kinds) - set(KINDS)))}")
    missing = [m for m, ok in interpreter_stack(args.floor_python).items() if not ok]
    if missing and "floor-sse" in kinds:
        print(f"The floor needs {', '.join(FAST_STACK)}; {args.floor_python} lacks {', '.join(missing)} "
              "(see bench_api's docstring).", file=sys.stderr)
        return 2
    plan = [(n, 1, kind) for n in (int(x) for x in args.subscribers.split(",") if x.strip()) for kind in kinds]
    if args.ws_3000:
        plan += [(3000, 1, kind) for kind in kinds if kind in ("floor-sse", "ws")]
    if args.two_process:
        plan += [(args.two_process, 2, kind) for kind in kinds]
    import redis

    from service.games import all_games

    record, action = sample_record(all_games()["casting-stones"], 1)
    cores = choose_cores()
    if cores[1]:
        os.sched_setaffinity(0, cores[1])  # the writer, with the clients
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    rows, stack = [], {}
    with redis_server(cores) as (redis_url, redis_desc):
        client = redis.Redis.from_url(redis_url, decode_responses=True)
        try:
            for n, processes, kind in plan:
                if kind == "floor-sse" and not stack:
                    with servers(kind, 1, redis_url, prefix, args.floor_python, cores) as started:
                        stack = json.loads(_get(f"http://127.0.0.1:{started[0][0]}/bench-stack")[1])
                row = run_one(kind, n, processes, args, redis_url, client, prefix, record, action, cores)
                rows.append(row)
                print(f"  ... N={n} x{processes} {kind}: p99 {percentile(row['delays'], .99):.1f} ms, "
                      f"lost {row['lost']}", file=sys.stderr, flush=True)
            print_table(rows, args, stack, f"{client.info('server')['redis_version']}, {redis_desc}")
        finally:
            delete_keys(client, prefix)
            client.close()
    return 0


if __name__ == "__main__":
    if "--client" in sys.argv[1:]:
        run_client()
    else:
        sys.exit(main())
