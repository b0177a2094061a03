"""GraphQL subscriptions over ``graphql-transport-ws``: the token rides in the
``connection_init`` payload (``{"token": "gt...."}``, or ``{"tokens": [...]}``
for ``myTurns``), since browsers cannot set headers on a websocket.

A token given and holding no seat in the match (another match's, revoked, not
a token at all) is ``InvalidToken``, as on every other channel: never the
spectator's feed, which a bot would take for its seat's.

Every subscription's last message is a ``StreamEnded`` with the reason
(``finished``, ``shutdown``, ``store_unavailable``, ``invalid_token``), then
``complete``. Its stream-limit slot is released in a ``finally`` however it ends.

A subscriber that does not take its messages within the send timeout is
disconnected with close code 4008 ("slow consumer"), so it cannot make the
process buffer without bound.
"""

import asyncio
import contextlib
import time
from typing import Any, AsyncIterator, Callable

import strawberry

from service.rest.streams import SendWatch, seat_check
from service.store import InvalidToken, StoreError, TokenRequired
from service.store.live import LiveUpdates, StoreUnavailable, StreamLimit, guarded, turns
from service.store.tokens import bearer_token, token_match

from . import problems

SLOW_CONSUMER = 4008

@strawberry.type(description="The last message of a subscription, before `complete`: why it ended. `finished` "
                             "(the match is over), `shutdown` (this server is stopping), `store_unavailable` "
                             "(the store did not answer), `invalid_token` (the seat was left or handed to a bot). "
                             "Except after `finished`, subscribe again with `after` the last version you saw.")
class StreamEnded:
    reason: str
    message: str


_ENDINGS = {
    "finished": "The match is over.",
    "shutdown": "This server is shutting down: subscribe again (another server answers) with `after`.",
}


def ended(reason: str, message: str | None = None) -> StreamEnded:
    return StreamEnded(reason=reason, message=message or _ENDINGS.get(reason, reason))


def _presented(context: dict) -> tuple[Any, list[Any]]:
    """The connection's single token (None if it gave none) and its list of tokens, as sent."""
    params = context.get("connection_params") or {}
    single = params.get("token")
    if single in (None, ""):
        single = None
        authorization = params.get("authorization") or params.get("Authorization")
        if authorization:
            single = bearer_token(authorization) if isinstance(authorization, str) else ""
    tokens = params.get("tokens")
    if tokens is None:
        tokens = []
    elif not isinstance(tokens, list):
        tokens = [tokens]  # not a list: refused below as not a token
    return single, tokens


def connection_tokens(context: dict) -> list[str]:
    """Every seat token the connection presented (``myTurns``); raises InvalidToken for one that is not a string."""
    single, tokens = _presented(context)
    every = ([single] if single is not None else []) + tokens
    if any(not isinstance(t, str) or not t for t in every):
        raise InvalidToken("A token in the connection_init payload is not a seat token.")
    return every[:100]


def match_token(context: dict, match_id: str) -> str | None:
    """The token that follows ``match_id`` as a seat: ``token`` (or ``authorization``), else the one of
    ``tokens`` naming that match. None: a spectator (the connection gave no token at all)."""
    single, tokens = _presented(context)
    if single is not None:
        if not isinstance(single, str):
            raise InvalidToken("The connection's token is not a seat token.")
        return single
    if not tokens:
        return None
    if any(not isinstance(t, str) for t in tokens):
        raise InvalidToken("A token in the connection_init payload is not a seat token.")
    for token in tokens:
        if token_match(token) == match_id:
            return token
    raise InvalidToken("None of the connection's tokens holds a seat in this match.")


class _Watched:
    """A subscription's place in the :class:`SendWatch`: ``since`` is when the item now waiting to be sent
    was handed to strawberry; the websocket is closed if it waits longer than ``timeout``."""

    __slots__ = ("websocket", "timeout", "since", "closing")

    def __init__(self, websocket, timeout: float):
        self.websocket, self.timeout, self.since, self.closing = websocket, timeout, None, None

    def expire(self) -> None:
        async def close() -> None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.websocket.close(code=SLOW_CONSUMER, reason="slow consumer"), 2)

        self.closing = asyncio.get_running_loop().create_task(close())  # held: not collected before it runs


async def watched(items: AsyncIterator[Any], websocket, send_timeout: float) -> AsyncIterator[Any]:
    """Yield ``items``; close the websocket if one waits unsent longer than ``send_timeout``.

    Strawberry sends an item before it asks for the next, so the time from a yield to the next
    ``__anext__`` is the time its send took. One task watches every subscription (SendWatch), not one each.
    """
    mark = _Watched(websocket, send_timeout)
    watch = SendWatch.current()
    watch.add(mark)
    try:
        async with contextlib.aclosing(items):
            async for item in items:
                mark.since = time.monotonic()
                yield item
                mark.since = None
    finally:
        watch.discard(mark)


async def match_updates(context: dict, match_id: str, after: int) -> AsyncIterator[tuple[str, Any, Any]]:
    """("update", Update, (seat, game id)) items, to be shown as the connection's seat may see them
    (``Update.for_seat``); the last is ("problem", error, None) when refused, else ("end", StreamEnded, None)."""
    store = context["store"]
    live: LiveUpdates = context["request"].app.state.live
    limit: StreamLimit = context["request"].app.state.stream_limit
    settings = context["request"].app.state.settings
    try:
        token = match_token(context, match_id)
        match, seat = await guarded(lambda: store.read_as(match_id, token), live.timeout)
        lease = await limit.acquire(store, [token] if token else [], keepalive=settings.stream_keepalive)
    except StoreUnavailable as error:
        yield "end", ended(error.code, error.message), None
        return
    except StoreError as error:
        yield "problem", error, None
        return
    # not ``match`` itself in this generator's frame: its state stayed in memory as long as the subscription
    current, about = (match.status, match.version), (seat, match.game.id)
    del match
    reason, message, mark = "finished", None, None
    try:
        updates = live.follow(match_id, max(after, 0), idle=settings.stream_keepalive,
                              seat_check=seat_check(store, match_id, token), current=current)
        # watched() inlined: one generator less per subscriber
        mark = _Watched(context["request"], settings.stream_send_timeout)
        watch = SendWatch.current()
        watch.add(mark)
        async with contextlib.aclosing(updates):
            async for update in updates:
                await lease.renew()
                if update is not None:
                    mark.since = time.monotonic()
                    yield "update", update, about
                    mark.since = None
        if live.closing.is_set():
            reason = "shutdown"
    except StoreError as error:
        reason, message = error.code, error.message
    finally:
        if mark is not None:
            watch.discard(mark)
        await lease.release()
    yield "end", ended(reason, message), None


async def turn_results(info, notices: AsyncIterator[tuple[str, Any]],
                       notice: Callable[[dict], Any]) -> AsyncIterator[Any]:
    """A turn stream (:func:`turn_notices`, or a player's) as a subscription's results: each notice as
    ``notice`` makes it, a refusal as its GraphQL problem, the StreamEnded as it is. Counted as one of the
    process's subscriptions while it runs (the shutdown waits for their end)."""
    with info.context["request"].app.state.live.subscription():
        async with contextlib.aclosing(notices) as items:
            async for kind, payload in items:
                if kind == "problem":
                    yield problems.problem_for(payload)
                elif kind == "end":
                    yield payload
                else:
                    yield notice(payload)


async def turn_notices(context: dict) -> AsyncIterator[tuple[str, Any]]:
    """("notice", dict) items; the last is ("problem", error) when refused, else ("end", StreamEnded)."""
    store = context["store"]
    live: LiveUpdates = context["request"].app.state.live
    limit: StreamLimit = context["request"].app.state.stream_limit
    settings = context["request"].app.state.settings
    seats, checks = [], {}
    try:
        tokens = connection_tokens(context)
        if not tokens:
            raise TokenRequired('Send your seat tokens in the connection_init payload: {"tokens": [...]}.')
        for token in tokens:
            match_id = token_match(token)
            if match_id is None:
                raise InvalidToken("A listed token is not a seat token.")
            seats.append((match_id, (await guarded(lambda: store.read_as(match_id, token), live.timeout))[1]))
            checks[seats[-1]] = seat_check(store, match_id, token)
        lease = await limit.acquire(store, tokens, keepalive=settings.stream_keepalive)
    except StoreUnavailable as error:
        yield "end", ended(error.code, error.message)
        return
    except StoreError as error:
        yield "problem", error
        return
    reason, message = "finished", None
    try:
        notices = turns(live, seats, idle=settings.stream_keepalive, seat_checks=checks)
        async with contextlib.aclosing(watched(notices, context["request"], settings.stream_send_timeout)) as items:
            async for notice in items:
                await lease.renew()
                if notice is not None:
                    yield "notice", notice
        if live.closing.is_set():
            reason = "shutdown"
    except StoreError as error:
        reason, message = error.code, error.message
    finally:
        await lease.release()
    yield "end", ended(reason, message)
