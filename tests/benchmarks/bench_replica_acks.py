"""Benchmark: what ``GRIMOIRE_REPLICA_ACKS`` costs an action, on a local Redis Cluster (a script, not a test).

    python -m tests.benchmarks.bench_replica_acks [--seconds 20] [--concurrency 16] [--acks 0 1]

Starts a cluster of 3 masters and 3 replicas on loopback (tests/ops/cluster.py: AOF with
``appendfsync always``), a plain redis-server for the queues, and for each value of ``--acks`` one
``grimoire serve`` (``REDIS_CLUSTER=1``) in turn. C concurrent clients each play their own match of
GAME over REST: read the legal actions of a seat to act, submit one (with an Idempotency-Key) at
that version; only the submission is timed, after a warm-up. Prints actions/s, p50 and p99 of the
submission, and errors. It asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from service.store.embedded import EmbeddedRedis
from tests.ops.cluster import Cluster
from tests.support.processes import Service

GAME = "casting-stones"


async def player(base: str, deadline: float, warm_until: float, seed: int, timings: list[float],
                 errors: list[str]) -> None:
    rng = random.Random(seed)
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        match_id, tokens = None, []
        while time.monotonic() < deadline:
            if match_id is None:
                match_id = (await http.post("/v1/matches", json={"game": GAME})).json()["id"]
                tokens = [(await http.post(f"/v1/matches/{match_id}/seats", json={"name": f"P{i}"})).json()["token"]
                          for i in range(2)]
            match = (await http.get(f"/v1/matches/{match_id}")).json()
            if match["status"] == "finished":
                match_id = None
                continue
            seat = rng.choice(match["to_act"])
            auth = {"Authorization": f"Bearer {tokens[seat]}"}
            legal = (await http.get(f"/v1/matches/{match_id}/legal-actions", headers=auth)).json()
            started = time.monotonic()
            sent = await http.post(f"/v1/matches/{match_id}/actions", json={"action": rng.choice(legal["actions"])},
                                   headers={**auth, "If-Match": f'"{legal["version"]}"',
                                            "Idempotency-Key": f"b{legal['version']}"})
            ended = time.monotonic()
            if sent.status_code != 200:
                errors.append(f"{sent.status_code} {sent.json().get('code')}")
            elif started >= warm_until and ended <= deadline:
                timings.append(ended - started)


async def measure(base: str, seconds: float, concurrency: int, warm_up: float) -> tuple[list[float], list[str]]:
    timings: list[float] = []
    errors: list[str] = []
    now = time.monotonic()
    await asyncio.gather(*(player(base, now + warm_up + seconds, now + warm_up, i, timings, errors)
                           for i in range(concurrency)))
    return timings, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--warm-up", type=float, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--acks", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--wait-ms", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        cluster = Cluster(root / "cluster", 3, replicas=1)
        queue = EmbeddedRedis(root / "queue", persist=False)
        try:
            print(f"{'acks':>4} {'actions/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
            for acks in args.acks:
                service = Service(cluster.url, f"bench-{os.getpid()}-{acks}", root / f"serve-{acks}.log",
                                  REDIS_CLUSTER="1", QUEUE_REDIS_URL=queue.url, GRIMOIRE_REPLICA_ACKS=acks,
                                  GRIMOIRE_REPLICA_WAIT_MS=args.wait_ms, GRIMOIRE_METRICS="0")
                try:
                    timings, errors = asyncio.run(measure(service.base, args.seconds, args.concurrency,
                                                          args.warm_up))
                finally:
                    service.stop()
                timings.sort()
                p50 = statistics.median(timings) * 1000 if timings else float("nan")
                p99 = timings[min(len(timings) - 1, int(len(timings) * 0.99))] * 1000 if timings else float("nan")
                print(f"{acks:>4} {len(timings) / args.seconds:>10.1f} {p50:>8.1f} {p99:>8.1f} {len(errors):>7}"
                      + (f"  {sorted(set(errors))[:3]}" if errors else ""))
        finally:
            queue.stop()
            cluster.stop()


if __name__ == "__main__":
    main()
