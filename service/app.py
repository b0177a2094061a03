"""``create_app(settings)``: the Starlette application, wired explicitly.

Mounted here: GraphQL at ``/graphql`` (GraphiQL in a browser) with its SDL at
``/schema.graphql``, REST under ``/v1``, the OpenAPI document at ``/openapi.yaml``,
the landing page ``/`` and the docs page ``/docs`` (service/static/), ``/healthz``
(the process is up), ``/readyz`` (Redis answers) and ``/metrics`` (Prometheus: service/metrics.py). Every request gets a request id
and one JSON access log line (service/logs.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
import redis
import redis.asyncio as aioredis
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute

from schema import GraphQLApp, build_schema
from service.contracts import openapi_yaml
from service.engine import Game
from service.games import all_games
from service.rest import routes as rest_routes
from service.rest.streams import routes as stream_routes
from service.rest.players import routes as player_routes
from service.rest.collections import routes as collection_routes
from service.rest.problems import problem
from service.play import play_routes
from service.static import routes as page_routes
from service.settings import Settings
from service.store import MatchStore
from service.store.live import LiveUpdates, StreamLimit
from service.store.collections import attach as attach_collections
from service.store.idp import verifier_from
from service.store.players import PlayerStore
from service.store.quickmatch import QuickMatch
from service.store.tickets import StreamTickets
from service.store.embedded import EmbeddedRedis
from service.store.connect import STORE_UNAVAILABLE, open_store, queue_url
from service.store.errors import RulesVersionUnavailable
from service.guards import BodySizeLimit, Guard, MetricsPort
from service.limits import ConnectionLimit, RateLimit
from service.logs import RequestIdMiddleware
from service.metrics import MetricsMiddleware, SubmitObserver, metrics_endpoint
from workers.dispatch import Dispatcher
from workers.runtime import spawn_embedded_worker, stop_embedded_worker

log = logging.getLogger("grimoire")

async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    try:
        await request.app.state.store.ping()
    except (*STORE_UNAVAILABLE, OSError):
        return problem("service_unavailable", "Redis is not reachable.", headers={"Retry-After": "1"})
    return JSONResponse({"status": "ready"})


async def openapi_document(request: Request) -> Response:
    return Response(request.app.state.openapi_yaml, media_type="application/yaml")


async def graphql_sdl(request: Request) -> Response:
    return PlainTextResponse(request.app.state.graphql_sdl)


async def _http_error(request: Request, exc: HTTPException) -> Response:
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "malformed_request")
    return problem(code, exc.detail or "The request was refused.", headers=exc.headers)


async def _redis_down(request: Request, exc: Exception) -> Response:
    log.warning("redis unavailable: %s", type(exc).__name__)
    return problem("service_unavailable", "The match store is unavailable; try again shortly.",
                   headers={"Retry-After": "1"})


async def _rules_version_unavailable(request: Request, exc: RulesVersionUnavailable) -> Response:
    """A match whose rules version this process lacks (a rolling deployment): 503, so that a load
    balancer tries another process; nothing was read through other rules, nothing written."""
    log.warning("rules version unavailable: %s %s (this process has %s)", exc.game_id, exc.rules_version,
                ", ".join(exc.installed) or "none")
    return problem("rules_version_unavailable", exc.message, headers={"Retry-After": str(exc.retry_after)})


def _end_streams_on_sigterm(live: LiveUpdates) -> None:
    """On SIGTERM, end live streams (reason "shutdown") at once, then let the server's own
    handler drain the other requests: otherwise open streams would hold the shutdown. The
    server's handler runs once the streams have ended (:meth:`LiveUpdates.end_streams`), since
    it closes websockets straight away; a second signal goes to it at once."""
    if threading.current_thread() is not threading.main_thread():
        return  # an embedded test server: signals are not ours to take
    loop = asyncio.get_running_loop()
    previous = signal.getsignal(signal.SIGTERM)
    asked = False
    ending: set[asyncio.Task] = set()  # held: the loop keeps only a weak reference to a task

    async def end_then_exit(signum, frame) -> None:
        await live.end_streams()
        if callable(previous):
            previous(signum, frame)

    def on_sigterm(signum, frame):
        nonlocal asked
        if asked:
            if callable(previous):
                previous(signum, frame)
            return
        asked = True
        loop.call_soon_threadsafe(lambda: ending.add(loop.create_task(end_then_exit(signum, frame))))

    signal.signal(signal.SIGTERM, on_sigterm)


def _start_jobs(store: MatchStore, settings: Settings, url: str, embedded: bool):
    """The bot/timer/replay dispatcher as the store's listener (docs/bots.md); with an embedded
    Redis, also a ``grimoire worker`` child process, so that bots play on one command."""
    queue_url = settings.queue_redis_url or url
    jobs = Dispatcher(redis.Redis.from_url(queue_url, socket_timeout=5, socket_connect_timeout=2),
                      settings.key_prefix, replay_ttl=settings.replay_ttl,
                      watchdog_seconds=settings.bot_watchdog_seconds)
    store.listeners.append(jobs)
    worker = None
    if embedded and settings.embedded_worker:
        worker = spawn_embedded_worker(url, settings)
        log.info("no REDIS_URL: started a worker for bots, timers and replays (pid %d)", worker.pid)
    return jobs, worker


def create_app(settings: Settings | None = None, *, games: dict[str, Game] | None = None) -> Starlette:
    """The Grimoire ASGI application.

    With ``settings.redis_url`` empty, an embedded redis-server is started
    under ``settings.data_dir`` for the life of the application.
    """
    settings = settings or Settings.from_env()
    games = all_games() if games is None else games
    identity_provider = verifier_from(settings)  # None without GRIMOIRE_JWT_ISSUER; misconfigured: refuses to start
    schema = build_schema(games, max_depth=settings.graphql_max_depth, max_tokens=settings.graphql_max_tokens,
                          max_aliases=settings.graphql_max_aliases, max_cost=settings.graphql_max_cost)
    # websocket handshakes from another origin open only from GRIMOIRE_CORS_ORIGINS, as CORS requests do
    graphql = GraphQLApp(schema, max_subscriptions_per_connection=settings.max_subscriptions_per_connection,
                         allowed_origins=settings.cors_origins)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        embedded = None
        url = settings.redis_url
        if not url:
            embedded = EmbeddedRedis(settings.data_dir)
            url = embedded.url
            log.info("no REDIS_URL: started an embedded Redis at %s", url)
        # REDIS_CLUSTER=1: a Redis Cluster client (service/store/connect.py)
        app.state.redis_url = url
        app.state.store = open_store(settings, games, url, on_submit=SubmitObserver() if settings.metrics else None)
        app.state.store.compact_in_background = True  # off the request path; settled below at shutdown
        client = app.state.store.redis
        app.state.metrics_queue_redis = None
        if settings.metrics:  # queue depth for /metrics, read at scrape time
            app.state.metrics_queue_redis = aioredis.Redis.from_url(
                queue_url(url, settings.queue_redis_url, settings.redis_cluster), decode_responses=True,
                socket_timeout=2, socket_connect_timeout=2)
        app.state.live = LiveUpdates(app.state.store)
        app.state.stream_limit = StreamLimit(settings.max_streams_per_token)
        # players: their credentials act for their seats through the store (service/store/players.py)
        app.state.players = PlayerStore(app.state.store, identity_provider)
        app.state.quick_match = QuickMatch(app.state.players, settings.quick_match_bot_level)
        # collections players own, trades, and the guard of owned-collection matches (service/store/collections.py)
        app.state.collections, app.state.trades = attach_collections(app.state.store, settings, app.state.players) \
            or (None, None)
        app.state.tickets = StreamTickets(app.state.store, settings.stream_ticket_ttl)  # browsers' seat streams
        await app.state.live.start()
        _end_streams_on_sigterm(app.state.live)
        app.state.jobs, worker = _start_jobs(app.state.store, settings, url, embedded is not None)
        try:
            yield
        finally:
            if worker is not None:
                await asyncio.to_thread(stop_embedded_worker, worker)
            app.state.jobs.connection.close()
            await app.state.store.settle()
            await app.state.live.stop()
            await client.aclose()
            if app.state.metrics_queue_redis is not None:
                await app.state.metrics_queue_redis.aclose()
            if embedded is not None:
                embedded.stop()

    app = Starlette(
        routes=[
            # first: Starlette tries routes in order, and the 50 before it cost a GraphQL request about 25 µs
            Route("/graphql", graphql, methods=["GET", "POST"]),
            WebSocketRoute("/graphql", graphql),
            *rest_routes,
            *stream_routes,
            *player_routes,
            *collection_routes,
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/openapi.yaml", openapi_document, methods=["GET"]),
            *play_routes(),  # /play: the reference front end (service/play/)
            Route("/schema.graphql", graphql_sdl, methods=["GET"]),
            *page_routes,  # /, /docs, /explorers/ (service/static/)
            *([Route("/metrics", metrics_endpoint, methods=["GET"])] if settings.metrics else []),
        ],
        exception_handlers={
            HTTPException: _http_error,
            **{error: _redis_down for error in STORE_UNAVAILABLE},
            RulesVersionUnavailable: _rules_version_unavailable,
        },
        lifespan=lifespan,
    )
    app.add_middleware(BodySizeLimit, limit=settings.max_body_bytes)
    app.add_middleware(RateLimit, per_token=settings.rate_limit_per_token,
                       per_address=settings.rate_limit_per_address)
    app.add_middleware(ConnectionLimit, per_address=settings.max_connections_per_address)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=settings.cors_origins, allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["Authorization", "Content-Type", "If-Match", "Idempotency-Key",
                                          "Last-Event-ID", "Seat-Tokens"],
                           expose_headers=["ETag", "Location", "Retry-After"])
    if settings.metrics:
        app.add_middleware(MetricsMiddleware)
    if settings.metrics and settings.metrics_port:
        app.add_middleware(MetricsPort, port=settings.metrics_port)
    app.add_middleware(Guard, max_header_bytes=settings.max_header_bytes)  # 431s, 500s with the request id, headers
    app.add_middleware(RequestIdMiddleware)  # outermost: every log line of a request carries its id
    app.state.openapi_yaml = openapi_yaml(games)
    app.state.graphql_sdl = schema.as_str() + "\n"  # as grimoire export-schema writes it
    app.state.settings = settings
    app.state.games = games
    return app
