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
reason: ``finished``, ``shutdown``, ``store_unavailable`` (Redis did not answer:
resume with ``after`` once it is back), ``invalid_token`` (the seat was left or
handed to a bot meanwhile) or ``slow_consumer`` (a client that did not take a
message within ``GRIMOIRE_STREAM_SEND_TIMEOUT`` seconds is dropped, so it
cannot make the process buffer without bound).

``POST /v1/matches/{id}/stream-tickets``
    a short-lived, single-use ticket for the seat token's stream (service/store/tickets.py):
    ``GET /v1/matches/{id}/events?ticket=...`` is that seat's stream, for a browser's
    ``EventSource``, which cannot send an ``Authorization`` header. A seat token never goes
    in a URL.

A non-empty token that holds no seat in the match (another match's, revoked,
not a token at all) is ``401 invalid_token``, never the spectator's stream.
Each open stream holds a slot of its tokens' stream limit, released in a
``finally`` on every way out (see :class:`service.store.live.StreamLimit`).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import time
import weakref
from typing import Any, AsyncIterator, Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from service.store import InvalidToken, MatchStore, StoreError, bearer_token
from service.store.connect import STORE_UNAVAILABLE
from service.store.archive import Update
from service.store.live import Lease, LiveUpdates, StoreUnavailable, guarded, turns, within
from service.store.tickets import StreamTickets, TicketHolder
from service.store.tokens import token_match
from service.wire import JSONResponse

from .problems import problem

log = logging.getLogger("grimoire.streams")

KEEPALIVE_SSE = b": keep-alive\n\n"
KEEPALIVE_NDJSON = b'{"type":"keepalive"}\n'


def _encode(kind: str, message: dict[str, Any], fmt: str, event_id: str | None = None) -> bytes:
    data = json.dumps(message, separators=(",", ":"))
    if fmt == "ndjson":
        # {"type": kind, **message}, without encoding the message twice (no message has a "type" key)
        return f'{{"type":{json.dumps(kind)}{"," if message else ""}{data[1:]}\n'.encode()
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {data}\n\n".encode()


def action_frame(update: Update, seat: int | None, fmt: str, game: str) -> bytes:
    """The frame of ``update`` (a match of ``game``) as ``seat`` (None: a spectator) sees it: encoded once per
    seat and format, the same bytes for every follower of this process (a spectator's are every spectator's)."""
    return update.shared((fmt, seat), lambda: _encode("action", {"game": game, **update.for_seat(seat)}, fmt,
                                                      str(update.version)))


class SendWatch:
    """The send timeouts of every stream of an event loop, kept by one task.

    A timer per send (``asyncio.wait_for``, ``asyncio.timeout``) cost each follower a timer (once a task)
    per update; here a send marks when it began (``since``) and one task, waking every ``period``, calls
    ``expire()`` on a stream whose send has waited longer than its ``timeout``: a slow consumer is dropped
    within ``timeout + period``.
    """

    period = 0.25
    _of_loop: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, SendWatch]" = weakref.WeakKeyDictionary()

    def __init__(self):
        self.watched: set = set()
        self.task: asyncio.Task | None = None

    @classmethod
    def current(cls) -> "SendWatch":
        loop = asyncio.get_running_loop()
        watch = cls._of_loop.get(loop)
        if watch is None:
            watch = cls._of_loop[loop] = cls()
        return watch

    def add(self, stream) -> None:
        """``stream`` has ``since`` (when its pending send began, else None), ``timeout`` and ``expire()``."""
        self.watched.add(stream)
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._sweep(), name="grimoire-send-watch")

    def discard(self, stream) -> None:
        self.watched.discard(stream)

    async def _sweep(self) -> None:
        try:
            while self.watched:
                await asyncio.sleep(self.period)
                now = time.monotonic()
                for stream in [w for w in self.watched if w.since is not None and now - w.since > w.timeout]:
                    self.watched.discard(stream)
                    try:
                        stream.expire()
                    except Exception:
                        log.exception("a slow consumer could not be dropped")
        finally:
            self.task = None


async def _nothing() -> None:
    return None


class EventStream:
    """An ASGI response writing ``(kind, message, id)`` items or frames (bytes); ``None`` items are keep-alives.

    ``frame`` turns each other item into its frame; ``lease`` (the stream limit's) is renewed as
    items pass. ``on_close`` (the stream limit's release; a coroutine function or a plain one) runs
    however the response ends: finished, client gone, server error. One stream of a thousand
    followers: what it holds while idle is multiplied by them, so no generator wraps another here.
    """

    def __init__(self, items: AsyncIterator[Any], fmt: str, send_timeout: float, live: LiveUpdates,
                 on_close: Callable[[], Awaitable[None] | None] = _nothing, *, lease: Lease | None = None,
                 frame: Callable[[Any], bytes] | None = None):
        self.items = items
        self.on_close = on_close
        self.lease = lease
        self.frame = frame
        self.fmt = fmt
        self.timeout = send_timeout
        self.live = live
        self.since: float | None = None  # when the pending send began (SendWatch)
        self.slow = False  # SendWatch dropped it
        self.gone = False  # the client disconnected
        self.writer: asyncio.Task | None = None  # the task writing, while it writes
        self.cancels = 0  # cancellations of the writer by this stream, not yet taken back

    def _cancel(self) -> None:
        if self.writer is not None:
            self.cancels += 1
            self.writer.cancel()

    def expire(self) -> None:
        """SendWatch: the client took nothing for ``timeout`` seconds."""
        self.slow = True
        self._cancel()

    async def __call__(self, scope, receive, send) -> None:
        try:
            media = "application/x-ndjson" if self.fmt == "ndjson" else "text/event-stream"
            try:
                await send({"type": "http.response.start", "status": 200, "headers": [
                    (b"content-type", media.encode()), (b"cache-control", b"no-store"),
                    (b"x-accel-buffering", b"no")]})
            except Exception:  # the client went away before the response started
                return
            # this task writes; one more waits for the disconnect and cancels it (a task of
            # its own for the writing was one task more per follower)
            watcher = asyncio.create_task(self._until_disconnect(receive))
            watch = SendWatch.current()
            watch.add(self)
            try:
                await self._write(send)
            finally:
                watch.discard(self)
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
        finally:
            try:
                with contextlib.suppress(Exception):
                    await self.items.aclose()
            finally:
                closed = self.on_close()
                if inspect.isawaitable(closed):
                    await closed

    async def _until_disconnect(self, receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        self.gone = True
        self._cancel()

    def _ours(self) -> bool:
        """Whether the cancellation just caught was only this stream's own (disconnect, slow consumer,
        or both at once): they are taken back; any other (the server's) still stands."""
        task = asyncio.current_task()
        while self.cancels and task.cancelling():
            task.uncancel()
            self.cancels -= 1
        return (self.slow or self.gone) and not task.cancelling()

    async def _write(self, send) -> None:
        """Cancelled only while it runs: ``writer`` is set on the way in and cleared on every way out,
        with no await between, so a cancellation of ours never lands outside it."""
        self.writer = asyncio.current_task()
        try:
            await self._write_all(send)
        finally:
            self.writer = None

    async def _write_all(self, send) -> None:
        reason = "finished"
        keepalive = KEEPALIVE_NDJSON if self.fmt == "ndjson" else KEEPALIVE_SSE
        try:
            async for item in self.items:
                if self.lease is not None:
                    await self.lease.renew()
                if item is None:
                    chunk = keepalive
                elif self.frame is not None:
                    chunk = self.frame(item)
                elif isinstance(item, bytes):
                    chunk = item
                else:
                    chunk = _encode(item[0], item[1], self.fmt, item[2])
                self.since = time.monotonic()
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                self.since = None
            if self.live.closing.is_set():
                reason = "shutdown"
        except asyncio.CancelledError:
            if not self._ours():
                raise
            if self.gone:
                return
            reason = "slow_consumer"
        except StoreError as error:
            reason = error.code
        except STORE_UNAVAILABLE as error:  # not through the live updates' guard: still an outage
            log.warning("stream: the store did not answer (%s)", type(error).__name__)
            reason = StoreUnavailable.code
        except Exception:  # a bug: logged with its trace, the client gets a reason and no details
            log.exception("stream failed")
            reason = "internal_error"
        end = _encode("end", {"reason": reason}, self.fmt)
        try:
            await within(send({"type": "http.response.body", "body": end, "more_body": False}), 1.0)
        except asyncio.CancelledError:
            if not self._ours():
                raise
        except Exception:
            pass


def _format(request: Request) -> str:
    if request.query_params.get("format") == "ndjson" or "ndjson" in request.headers.get("accept", ""):
        return "ndjson"
    return "sse"


def _refused(error: StoreError) -> Response:
    if isinstance(error, StoreUnavailable):  # as every other route answers an outage
        return problem("service_unavailable", error.message, headers={"Retry-After": "1"})
    return problem(error.code, error.message)


def seat_check(store: MatchStore, match_id: str, token: str | None):
    """What :meth:`LiveUpdates.follow` awaits after a seat change: raises InvalidToken once ``token`` is revoked."""
    if not token:
        return None

    async def check() -> None:
        await store.read_as(match_id, token)  # a seat token, or a player's credential holding a seat there

    return check


def holder_check(store: MatchStore, holder: TicketHolder):
    """:func:`seat_check` for a stream opened with a ticket: raises InvalidToken once the seat changes hands."""

    async def check() -> None:
        if not holder.still_holds(await store.get(holder.match_id)):
            raise InvalidToken("The seat this stream was opened for changed hands (left, or given to a bot).")

    return check


async def _ticket_holder(request: Request, match_id: str, ticket: str):
    """The match and seat a ticket opens a stream for (spending it); raises StoreError if refused."""
    store: MatchStore = request.app.state.store
    holder = await request.app.state.tickets.spend(match_id, ticket)  # no retry: a ticket is spent once
    match = await guarded(lambda: store.get(match_id), request.app.state.live.timeout)
    if not holder.still_holds(match):
        raise InvalidToken("The seat this stream ticket was issued for has changed hands since (left, or given "
                           "to a bot).")
    return match, holder


async def match_events(request: Request) -> Response:
    store: MatchStore = request.app.state.store
    live: LiveUpdates = request.app.state.live
    settings = request.app.state.settings
    raw_after = request.headers.get("last-event-id") or request.query_params.get("after", "0")
    if not raw_after.isdigit() or len(raw_after) > 15:
        return problem("malformed_request", "after (or Last-Event-ID) must be a version: a whole number.")
    token = bearer_token(request.headers.get("authorization"))
    ticket = request.query_params.get("ticket")
    if ticket is not None and token is not None:
        return problem("malformed_request", "Send a stream ticket or a seat token, not both.")
    match_id = request.path_params["match_id"]
    try:
        if ticket is not None:
            match, holder = await _ticket_holder(request, match_id, ticket)
            seat, check = holder.seat, holder_check(store, holder)
            lease = await request.app.state.stream_limit.acquire(
                store, [], keepalive=settings.stream_keepalive, hashed=((match_id, holder.token_hash),))
        else:
            match, seat = await guarded(lambda: store.read_as(match_id, token), live.timeout)
            check = seat_check(store, match_id, token)
            lease = await request.app.state.stream_limit.acquire(store, [token] if token else [],
                                                                 keepalive=settings.stream_keepalive)
    except StoreError as error:
        return _refused(error)

    fmt = _format(request)
    # not ``match`` itself in the stream's closure: its state stayed in memory as long as the stream
    current, game = (match.status, match.version), match.game.id
    del match

    updates = live.follow(match_id, int(raw_after), idle=settings.stream_keepalive, seat_check=check,
                          current=current)
    return EventStream(updates, fmt, settings.stream_send_timeout, live, lease.release, lease=lease,
                       frame=lambda update: action_frame(update, seat, fmt, game))


async def my_turns(request: Request) -> Response:
    store: MatchStore = request.app.state.store
    live: LiveUpdates = request.app.state.live
    settings = request.app.state.settings
    tokens = [t.strip() for t in request.headers.get("seat-tokens", "").split(",") if t.strip()]
    if not tokens or len(tokens) > 100:
        return problem("token_required", "List 1 to 100 seat tokens in the Seat-Tokens header, comma-separated.")
    seats, checks = [], {}
    try:
        for token in tokens:
            match_id = token_match(token)
            if match_id is None:
                return problem("invalid_token", "A listed token is not a seat token.")
            seats.append((match_id, (await guarded(lambda: store.read_as(match_id, token), live.timeout))[1]))
            checks[seats[-1]] = seat_check(store, match_id, token)
        lease = await request.app.state.stream_limit.acquire(store, tokens, keepalive=settings.stream_keepalive)
    except StoreError as error:
        return _refused(error)

    async def items():
        notices = turns(live, seats, idle=settings.stream_keepalive, seat_checks=checks)
        async with contextlib.aclosing(notices):
            async for notice in notices:
                yield None if notice is None else ("turn", notice, f"{notice['match_id']}:{notice['version']}")

    return EventStream(items(), _format(request), settings.stream_send_timeout, live, lease.release, lease=lease)


async def stream_ticket(request: Request) -> Response:
    tickets: StreamTickets = request.app.state.tickets
    try:
        issued = await tickets.issue(request.path_params["match_id"],
                                     bearer_token(request.headers.get("authorization")))
    except StoreError as error:
        return _refused(error)
    return JSONResponse({"ticket": issued.ticket, "match_id": issued.match_id, "seat": issued.seat,
                         "expires_in": issued.expires_in, "events_url": issued.events_url}, status_code=201)


routes = [
    Route("/v1/matches/{match_id}/stream-tickets", stream_ticket, methods=["POST"]),
    Route("/v1/matches/{match_id}/events", match_events, methods=["GET"]),
    Route("/v1/turns", my_turns, methods=["GET"]),
]
