"""GraphQL subscriptions over ``graphql-transport-ws``: the token rides in the
``connection_init`` payload (``{"token": "gt...."}``, or ``{"tokens": [...]}``
for ``myTurns``), since browsers cannot set headers on a websocket.

A subscriber that does not take its messages within the send timeout is
disconnected with close code 4008 ("slow consumer"), so it cannot make the
process buffer without bound.
"""

import asyncio
import contextlib
import time
from typing import Any, AsyncIterator

from service.store import InvalidToken, StoreError, TokenRequired
from service.store.live import LiveUpdates, StreamLimit, turns
from service.store.tokens import bearer_token, token_match

SLOW_CONSUMER = 4008


def connection_tokens(context: dict) -> list[str]:
    """The seat tokens a websocket connection presented in its init payload."""
    params = context.get("connection_params") or {}
    tokens = params.get("tokens") or []
    if params.get("token"):
        tokens = [params["token"], *tokens]
    elif params.get("authorization") or params.get("Authorization"):
        token = bearer_token(params.get("authorization") or params.get("Authorization"))
        tokens = [token, *tokens] if token else tokens
    return [t for t in tokens if isinstance(t, str)][:100]


async def watched(items: AsyncIterator[Any], websocket, send_timeout: float) -> AsyncIterator[Any]:
    """Yield ``items``; close the websocket if one waits unsent longer than ``send_timeout``."""
    waiting_since: float | None = None

    async def watchdog() -> None:
        while True:
            await asyncio.sleep(min(1.0, send_timeout / 2))
            if waiting_since is not None and time.monotonic() - waiting_since > send_timeout:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(websocket.close(code=SLOW_CONSUMER, reason="slow consumer"), 2)
                return

    dog = asyncio.create_task(watchdog())
    try:
        async for item in items:
            waiting_since = time.monotonic()
            yield item
            waiting_since = None
    finally:
        dog.cancel()


async def match_updates(context: dict, match_id: str, after: int) -> AsyncIterator[tuple[str, Any, str]]:
    """("update", filtered update, game id) items for the connection's seat, or one ("problem", error, "")."""
    store = context["store"]
    live: LiveUpdates = context["request"].app.state.live
    limit: StreamLimit = context["request"].app.state.stream_limit
    settings = context["request"].app.state.settings
    tokens = [t for t in connection_tokens(context) if token_match(t) == match_id][:1]
    try:
        match, seat = await store.read_as(match_id, tokens[0] if tokens else None)
        limit.acquire(tokens)
    except StoreError as error:
        yield "problem", error, ""
        return
    try:
        updates = live.follow(match_id, max(after, 0), idle=settings.stream_keepalive)
        async for update in watched(updates, context["request"], settings.stream_send_timeout):
            if update is not None:
                yield "update", update.for_seat(seat), match.game.id
    finally:
        limit.release(tokens)


async def turn_notices(context: dict) -> AsyncIterator[tuple[str, Any]]:
    store = context["store"]
    live: LiveUpdates = context["request"].app.state.live
    limit: StreamLimit = context["request"].app.state.stream_limit
    settings = context["request"].app.state.settings
    tokens = connection_tokens(context)
    seats = []
    try:
        if not tokens:
            raise TokenRequired('Send your seat tokens in the connection_init payload: {"tokens": [...]}.')
        for token in tokens:
            match_id = token_match(token)
            if match_id is None:
                raise InvalidToken("A listed token is not a seat token.")
            seats.append((match_id, (await store.read_as(match_id, token))[1]))
        limit.acquire(tokens)
    except StoreError as error:
        yield "problem", error
        return
    try:
        notices = turns(live, seats, idle=settings.stream_keepalive)
        async for notice in watched(notices, context["request"], settings.stream_send_timeout):
            if notice is not None:
                yield "notice", notice
    finally:
        limit.release(tokens)
