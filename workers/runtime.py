"""A worker process: its configuration, the RQ worker loop and the watchdog thread.

``grimoire worker`` calls :func:`run_worker`. The jobs (workers/jobs.py) find
their configuration with :func:`runtime`: the settings of ``grimoire worker``
(environment variables, as for ``serve``), or whatever a test passed to
:func:`configure`. ``serve`` without REDIS_URL starts :func:`spawn_embedded_worker`,
a ``grimoire worker`` child process on the embedded Redis.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import AsyncIterator

import redis
from rq import SimpleWorker

from service.engine import Game
from service.settings import Settings
from service.logs import RequestIdJob
from service.store import MatchStore
from service.store.collections import attach as attach_collections
from service.store.connect import open_store

from .dispatch import Dispatcher, queue_names

log = logging.getLogger("grimoire.workers")


@dataclass
class Runtime:
    settings: Settings
    games: dict[str, Game]

    @property
    def queue_url(self) -> str:
        return self.settings.queue_redis_url or self.settings.redis_url

    def queue_connection(self) -> redis.Redis:
        return redis.Redis.from_url(self.queue_url, socket_timeout=30, socket_connect_timeout=5)

    def dispatcher(self, connection: redis.Redis | None = None) -> Dispatcher:
        return Dispatcher(connection or self.queue_connection(), self.settings.key_prefix,
                          replay_ttl=self.settings.replay_ttl, watchdog_seconds=self.settings.bot_watchdog_seconds)

    @contextlib.asynccontextmanager
    async def store(self, dispatcher: Dispatcher | None = None) -> AsyncIterator[MatchStore]:
        """A match store on a fresh connection, with the dispatcher as its listener, so that a
        move a job plays enqueues the next bot move. Both connections are closed on the way out,
        whichever way that is (a job that met an unavailable store leaves no client open)."""
        store = open_store(self.settings, self.games)  # the same configuration as the service's
        attach_collections(store, self.settings)  # its guard checks what a job brings, as the service's does
        client = store.redis
        if dispatcher is not None:
            store.listeners.append(dispatcher)
        try:
            yield store
        finally:
            try:
                await client.aclose()
                manager = getattr(client, "nodes_manager", None)
                if manager is not None:
                    # a cluster client that met a connection error marks itself for re-initialisation, and
                    # then its aclose() closes nothing: "Unclosed ClusterNode" when the job's loop is gone
                    for nodes in (manager.nodes_cache, manager.startup_nodes):
                        for node in list(nodes.values()):
                            with contextlib.suppress(Exception):
                                await node.disconnect()
            finally:
                if dispatcher is not None:
                    dispatcher.connection.close()


_runtime: Runtime | None = None


def configure(settings: Settings | None = None, games: dict[str, Game] | None = None) -> Runtime:
    """Set the configuration the jobs of this process use."""
    global _runtime
    if games is None:
        from service.games import all_games

        games = all_games()
    _runtime = Runtime(settings or Settings.from_env(), games)
    return _runtime


def runtime() -> Runtime:
    return _runtime or configure()


def _watchdog(rt: Runtime, stop: threading.Event) -> None:
    """Sweep for lost bot jobs every third of the watchdog period, until ``stop``."""
    import asyncio

    period = max(rt.settings.bot_watchdog_seconds / 3, 0.2)
    dispatcher = rt.dispatcher()

    async def sweep_once() -> None:
        async with rt.store() as store:
            await dispatcher.sweep(store)

    while not stop.wait(period):
        try:
            asyncio.run(sweep_once())
        except Exception:
            log.exception("watchdog sweep failed; trying again in %.1fs", period)


def _quick_match_sweeper(stop: threading.Event, period: float = 1.0) -> None:
    """Pair the quick-match queues again every ``period`` seconds (workers/players.py), until ``stop``."""
    from .players import sweep_quick_matches

    while not stop.wait(period):
        try:
            sweep_quick_matches()
        except Exception:
            log.exception("quick-match sweep failed; trying again in %.1fs", period)


def _trade_sweeper(stop: threading.Event, period: float = 1.0) -> None:
    """Finish stalled trades every ``period`` seconds (workers/trades.py), until ``stop``."""
    from .trades import sweep_trades

    while not stop.wait(period):
        try:
            sweep_trades()
        except Exception:
            log.exception("trade sweep failed; trying again in %.1fs", period)


def run_worker(settings: Settings | None = None, *, burst: bool = False, name: str | None = None) -> None:
    """Work the bot, timer and replay queues of this deployment (until SIGTERM, or empty with ``burst``).

    A ``SimpleWorker`` runs each job in this process (bot moves take milliseconds;
    a fork per job would cost more than the job). Its scheduler thread moves turn
    timers to the queue when they are due; a watchdog thread recovers lost bot jobs.
    Start as many workers as you like on the same queues: they share the work.
    """
    rt = configure(settings)
    connection = rt.queue_connection()
    names = queue_names(rt.settings.key_prefix)
    worker = SimpleWorker([names["bots"], names["timers"], names["replays"]], connection=connection, name=name,
                          job_class=RequestIdJob)
    stop = threading.Event()
    watchdog = threading.Thread(target=_watchdog, args=(rt, stop), name="grimoire-watchdog", daemon=True)
    watchdog.start()
    threading.Thread(target=_quick_match_sweeper, args=(stop,), name="grimoire-quick-match", daemon=True).start()
    threading.Thread(target=_trade_sweeper, args=(stop,), name="grimoire-trades", daemon=True).start()
    log.info("worker %s on %s (queues %s)", worker.name, rt.queue_url.split("@")[-1], ", ".join(names.values()))
    try:
        worker.work(burst=burst, with_scheduler=True, logging_level="WARNING")
    finally:
        stop.set()


def spawn_embedded_worker(redis_url: str, settings: Settings) -> subprocess.Popen:
    """``grimoire worker`` as a child process on ``redis_url`` (for ``serve`` on an embedded Redis).

    On Linux the kernel stops it if the service dies, even by SIGKILL.
    """
    env = dict(os.environ, REDIS_URL=redis_url, QUEUE_REDIS_URL=settings.queue_redis_url or redis_url,
               GRIMOIRE_KEY_PREFIX=settings.key_prefix)
    from service.store.embedded import _die_with_parent

    return subprocess.Popen([sys.executable, "-m", "service.cli", "worker"], env=env, preexec_fn=_die_with_parent)


def stop_embedded_worker(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)  # RQ finishes the job at hand, then exits
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
