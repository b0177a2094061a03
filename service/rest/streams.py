"""Live streams for bots and simple clients: Server-Sent Events or NDJSON.

``GET /v1/matches/{id}/events``
    every accepted action after ``?after=`` (or the SSE ``Last-Event-ID``), as
    the bearer token's seat (or a spectator) may see it. SSE event ids are
    versions, so a reconnecting EventSource resumes where it stopped.
``GET /v1/turns``
    "my matches": a notice whenever one of the matches whose seat tokens are
    listed in the ``Seat-Tokens`` header starts waiting on that seat, and when
    it ends.

``Accept: application/x-ndjson`` (or ``?format=ndjson``) gives one JSON object
per line instead of SSE. Both send a keep-alive every
``GRIMOIRE_STREAM_KEEPALIVE`` seconds and end with an ``end`` message giving the
reason: ``finished``, ``shutdown`` or ``slow_consumer`` (a client that did not
take a message within ``GRIMOIRE_STREAM_SEND_TIMEOUT`` seconds is dropped, so
it cannot make the process buffer without bound).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, AsyncIterator

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from service.store import MatchStore, StoreError, bearer_token
from service.store.live import LiveUpdates, turns
from service.store.tokens import token_match

from .problems import problem

KEEPALIVE_SSE = b": keep-alive\n\n"
KEEPALIVE_NDJSON = b'{"type":"keepalive"}\n'


def _encode(kind: str, message: dict[str, Any], fmt: str, event_id: str | None = None) -> bytes:
    data = json.dumps(message, separators=(",", ":"))
    if fmt == "ndjson":
        return json.dumps({"type": kind, **message}, separators=(",", ":")).encode() + b"\n"
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {data}\n\n".encode()


class EventStream:
    """An ASGI response writing ``(kind, message, id)`` items; ``None`` items are keep-alives."""

    def __init__(self, items: AsyncIterator[tuple[str, dict, str | None] | None], fmt: str, send_timeout: float,
                 live: LiveUpdates, on_close=lambda: None):
        self.items = items
        self.on_close = on_close
        self.fmt = fmt
        self.send_timeout = send_timeout
        self.live = live

    async def __call__(self, scope, receive, send) -> None:
        media = "application/x-ndjson" if self.fmt == "ndjson" else "text/event-stream"
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", media.encode()), (b"cache-control", b"no-store"), (b"x-accel-buffering", b"no")]})
        writer = asyncio.create_task(self._write(send))
        watcher = asyncio.create_task(self._until_disconnect(receive))
        done, _ = await asyncio.wait({writer, watcher}, return_when=asyncio.FIRST_COMPLETED)
        for task in (writer, watcher):
            task.cancel()
        await asyncio.gather(writer, watcher, return_exceptions=True)
        with contextlib.suppress(Exception):
            await self.items.aclose()
        self.on_close()

    async def _until_disconnect(self, receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    async def _write(self, send) -> None:
        reason = "finished"
        keepalive = KEEPALIVE_NDJSON if self.fmt == "ndjson" else KEEPALIVE_SSE
        try:
            async for item in self.items:
                chunk = keepalive if item is None else _encode(item[0], item[1], self.fmt, item[2])
                await asyncio.wait_for(send({"type": "http.response.body", "body": chunk, "more_body": True}),
                                       self.send_timeout)
            if self.live.closing.is_set():
                reason = "shutdown"
        except asyncio.TimeoutError:
            reason = "slow_consumer"
        except StoreError as error:
            reason = error.code
        end = _encode("end", {"reason": reason}, self.fmt)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(send({"type": "http.response.body", "body": end, "more_body": False}), 1.0)


def _format(request: Request) -> str:
    if request.query_params.get("format") == "ndjson" or "ndjson" in request.headers.get("accept", ""):
        return "ndjson"
    return "sse"


async def match_events(request: Request) -> Response:
    store: MatchStore = request.app.state.store
    live: LiveUpdates = request.app.state.live
    settings = request.app.state.settings
    raw_after = request.headers.get("last-event-id") or request.query_params.get("after", "0")
    if not raw_after.isdigit() or len(raw_after) > 15:
        return problem("malformed_request", "after (or Last-Event-ID) must be a version: a whole number.")
    token = bearer_token(request.headers.get("authorization"))
    try:
        match, seat = await store.read_as(request.path_params["match_id"], token)
        held = [token] if token else []
        request.app.state.stream_limit.acquire(held)
    except StoreError as error:
        return problem(error.code, error.message)

    async def items():
        async for update in live.follow(match.id, int(raw_after), idle=settings.stream_keepalive):
            yield None if update is None else ("action", update.for_seat(seat), str(update.version))

    return EventStream(items(), _format(request), settings.stream_send_timeout, live,
                       lambda: request.app.state.stream_limit.release(held))


async def my_turns(request: Request) -> Response:
    store: MatchStore = request.app.state.store
    live: LiveUpdates = request.app.state.live
    settings = request.app.state.settings
    tokens = [t.strip() for t in request.headers.get("seat-tokens", "").split(",") if t.strip()]
    if not tokens or len(tokens) > 100:
        return problem("token_required", "List 1 to 100 seat tokens in the Seat-Tokens header, comma-separated.")
    seats = []
    try:
        for token in tokens:
            match_id = token_match(token)
            if match_id is None:
                return problem("invalid_token", "A listed token is not a seat token.")
            seats.append((match_id, (await store.read_as(match_id, token))[1]))
        request.app.state.stream_limit.acquire(tokens)
    except StoreError as error:
        return problem(error.code, error.message)

    async def items():
        async for notice in turns(live, seats, idle=settings.stream_keepalive):
            yield None if notice is None else ("turn", notice, f"{notice['match_id']}:{notice['version']}")

    return EventStream(items(), _format(request), settings.stream_send_timeout, live,
                       lambda: request.app.state.stream_limit.release(tokens))


routes = [
    Route("/v1/matches/{match_id}/events", match_events, methods=["GET"]),
    Route("/v1/turns", my_turns, methods=["GET"]),
]
