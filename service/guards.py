"""HTTP guards: plain ASGI middlewares that need no Redis (rate limits are in service/limits.py).

* :class:`Guard`, one layer for what needs no state: headers larger than the settings allow are
  refused (431) before anything reads them; an unhandled exception becomes a logged 500 problem
  that carries the request id (it runs inside :class:`service.logs.RequestIdMiddleware`, so the
  id is still set); every response gets ``nosniff``, ``no-store`` unless a handler chose its own
  caching (seat tokens and private views are in responses), a same-origin-only, frame-refusing CSP on HTML
  pages (:data:`HTML_POLICY`).
  One layer rather than three: each ``send`` wrapper costs every response a call and a copy.
* :class:`BodySizeLimit`: bodies larger than the settings allow are refused before anything
  reads them, whichever HTTP parser the server runs (inside the rate limit, which counts them).
"""

from __future__ import annotations

import logging

from service.logs import request_id
from service.rest.problems import problem

log = logging.getLogger("grimoire")

#: HTML pages (the landing page, GraphiQL, the docs page, /play) load scripts, styles, images, fonts and
#: connections (fetch, EventSource, websockets) from this origin only: every asset ships in the package
#: (service/static/), so an injected script or a page's dependency on another host fails closed. No
#: 'unsafe-inline' and no 'unsafe-eval': pages keep their scripts in files. ``data:`` images and fonts
#: are allowed (Swagger UI and GraphiQL draw icons with them; they cannot run code). Pages may not be
#: framed: they are where people paste seat tokens.
HTML_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
               "font-src 'self' data:; connect-src 'self'; worker-src 'self'; frame-ancestors 'none'; "
               "base-uri 'none'; object-src 'none'; form-action 'self'")
HTML_POLICY_HEADER = HTML_POLICY.encode()


class Guard:
    """The checks and headers every request gets, in one layer (one ``send`` wrapper, not three):

    * headers past ``max_header_bytes``: 431 (a websocket handshake is closed, 1009) before
      anything reads the request;
    * an unhandled exception: a 500 problem naming the request id, logged with its traceback
      (this runs inside :class:`service.logs.RequestIdMiddleware`, so the id is set);
    * security headers on every HTTP response, the guard's own 431 and 500 included
      (docs/security.md, "Headers").
    """

    def __init__(self, app, *, max_header_bytes: int):
        self.app = app
        self.max_header_bytes = max_header_bytes

    async def __call__(self, scope, receive, send):
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        if sum(len(name) + len(value) + 4 for name, value in scope.get("headers", ())) > self.max_header_bytes:
            if kind == "websocket":
                return await send({"type": "websocket.close", "code": 1009})
            response = problem("headers_too_large", f"Request headers are limited to {self.max_header_bytes} bytes.")
            return await response(scope, receive, _with_security_headers(send))
        if kind == "websocket":
            return await self.app(scope, receive, send)
        started = False

        async def guarded_send(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": security_headers(message.get("headers", []))}
            await send(message)

        try:
            await self.app(scope, receive, guarded_send)
        except Exception:
            log.exception("unhandled error on %s %s", scope["method"], scope["path"])
            if started:  # too late for a 500: the server closes the connection
                raise
            rid = request_id.get()
            response = problem("internal_error", f"Something went wrong on our side; it has been logged under "
                                                 f"request id {rid}.", request_id=rid)
            await response(scope, receive, guarded_send)


def security_headers(headers) -> list:
    """``headers`` (a response's, as ASGI pairs) with the ones every response carries added."""
    headers = list(headers)
    names = {name.lower() for name, _ in headers}
    headers.append((b"x-content-type-options", b"nosniff"))
    if b"cache-control" not in names:  # seat tokens and private views are in responses
        headers.append((b"cache-control", b"no-store"))
    content_type = next((value for name, value in headers if name.lower() == b"content-type"), b"")
    if content_type.startswith(b"text/html") and b"content-security-policy" not in names:
        headers.append((b"content-security-policy", HTML_POLICY_HEADER))
        headers.append((b"x-frame-options", b"DENY"))
    return headers


def _with_security_headers(send):
    async def secured_send(message):
        if message["type"] == "http.response.start":
            message = {**message, "headers": security_headers(message.get("headers", []))}
        await send(message)

    return secured_send


class BodySizeLimit:
    """Refuse request bodies larger than ``limit`` bytes with a 413 problem."""

    def __init__(self, app, limit: int):
        self.app = app
        self.limit = limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers", ())).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            return await self._refuse(scope, receive, send)
        received = 0

        async def limited_receive():
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.limit:
                raise _TooLarge()
            return message

        try:
            await self.app(scope, limited_receive, send)
        except _TooLarge:
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope, receive, send):
        response = problem("payload_too_large", f"Request bodies are limited to {self.limit} bytes.")
        await response(scope, receive, send)


class _TooLarge(Exception):
    pass


class MetricsPort:
    """With ``GRIMOIRE_METRICS_PORT``, ``/metrics`` answers on that port only, and only it does.

    One process listens on both ports (``grimoire serve`` binds them); the port a request came in on
    tells them apart, so Prometheus scrapes a port the load balancer never exposes.
    """

    ON_METRICS_PORT = ("/metrics", "/healthz", "/readyz")

    def __init__(self, app, port: int):
        self.app = app
        self.port = port

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            server = scope.get("server") or (None, None)
            on_metrics_port = server[1] == self.port
            if (scope["path"] == "/metrics") != on_metrics_port and \
                    not (on_metrics_port and scope["path"] in self.ON_METRICS_PORT):
                if scope["type"] == "websocket":
                    return await send({"type": "websocket.close", "code": 1008})
                return await problem("not_found", "No such resource on this port.")(scope, receive, send)
        await self.app(scope, receive, send)
