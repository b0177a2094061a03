"""Clients for the match store: one plain Redis, or a Redis Cluster.

``REDIS_CLUSTER=1`` turns ``REDIS_URL`` into the address of any one node of a
Redis Cluster (the client discovers the others and follows slot moves and
failovers). Every key of a match carries the hash tag ``{ID}``, so each
script and transaction touches one slot; lobby keys live in their own slots
and are only touched by single-key commands.

The RQ queues cannot live on a cluster: with ``REDIS_CLUSTER=1``,
``QUEUE_REDIS_URL`` must name a plain Redis (see :func:`queue_url`).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import PipelineCommand, RedisCluster
from redis.exceptions import (
    AskError, ClusterError, ConnectionError, MovedError, NoScriptError, RedisClusterException, TimeoutError,
    TryAgainError,
)
from redis.maint_notifications import MaintNotificationsConfig

from .counting import CountingRedis

TIMEOUTS = {"socket_timeout": 5, "socket_connect_timeout": 2}


class ReplicaAckTimeout(ConnectionError):
    """A write the master applied but fewer replicas than ``GRIMOIRE_REPLICA_ACKS`` confirmed in time.

    A ConnectionError so that every path that rides out an outage (the APIs' 503, the jobs'
    retry) treats it as one: until a replica has it, a failover may still lose it.
    """

    def __init__(self, wanted: int, got: int | None, timeout_ms: int):
        self.wanted, self.got, self.timeout_ms = wanted, got, timeout_ms
        super().__init__(
            f"The action was applied, but {got if got is not None else 'no'} of the {wanted} replica(s) required "
            f"confirmed it within {timeout_ms} ms, so a failover could still lose it. Send the same request again "
            "with the same Idempotency-Key: the answer is its fate (its first outcome if it was kept; applied "
            "now if it was lost). Without a key, read the match and its history before acting again.")


#: What the Redis client raises while the store is unreachable or failing over (a shard
#: restarting, a replica being promoted): not a bug, answered 503 with Retry-After on every API.
STORE_UNAVAILABLE = (ConnectionError, TimeoutError, ClusterError, RedisClusterException, TryAgainError)


async def then_wait(client, key: str, commands: list[tuple], replicas: int, timeout_ms: int) -> tuple[list, int]:
    """Run ``commands`` (all on ``key``'s slot), then ``WAIT replicas timeout_ms``, on one connection.

    WAIT only covers the writes of the connection it is sent on, so it cannot go through the
    pool as a command of its own; and redis-py's cluster client sends WAIT to every master
    (its pipeline refuses it, and on an error closes the whole client, cutting requests to the
    other masters), so on a cluster the batch goes straight to the master holding ``key``.
    Returns the commands' replies (errors included, as values) and how many replicas confirmed
    (-1 if WAIT itself failed).
    """
    batch = [*commands, ("WAIT", replicas, timeout_ms)]
    if isinstance(client, RedisCluster):
        node = client.get_node_from_key(key)
        queued = [PipelineCommand(i, *command) for i, command in enumerate(batch)]
        await node.execute_pipeline(queued)
        replies = [command.result for command in queued]
        if any(isinstance(r, (MovedError, AskError)) for r in replies[:-1]):
            # nothing ran on a node that no longer serves the slot; the next plain command on it
            # (every submission reads the match first) follows the redirection and refreshes the map
            raise TryAgainError("The match's shard moved; try again.")
    else:
        async with client.pipeline(transaction=False) as pipe:
            for command in batch:
                pipe.execute_command(*command)
            replies = await pipe.execute(raise_on_error=False)
    acked = replies[-1]
    return replies[:-1], acked if isinstance(acked, int) else -1


async def script_then_wait(client, script, keys: list[str], args: list, replicas: int,
                           timeout_ms: int) -> tuple[Any, int]:
    """A registered Script's reply and the replicas that confirmed its writes (:func:`then_wait`)."""
    command = ("EVALSHA", script.sha, len(keys), *keys, *args)
    for _ in range(2):
        (reply,), acked = await then_wait(client, keys[0], [command], replicas, timeout_ms)
        if isinstance(reply, NoScriptError):  # it did not run: load it (on every master) and send it again
            await client.script_load(script.script)
            continue
        if isinstance(reply, Exception):
            raise reply
        return reply, acked
    raise NoScriptError("The commit script could not be loaded.")


class TimedWrites:
    """A redis-py connection whose command writes are bounded by ``asyncio.timeout``, not ``asyncio.wait_for``.

    On Python 3.11 ``wait_for`` runs the write as a Task of its own, for a write that almost never waits:
    8% of py-spy's samples of a REST action (three commands), 1.7% of its instructions and about 4% of its
    CPU once gone (issue 18). This is redis-py's ``send_packed_command`` with that one change (Python 3.12's
    ``wait_for`` makes the same change inside).
    Mixed into whichever connection class the URL asks for (TCP, TLS or a Unix socket): :func:`timed_writes`.
    """

    async def send_packed_command(self, command, check_health: bool = True) -> None:
        if not self.is_connected:
            await self.connect_check_health(check_health=False)
        if check_health:
            await self.check_health()
        try:
            if isinstance(command, str):
                command = command.encode()
            if isinstance(command, bytes):
                command = [command]
            async with asyncio.timeout(self.socket_timeout or None):
                self._writer.writelines(command)
                await self._writer.drain()
        except asyncio.TimeoutError:  # the built-in one (this module's is redis-py's)
            await self.disconnect(nowait=True)
            raise TimeoutError("Timeout writing to socket") from None
        except OSError as error:
            await self.disconnect(nowait=True)
            number, message = ("UNKNOWN", error.args[0]) if len(error.args) == 1 else error.args[:2]
            raise ConnectionError(f"Error {number} while writing to socket. {message}.") from error
        except BaseException:  # cut off mid-write (a cancellation): the connection cannot be trusted again
            await self.disconnect(nowait=True)
            raise


@functools.cache
def timed_writes(connection_class: type) -> type:
    """``connection_class`` with :class:`TimedWrites` mixed in (one subclass per class)."""
    return type(f"Timed{connection_class.__name__}", (TimedWrites, connection_class), {})


class BoundedPool(aioredis.ConnectionPool):
    """redis-py's connection pool that waits (up to ``timeout`` seconds) for a connection while all
    ``max_connections`` are in use, as redis-py's ``BlockingConnectionPool`` does, at a fraction of its cost.

    Taking and giving back a connection through ``BlockingConnectionPool`` was about a tenth of a REST
    action's CPU (issue 18; 9% of its instructions): per command it takes a condition, a lock and a
    timeout, and records metrics this service does not export (redis-py's OpenTelemetry hooks). Here a
    free connection is a list's pop; only a caller who finds none waits, in line (a connection given back
    wakes the first waiter).

    A connection taken from the pool that the server closed (a restart, ``CLIENT KILL``, an idle timeout)
    or that holds unread data is connected again first (``ensure_connection``: a look at its buffer, no
    system call), so a restarted store costs no request a 503. redis-py 8 skips that check while Redis
    Enterprise's maintenance notifications are enabled, and its default ("auto", on RESP3) counts as
    enabled, even on a Redis that sends none: they are turned off here (no such Redis serves this store).
    """

    def __init__(self, *, timeout: float = 5, **kwargs):
        kwargs.setdefault("maint_notifications_config", MaintNotificationsConfig(enabled=False))
        kwargs["connection_class"] = timed_writes(kwargs.get("connection_class", aioredis.Connection))
        super().__init__(**kwargs)
        self.timeout = timeout
        self._waiters: list[asyncio.Future] = []

    async def get_connection(self, command_name=None, *keys, **options):
        while not self._available_connections and len(self._in_use_connections) >= self.max_connections:
            await self._wait_for_release()
        connection = self._available_connections.pop() if self._available_connections else self.make_connection()
        self._in_use_connections.add(connection)
        try:
            await self.ensure_connection(connection)
        except BaseException:
            await self.release(connection)
            raise
        return connection

    async def release(self, connection) -> None:
        self._in_use_connections.remove(connection)
        if connection.should_reconnect():
            await connection.disconnect()
        self._available_connections.append(connection)
        self._wake_one()

    async def _wait_for_release(self) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            async with asyncio.timeout(self.timeout):
                await waiter
        except BaseException as error:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
            elif waiter.done() and not waiter.cancelled():
                self._wake_one()  # woken, but leaving (timed out or cancelled): the next in line gets the turn
            if isinstance(error, asyncio.TimeoutError):  # the built-in one (this module's is redis-py's)
                raise ConnectionError("No connection available.") from None
            raise

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.pop(0)
            if not waiter.done():
                waiter.set_result(None)
                return


def match_redis(url: str, *, cluster: bool = False, max_connections: int = 64):
    """An asyncio client (``decode_responses=True``) for the match store at ``url``."""
    if cluster:
        return RedisCluster.from_url(url, decode_responses=True, max_connections=max_connections,
                                     health_check_interval=10, **TIMEOUTS)
    # a bounded pool that makes a burst of requests wait for a connection rather than fail
    pool = BoundedPool.from_url(url, decode_responses=True, health_check_interval=10,
                                max_connections=max_connections, timeout=5, **TIMEOUTS)
    return CountingRedis(connection_pool=pool)  # settles a request's rate-limit count (counting.py)


def queue_url(redis_url: str, queue_redis_url: str, cluster: bool) -> str:
    """Where the RQ queues live: ``QUEUE_REDIS_URL``, else the match store's Redis (never a cluster)."""
    if queue_redis_url:
        return queue_redis_url
    if cluster:
        raise RuntimeError("REDIS_CLUSTER=1 needs QUEUE_REDIS_URL: the RQ queues need a plain Redis, "
                           "not a cluster")
    return redis_url


def open_store(settings, games: dict, url: str | None = None, **extra) -> "MatchStore":
    """The match store a process uses, configured from ``settings`` (service.settings.Settings)."""
    from .matches import MatchStore

    client = match_redis(url or settings.redis_url, cluster=settings.redis_cluster,
                         max_connections=settings.redis_max_connections)
    return MatchStore(client, games, prefix=settings.key_prefix, finished_ttl=settings.finished_ttl,
                      idle_ttl=settings.idle_ttl, idempotency_ttl=settings.idempotency_ttl,
                      lobby_ttl=settings.lobby_ttl, compact_every=settings.log_compact_every,
                      keep_recent=settings.log_keep_recent, replica_acks=settings.replica_acks,
                      replica_wait_ms=settings.replica_wait_ms, **extra)
