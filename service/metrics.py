"""Prometheus metrics: ``GET /metrics`` in the text exposition format.

What is measured (all names start with ``grimoire_``):

``http_requests_total{method,route,status}``
    requests by route template (``/v1/matches/{match_id}``, never the raw path)
    and status code;
``http_request_duration_seconds{method,route}``
    latency histogram: from the request's arrival to the start of its response
    (for a live stream, the time until the stream opened);
``actions_accepted_total{game}``, ``actions_rejected_total{code}``
    action submissions through either API, rejected ones by machine code;
``version_conflicts_total``
    submissions that lost a race (also counted as rejected, code version_conflict);
``queue_depth{queue}``
    jobs waiting in each RQ queue (read from the queue Redis at scrape time);
``bot_move_seconds{game}``
    how long a bot took to choose a move: the bot worker calls
    :func:`observe_bot_move` (or wraps the move in :func:`time_bot_move`);
``live_subscribers``
    followers of live match updates (streams and subscriptions) in this process.

Metrics live in prometheus-client's default registry: one set per process.
A worker process that is not a service process exposes its own with
:func:`start_worker_metrics_server` (``/metrics``, ``/healthz``, ``/readyz``).
"""

from __future__ import annotations

import contextlib
import http.server
import threading
import time
from typing import Any, Callable, Iterator

from prometheus_client import CONTENT_TYPE_LATEST, Counter, Gauge, Histogram, generate_latest
from prometheus_client import disable_created_metrics

disable_created_metrics()  # no *_created series: they double the scrape for nothing we use

HTTP_REQUESTS = Counter("grimoire_http_requests_total", "HTTP requests by route template and status.",
                        ["method", "route", "status"])
HTTP_LATENCY = Histogram("grimoire_http_request_duration_seconds",
                         "Time from a request's arrival to the start of its response.", ["method", "route"],
                         buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
ACTIONS_ACCEPTED = Counter("grimoire_actions_accepted_total", "Actions accepted, by game.", ["game"])
ACTIONS_REJECTED = Counter("grimoire_actions_rejected_total", "Action submissions refused, by machine code.",
                           ["code"])
VERSION_CONFLICTS = Counter("grimoire_version_conflicts_total",
                            "Submissions at a stale version (optimistic concurrency conflicts).")
QUEUE_DEPTH = Gauge("grimoire_queue_depth", "Jobs waiting in an RQ queue.", ["queue"])
BOT_MOVE = Histogram("grimoire_bot_move_seconds", "Time a bot took to choose a move, by game.", ["game"],
                     buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
LIVE_SUBSCRIBERS = Gauge("grimoire_live_subscribers", "Followers of live match updates in this process.")


# -- what the rest of the code calls ------------------------------------------------

def observe_bot_move(game: str, seconds: float) -> None:
    """Record that a bot of ``game`` took ``seconds`` to choose its move."""
    BOT_MOVE.labels(game=game).observe(seconds)


@contextlib.contextmanager
def time_bot_move(game: str) -> Iterator[None]:
    """``with time_bot_move("quidditch"): action = bot.choose(view)``"""
    started = time.perf_counter()
    try:
        yield
    finally:
        observe_bot_move(game, time.perf_counter() - started)


class SubmitObserver:
    """Counts submissions for :class:`service.store.MatchStore` (its ``on_submit`` hook)."""

    def __call__(self, game: str | None, code: str | None) -> None:
        if code is None:
            _child(ACTIONS_ACCEPTED, game or "unknown").inc()
            return
        _child(ACTIONS_REJECTED, code).inc()
        if code == "version_conflict":
            VERSION_CONFLICTS.inc()


# -- HTTP ------------------------------------------------------------------------

class MetricsMiddleware:
    """Count each HTTP request by route template and status; time it to its response start."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = time.perf_counter()
        status = 500  # an exception that escapes everything is a 500 at the server

        async def timed_send(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                _child(HTTP_LATENCY, scope["method"], _route(scope)).observe(time.perf_counter() - started)
            await send(message)

        try:
            await self.app(scope, receive, timed_send)
        finally:
            _child(HTTP_REQUESTS, scope["method"], _route(scope), status).inc()


#: (metric, label values) -> the labelled child: prometheus-client's ``labels()`` takes a lock and checks
#: its arguments on every call, several times the cost of the observation itself. Label values come from
#: route templates, methods and status codes, so the cache is as bounded as the series are.
_CHILDREN: dict[tuple, Any] = {}


def _child(metric, *values) -> Any:
    key = (metric, *values)
    child = _CHILDREN.get(key)
    if child is None:
        child = _CHILDREN[key] = metric.labels(*(str(value) for value in values))
    return child


def _route(scope) -> str:
    route = scope.get("route")
    return getattr(route, "path", None) or "unmatched"


async def metrics_endpoint(request) -> Any:
    """``GET /metrics``: refresh the gauges read at scrape time, then expose everything."""
    from starlette.responses import Response

    app = request.app
    live = getattr(app.state, "live", None)
    if live is not None:
        LIVE_SUBSCRIBERS.set(live.followers)
    client = getattr(app.state, "metrics_queue_redis", None)
    if client is not None:
        try:
            await refresh_queue_depth(client)
        except Exception:  # the queue Redis is down: keep the last figures, still answer
            pass
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


async def refresh_queue_depth(client) -> None:
    """Set ``queue_depth`` from RQ's own bookkeeping (``rq:queues``, one list per queue)."""
    names = sorted(await client.smembers("rq:queues"))
    lengths = [await client.llen(name) for name in names]
    for name, length in zip(names, lengths):
        name = name.decode() if isinstance(name, bytes) else name
        QUEUE_DEPTH.labels(queue=name.removeprefix("rq:queue:")).set(length)


# -- workers ---------------------------------------------------------------------

def start_worker_metrics_server(port: int, ready: Callable[[], bool] | None = None,
                                host: str = "0.0.0.0") -> http.server.ThreadingHTTPServer:
    """Serve ``/metrics``, ``/healthz`` and ``/readyz`` from a worker process, in a daemon thread.

    ``ready`` answers readiness (e.g. the queue Redis answers a PING); without it
    the worker is ready whenever it is up. Returns the server (``shutdown()`` stops it).
    """

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/metrics":
                body, status, kind = generate_latest(), 200, CONTENT_TYPE_LATEST
            elif self.path == "/healthz":
                body, status, kind = b'{"status":"ok"}', 200, "application/json"
            elif self.path == "/readyz":
                try:
                    ok = ready() if ready is not None else True
                except Exception:
                    ok = False
                body = b'{"status":"ready"}' if ok else b'{"status":"unavailable"}'
                status, kind = (200 if ok else 503), "application/json"
            else:
                body, status, kind = b"not found", 404, "text/plain"
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # probes every few seconds: not worth a log line
            pass

    server = http.server.ThreadingHTTPServer((host, port), Handler)
    threading.Thread(target=server.serve_forever, name="grimoire-worker-metrics", daemon=True).start()
    return server
