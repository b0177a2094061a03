"""Load benchmark: N service processes and W workers on a real Redis, a realistic mix.

Run it from the repository root (a script, not a test; it asserts nothing)::

    python -m tests.benchmarks.bench_load [--services 2] [--workers 1] [--seconds 30] [--tables 48]
                                          [--bot-share 0.25] [--memory-matches 100] [--redis-url URL]

What it does
------------
1. Starts a Redis (``--redis-url``, else an embedded redis-server with AOF on,
   as in production), N ``grimoire serve`` processes on loopback ports and, if
   the bots exist, W ``grimoire worker`` processes. Rate limits are off (one
   load generator address would trip them); logs are JSON at INFO, as deployed.
2. Drives the load for ``--seconds`` from ``--tables`` concurrent tables, spread
   round-robin over the service processes as a load balancer would. A table
   creates a match of a game (the three games in turn), joins its seats (on a
   share ``--bot-share`` of tables seat 1 is a bot, played by the workers),
   then loops: read the match, read the legal actions of a seat to act, submit
   one (seeded random), and every 10 actions read the history; a finished
   match is replaced by a new one. With a bot seat, the table reads the match
   until the bot has moved.
3. Prints throughput, p50/p99 latency per operation, errors by status and
   machine code (a 5xx is a bug), CPU used by the service processes
   (actions/s per core), and Redis memory.
4. Measures Redis memory per in-progress match for each game: M matches per
   game are played (through the store, the same code path and settings as the
   service: log compaction on) to half the mean length of that game's finished
   matches in step 2, and ``used_memory`` grows by X bytes: X / M per match,
   everything included (match hash, log stream, compressed log archive, lobby,
   Redis's own per-key overhead). From that: matches per GB, and whether one
   million concurrent Casting Stones matches fit in 8 GB.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path

import httpx
import redis

from service.store.embedded import free_port
from tests.support.processes import wait_ready

GAMES = ["casting-stones", "quidditch", "spells-and-potions"]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Fleet:
    """Redis, the service processes and the workers."""

    def __init__(self, services: int, workers: int, redis_url: str | None, prefix: str):
        self.tmp = Path(tempfile.mkdtemp(prefix="grimoire-bench-"))
        self.embedded = None
        if redis_url is None:
            from service.store.embedded import EmbeddedRedis

            self.embedded = EmbeddedRedis(self.tmp / "redis", persist=True)
            redis_url = self.embedded.url
        self.redis_url = redis_url
        self.env = {**os.environ, "REDIS_URL": redis_url, "GRIMOIRE_KEY_PREFIX": prefix,
                    "GRIMOIRE_EMBEDDED_WORKER": "0", "GRIMOIRE_RATE_LIMIT_PER_TOKEN": "0",
                    "GRIMOIRE_RATE_LIMIT_PER_ADDRESS": "0", "GRIMOIRE_LOG_FORMAT": "json",
                    "GRIMOIRE_LOG_LEVEL": "INFO"}
        self.services: list[tuple[subprocess.Popen, str]] = []
        self.workers: list[subprocess.Popen] = []
        for n in range(services):
            port = free_port()
            log = open(self.tmp / f"service-{n}.log", "w")
            process = subprocess.Popen([sys.executable, "-m", "service.cli", "serve", "--port", str(port)],
                                       env=self.env, stdout=log, stderr=log)
            self.services.append((process, f"http://127.0.0.1:{port}"))
        for _, url in self.services:
            wait_ready(url)
        self.worker_count = workers

    def start_workers(self) -> None:
        for n in range(self.worker_count):
            log = open(self.tmp / f"worker-{n}.log", "w")
            self.workers.append(subprocess.Popen([sys.executable, "-m", "service.cli", "worker"], env=self.env,
                                                 stdout=log, stderr=log))

    @property
    def urls(self) -> list[str]:
        return [url for _, url in self.services]

    def service_cpu(self) -> float:
        return sum(cpu_seconds(p.pid) for p, _ in self.services)

    def redis_cpu(self) -> float:
        return cpu_seconds(self.embedded.process.pid) if self.embedded is not None else float("nan")

    def stop(self) -> None:
        for process in [p for p, _ in self.services] + self.workers:
            process.send_signal(signal.SIGTERM)
        for process in [p for p, _ in self.services] + self.workers:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        if self.embedded is not None:
            self.embedded.stop()


class Load:
    def __init__(self, urls: list[str], tables: int, bot_share: float, seconds: float, bots: bool,
                 abandon: float = 0.2):
        self.urls = urls
        self.abandon = abandon
        self.tables = tables
        self.bot_share = bot_share if bots else 0.0
        self.seconds = seconds
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: Counter = Counter()
        self.counts: Counter = Counter()
        self.finished_lengths: dict[str, list[int]] = defaultdict(list)
        self.window = (0.0, 0.0)
        self._next = 0

    def url(self) -> str:
        self._next += 1
        return self.urls[self._next % len(self.urls)]

    async def call(self, http: httpx.AsyncClient, op: str, method: str, path: str, **kwargs) -> httpx.Response | None:
        started = time.perf_counter()
        try:
            response = await http.request(method, self.url() + path, **kwargs)
        except httpx.HTTPError as error:
            self.errors[f"{op}: transport {type(error).__name__}"] += 1
            return None
        ended = time.perf_counter()
        if self.window[0] <= started and ended <= self.window[1]:
            self.latency[op].append(ended - started)
            self.counts[op] += 1
        if response.status_code >= 400 and not (op == "submit" and response.status_code == 412):
            code = response.json().get("code", "?") if "json" in response.headers.get("content-type", "") else "?"
            self.errors[f"{op}: {response.status_code} {code}"] += 1
        return response

    async def table(self, n: int, http: httpx.AsyncClient, deadline: float) -> None:
        chooser = random.Random(n)
        game_turn = n
        while time.perf_counter() < deadline:
            game = GAMES[game_turn % len(GAMES)]
            game_turn += 1
            with_bot = chooser.random() < self.bot_share
            body = {"game": game, "seed": chooser.randrange(2**62)}
            if with_bot:
                body["bots"] = [{"level": "random", "seat": 1}]
            created = await self.call(http, "create", "POST", "/v1/matches", json=body)
            if created is None or created.status_code != 201:
                await asyncio.sleep(0.1)
                continue
            match_id = created.json()["id"]
            humans = [0] if with_bot else [0, 1]
            tokens = {}
            for seat in humans:
                joined = await self.call(http, "join", "POST", f"/v1/matches/{match_id}/seats",
                                         json={"name": f"T{n}S{seat}", "seat": seat})
                if joined is None or joined.status_code != 201:
                    break
                tokens[seat] = joined.json()["token"]
            if len(tokens) != len(humans):
                continue
            actions = 0
            leave_after = chooser.randrange(5, 40) if chooser.random() < self.abandon else None
            while time.perf_counter() < deadline and (leave_after is None or actions < leave_after):
                read = await self.call(http, "read", "GET", f"/v1/matches/{match_id}")
                if read is None or read.status_code != 200:
                    break
                match = read.json()
                if match["status"] == "finished":
                    self.finished_lengths[game].append(match["version"])
                    break
                ours = [s for s in match["to_act"] if s in tokens]
                if not ours:  # the bot's turn: read again shortly
                    await asyncio.sleep(0.02)
                    continue
                seat = chooser.choice(ours)
                auth = {"Authorization": f"Bearer {tokens[seat]}"}
                legal = await self.call(http, "legal-actions", "GET", f"/v1/matches/{match_id}/legal-actions",
                                        headers=auth)
                if legal is None or legal.status_code != 200 or not legal.json()["actions"]:
                    continue
                body = legal.json()
                await self.call(http, "submit", "POST", f"/v1/matches/{match_id}/actions",
                                json={"action": chooser.choice(body["actions"])},
                                headers={**auth, "If-Match": f'"{body["version"]}"'})
                actions += 1
                if actions % 10 == 0:
                    await self.call(http, "history", "GET", f"/v1/matches/{match_id}/history",
                                    params={"after": max(0, body["version"] - 10)}, headers=auth)

    async def run(self) -> None:
        """Drive the tables until the end of ``self.window`` (perf_counter start, end)."""
        limits = httpx.Limits(max_connections=self.tables * 2, max_keepalive_connections=self.tables * 2)
        async with httpx.AsyncClient(timeout=30, limits=limits) as http:
            await asyncio.gather(*(self.table(n, http, self.window[1]) for n in range(self.tables)))


async def play(store, game_id: str, seed: int, chooser: random.Random, limit: int) -> tuple[str, int]:
    """A match of ``game_id`` played by random legal actions for at most ``limit`` actions."""
    match = await store.create(game_id, seed=seed)
    tokens = [(await store.join(match.id, f"P{i}"))[2] for i in range(match.game.min_seats)]
    count = 0
    for _ in range(limit):
        match = await store.get(match.id)
        if match.status != "active":
            break
        seat = chooser.choice(match.to_act)
        await store.submit(match.id, tokens[seat], match.version, chooser.choice(match.legal_actions(seat)))
        count += 1
    return match.id, count


async def memory_per_match(redis_url: str, games: list[str], matches: int) -> dict:
    """Bytes of Redis per in-progress match of each game, played to half its mean length.

    The mean length comes from 10 whole matches per game played the same way
    (random legal actions: longer than matches between players who aim to win).
    """
    import redis.asyncio as aioredis

    from service.games import all_games
    from service.settings import Settings
    from service.store import MatchStore

    defaults = Settings()
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    sync = redis.Redis.from_url(redis_url)
    hosted = all_games()
    figures = {}
    for game_id in games:
        prefix = f"mem-{uuid.uuid4().hex[:8]}"
        store = MatchStore(client, hosted, prefix=prefix, compact_every=defaults.log_compact_every,
                           keep_recent=defaults.log_keep_recent, lobby_ttl=defaults.lobby_ttl)
        chooser = random.Random(7)
        whole = [(await play(store, game_id, 10_000 + n, chooser, 5000))[1] for n in range(10)]
        half = max(1, int(statistics.mean(whole) / 2))
        for key in sync.scan_iter(match=f"{prefix}:*", count=1000):
            sync.delete(key)
        before = sync.info("memory")["used_memory"]
        ids, played = [], []
        for n in range(matches):
            match_id, count = await play(store, game_id, n, chooser, half)
            ids.append(match_id)
            played.append(count)
        after = sync.info("memory")["used_memory"]
        by_key = 0
        for match_id in ids:
            for key in (store.key(match_id), store.log_key(match_id), store.archive_key(match_id)):
                by_key += sync.memory_usage(key, samples=0) or 0
        per_match = (after - before) / matches
        figures[game_id] = {"whole": statistics.mean(whole), "actions": statistics.mean(played),
                            "used_memory_per_match": per_match,
                            "memory_usage_per_match": by_key / matches,
                            "matches_per_gb": 1e9 / per_match, "million_in_gb": per_match * 1e6 / 1e9}
        for key in sync.scan_iter(match=f"{prefix}:*", count=1000):
            sync.delete(key)
    await client.aclose()
    sync.close()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--tables", type=int, default=48)
    parser.add_argument("--bot-share", type=float, default=0.25)
    parser.add_argument("--abandon", type=float, default=0.2, help="share of matches left after 5-40 actions")
    parser.add_argument("--memory-matches", type=int, default=100)
    parser.add_argument("--redis-url", default=None)
    args = parser.parse_args()

    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    fleet = Fleet(args.services, args.workers, args.redis_url, prefix)
    try:
        probe = httpx.post(f"{fleet.urls[0]}/v1/matches",
                           json={"game": GAMES[0], "bots": [{"level": "random", "seat": 1}]}, timeout=10)
        bots = probe.status_code == 201
        if bots:
            fleet.start_workers()
        load = Load(fleet.urls, args.tables, args.bot_share, args.seconds, bots, args.abandon)
        cpu0 = None

        async def drive():
            nonlocal cpu0
            start = time.perf_counter()
            load.window = (start + 3.0, start + 3.0 + args.seconds)  # 3 s of warm-up, not measured
            task = asyncio.create_task(load.run())
            await asyncio.sleep(3.0)
            cpu0 = fleet.service_cpu(), time.process_time(), fleet.redis_cpu()
            await task

        asyncio.run(drive())
        cpu = fleet.service_cpu() - cpu0[0]
        client_cpu = time.process_time() - cpu0[1]
        redis_cpu = fleet.redis_cpu() - cpu0[2]
        window = load.window[1] - load.window[0]

        client = redis.Redis.from_url(fleet.redis_url)
        info = client.info("memory")
        matches = sum(1 for _ in client.scan_iter(match=f"{prefix}:m:*", count=1000, _type="hash"))
        client.close()

        print(f"\nGrimoire load benchmark: {args.services} service processes, "
              f"{args.workers if bots else 0} workers, {args.tables} tables, {window:.0f} s measured, "
              f"bots {'on ' + str(int(args.bot_share * 100)) + '% of tables' if bots else 'absent'}, "
              f"{os.cpu_count()} cores")
        total = sum(load.counts.values())
        print(f"requests: {total} in the window, {total / window:.0f}/s; "
              f"actions accepted: {load.counts['submit']}, {load.counts['submit'] / window:.0f}/s; "
              f"service CPU {cpu / window:.2f} cores -> {load.counts['submit'] / max(cpu, 1e-9):.0f} actions/s "
              f"per core ({total / max(cpu, 1e-9):.0f} requests/s per core); load generator CPU "
              f"{client_cpu / window:.2f} cores, Redis CPU {redis_cpu / window:.2f} cores")
        print(f"{'operation':<14}{'count':>8}{'per s':>8}{'p50 ms':>9}{'p99 ms':>9}")
        for op in ("create", "join", "read", "legal-actions", "submit", "history"):
            values = load.latency.get(op, [])
            print(f"{op:<14}{len(values):>8}{len(values) / window:>8.0f}{percentile(values, 0.5) * 1000:>9.1f}"
                  f"{percentile(values, 0.99) * 1000:>9.1f}")
        fivexx = sum(n for key, n in load.errors.items() if ": 5" in key)
        print(f"errors: {dict(load.errors) or 'none'}; 5xx: {fivexx}")
        print(f"Redis after the run: used_memory {info['used_memory'] / 2**20:.1f} MiB for {matches} matches "
              f"(in progress and finished)")
        lengths = {g: statistics.mean(v) for g, v in load.finished_lengths.items() if v}
        print(f"finished matches: { {g: len(v) for g, v in load.finished_lengths.items()} }, mean length "
              f"{ {g: round(v) for g, v in lengths.items()} } actions")

        memory_redis = None
        if args.redis_url is None:  # a fresh Redis, no AOF buffers or leftovers to blur the figures
            from service.store.embedded import EmbeddedRedis

            memory_redis = EmbeddedRedis(fleet.tmp / "memory", persist=False)
        try:
            figures = asyncio.run(memory_per_match(memory_redis.url if memory_redis else fleet.redis_url, GAMES,
                                                   args.memory_matches))
        finally:
            if memory_redis is not None:
                memory_redis.stop()
        print(f"\nRedis memory per in-progress match ({args.memory_matches} matches per game, each played to half "
              f"its game's mean length; log compaction as configured):")
        print(f"{'game':<20}{'length':>8}{'actions':>8}{'bytes/match':>13}{'(keys alone)':>13}{'matches/GB':>12}"
              f"{'1M in GB':>10}  (GB = 10^9 bytes)")
        for game, f in figures.items():
            print(f"{game:<20}{f['whole']:>8.0f}{f['actions']:>8.0f}{f['used_memory_per_match']:>13.0f}"
                  f"{f['memory_usage_per_match']:>13.0f}{f['matches_per_gb']:>12.0f}{f['million_in_gb']:>10.2f}")
        cs = figures.get("casting-stones")
        if cs:
            print(f"one million concurrent Casting Stones matches: {cs['million_in_gb']:.2f} GB "
                  f"({'fits' if cs['million_in_gb'] <= 8 else 'does NOT fit'} in 8 GB)")
    finally:
        fleet.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
