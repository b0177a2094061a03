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

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ClusterError, ConnectionError, RedisClusterException, TimeoutError, TryAgainError

TIMEOUTS = {"socket_timeout": 5, "socket_connect_timeout": 2}

#: What the Redis client raises while the store is unreachable or failing over (a shard
#: restarting, a replica being promoted): not a bug, answered 503 with Retry-After on every API.
STORE_UNAVAILABLE = (ConnectionError, TimeoutError, ClusterError, RedisClusterException, TryAgainError)


def match_redis(url: str, *, cluster: bool = False, max_connections: int = 64):
    """An asyncio client (``decode_responses=True``) for the match store at ``url``."""
    if cluster:
        return RedisCluster.from_url(url, decode_responses=True, max_connections=max_connections,
                                     health_check_interval=10, **TIMEOUTS)
    # a bounded pool that makes a burst of requests wait for a connection rather than fail
    pool = aioredis.BlockingConnectionPool.from_url(
        url, decode_responses=True, health_check_interval=10, max_connections=max_connections, timeout=5,
        **TIMEOUTS)
    return aioredis.Redis(connection_pool=pool)


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
                      keep_recent=settings.log_keep_recent, **extra)
