"""A Python client of the Grimoire REST API, synchronous (:class:`Client`) and asynchronous (:class:`AsyncClient`).

::

    with Client("http://127.0.0.1:8000") as grimoire:
        match = grimoire.create_match("spells-and-potions", variant="practice-1", bots=[Bot("greedy", seat=1)])
        me = grimoire.join(match.id, "Ann")          # a Seat: keeps the token and the last version read
        for notice in me.turns():                    # whenever the match waits on this seat, and at its end
            if notice.your_turn:
                me.play_turn(lambda view, actions: actions[0])

What it does for you:

- **Versions.** A :class:`Seat` remembers the version of the last match, legal actions or accepted action it
  read, and sends it as ``If-Match`` with the next action. A stale one raises :class:`VersionConflict`, after
  reading the match again (``error.match``): choose again, or let :meth:`Seat.play_turn` do it.
- **Retries.** Every action carries an ``Idempotency-Key``; reads and actions are sent again, with the same
  key, when the service cannot be reached or answers 503 (for ``Retry.within`` seconds), so a server
  restart costs a bot nothing and no action is applied twice.
- **Streams.** :meth:`Seat.follow` (every update of the match) and :meth:`Seat.turns` (turn notices) are
  Server-Sent Events read with httpx-sse; a dropped stream is opened again where it stopped
  (``Last-Event-ID``), with no update missed or repeated.
- **Errors.** A refusal raises the exception of its problem code (:mod:`grimoire.errors`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from types import TracebackType
from typing import AsyncIterator, Callable, Iterator, TypeVar

import httpx
from httpx_sse import EventSource, ServerSentEvent

from grimoire import calls
from grimoire.calls import Call, Retry
from grimoire.errors import ConnectionLost, GrimoireError, VersionConflict
from grimoire.models import JSON, Accepted, Bot, Game, HistoryEntry, LegalActions, Match, TurnNotice, Update

__all__ = ["Client", "AsyncClient", "Seat", "AsyncSeat", "Strategy", "Retry", "Bot"]

log = logging.getLogger("grimoire.client")

T = TypeVar("T")

#: a bot's choice: ``strategy(view, legal_actions)`` returns one of the legal actions
Strategy = Callable[[JSON, list[JSON]], JSON]

USER_AGENT = "grimoire-client/0.1"


class Client:
    """The service at ``url``, over HTTP with httpx (``transport``: httpx's, for tests and proxies).

    ``timeout`` bounds each request; ``retry`` says how long an unreachable service is waited for;
    a stream silent for ``stream_read_timeout`` seconds (the service sends keep-alives every 15 s) is
    opened again. Close it, or use it as a context manager.
    """

    def __init__(self, url: str, *, timeout: float = 10.0, retry: Retry = Retry(), stream_read_timeout: float = 60.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.http = httpx.Client(base_url=url, timeout=timeout, transport=transport,
                                 headers={"User-Agent": USER_AGENT})
        self.retry = retry
        self.stream_read_timeout = stream_read_timeout

    def __enter__(self) -> Client:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    def send(self, call: Call[T]) -> T:
        """Send ``call`` and read its answer, trying again while the service is unreachable, answers 503 or
        rate-limits it (grimoire.calls.wait_before_retry says which calls, and how long)."""
        waits = self.retry.delays()
        while True:
            error: httpx.TransportError | None = None
            response: httpx.Response | None = None
            try:
                response = self.http.send(call.request(self.http))
            except httpx.TransportError as caught:
                error = caught
            if response is not None and response.status_code not in calls.RETRIED_STATUS:
                return call.answer(response)
            wait = calls.wait_before_retry(call.resendable, waits, error, response)
            if wait is None:
                if response is not None:
                    return call.answer(response)  # raises its refusal
                raise ConnectionLost(f"{call.method} {call.path}: {type(error).__name__}") from error
            log.warning("%s %s: %s; trying again in %.1f s", call.method, call.path,
                        type(error).__name__ if response is None else response.status_code, wait)
            time.sleep(wait)

    def games(self) -> list[Game]:
        return self.send(calls.list_games())

    def create_match(self, game: str, *, variant: str | None = None, seats: int | None = None,
                     seed: int | str | None = None, options: JSON | None = None, bots: list[Bot] | None = None,
                     turn_seconds: int | None = None) -> Match:
        """A new match (``seats``: the game's fewest when None; ``seed`` for a reproducible one;
        ``bots``: seats given to server bots at once)."""
        return self.send(calls.create_match(game, variant=variant, seats=seats, seed=None if seed is None else str(seed),
                                            options=options, bots=bots, turn_seconds=turn_seconds))

    def add_bot(self, match_id: str, level: str, seat: int | None = None) -> Match:
        """Give a free seat (the lowest when ``seat`` is None) to a server bot; :meth:`Seat.hand_to_bot`
        hands your own seat to one."""
        return self.send(calls.add_bot(match_id, None, Bot(level, seat)))

    def join(self, match_id: str, name: str, *, seat: int | None = None) -> Seat:
        """Take a seat (the lowest free one when ``seat`` is None): the Seat keeps its token."""
        joined = self.send(calls.join(match_id, name, seat))
        return Seat(self, match_id, joined.seat, joined.token, joined.match.version)

    def seat(self, match_id: str, token: str) -> Seat:
        """A seat you already hold, from its token (a bot started again)."""
        match = self.send(calls.get_match(match_id, token))
        return Seat(self, match_id, match.my_seat, token, match.version)

    def watch(self, match_id: str) -> Seat:
        """The spectator's place at a match: everything a Seat reads, nothing hidden, no actions."""
        return Seat(self, match_id, None, None, self.send(calls.get_match(match_id, None)).version)

    def events(self, path: str, headers: dict[str, str],
               params: dict[str, str | int] | None = None) -> Iterator[ServerSentEvent]:
        """The SSE messages of a stream of the service, other than its ``end``, opened again where it stopped
        (``Last-Event-ID``) after a drop, a resumable ``end``, a 503 or a 429 (``too_many_streams``: the slot
        of a dropped stream can outlive it for a while); it ends when the stream ends for good
        (grimoire.calls.end_reason)."""
        last_id: str | None = None
        waits = self.retry.delays()
        while True:
            error: httpx.TransportError | None = None
            cause = "the connection closed"
            request = calls.stream_request(self.http, path, headers, params, last_id, self.stream_read_timeout)
            refused: httpx.Response | None = None
            try:
                response = self.http.send(request, stream=True)
                try:
                    if response.status_code != 200:
                        response.read()
                        refused, cause = response, str(response.status_code)
                    else:
                        waits = self.retry.delays()  # through: a whole allowance for the next outage
                        for event in EventSource(response).iter_sse():
                            if event.event == "end":
                                reason = calls.end_reason(event)
                                if reason == "finished":
                                    return
                                cause = f"end: {reason}"
                                break
                            last_id = event.id or last_id
                            yield event
                finally:
                    response.close()
            except httpx.TransportError as caught:
                error, cause = caught, type(caught).__name__
            if refused is not None and refused.status_code not in calls.RETRIED_STATUS:
                raise calls.refusal(refused)
            wait = calls.wait_before_retry(True, waits, error, refused)
            if wait is None:
                if refused is not None:
                    raise calls.refusal(refused)
                raise ConnectionLost(f"GET {path}: {cause}") from error
            log.warning("stream %s ended (%s); resuming after %s in %.1f s", path, cause, last_id, wait)
            time.sleep(wait)


class Seat:
    """One seat of one match (``index`` None: the spectator's place), its token and the last version read.

    ``version`` is the match's version in the last match, legal actions or accepted action this Seat read:
    what the caller decided on, and what :meth:`submit` sends as ``If-Match``. Updates from the streams do
    not move it: an action is based on what was read, never on what merely went by.
    """

    def __init__(self, client: Client, match_id: str, index: int | None, token: str | None, version: int) -> None:
        self.client = client
        self.match_id = match_id
        self.index = index
        self.token = token
        self.version = version

    def view(self) -> Match:
        match = self.client.send(calls.get_match(self.match_id, self.token))
        self.version = match.version
        return match

    def legal_actions(self) -> LegalActions:
        legal = self.client.send(calls.legal_actions(self.match_id, self.token))
        self.version = legal.version
        return legal

    def submit(self, action: JSON, *, version: int | None = None, key: str | None = None) -> Accepted:
        """Send one of the legal actions, based on ``version`` (default: the last version read).

        ``key`` is the idempotency key (one is made up when None); a send that may have reached the
        service is sent again with the same key. A stale version raises :class:`VersionConflict` once the
        match is read again (``error.match``, and ``version`` is now its version).
        """
        call = calls.submit(self.match_id, self.token, action, self.version if version is None else version, key)
        try:
            accepted = self.client.send(call)
        except VersionConflict as conflict:
            conflict.match = self.view()
            raise
        self.version = accepted.match.version
        return accepted

    def play_turn(self, strategy: Strategy, attempts: int = 5) -> Accepted | None:
        """Read the view and the legal actions, submit ``strategy(view, legal_actions)``; on a version
        conflict read again and ask again, up to ``attempts`` times. None when this seat has nothing to do."""
        for _ in range(attempts):
            match, legal = self.view(), self.legal_actions()
            if legal.version != match.version:  # something happened between the two reads
                continue
            if not legal.actions:
                return None
            try:
                return self.submit(strategy(match.view, legal.actions), version=legal.version)
            except VersionConflict:
                continue
        raise GrimoireError(f"the match kept moving on: no action accepted in {attempts} attempts")

    def history(self, after: int = 0, limit: int = 100) -> list[HistoryEntry]:
        """The accepted actions after version ``after`` (at most ``limit``), as this seat may see them."""
        return self.client.send(calls.history(self.match_id, self.token, after, limit))

    def hand_to_bot(self, level: str) -> Match:
        """Give this seat to a server bot (mid-match too): the token stops working at once."""
        return self.client.send(calls.add_bot(self.match_id, self.token, Bot(level, self.index)))

    def leave(self) -> Match:
        """Give the seat up: the token stops working and the seat is free to join."""
        if self.index is None:
            raise GrimoireError("a spectator holds no seat to leave")
        return self.client.send(calls.leave(self.match_id, self.token, self.index))

    def _auth(self) -> dict[str, str]:
        return {} if self.token is None else {"Authorization": f"Bearer {self.token}"}

    def follow(self, after: int | None = None) -> Iterator[Update]:
        """Every update of the match after version ``after`` (default: the last version read), as this
        seat may see it, until the match is over; a dropped stream resumes after the last update given."""
        start = self.version if after is None else after
        for event in self.client.events(f"/v1/matches/{self.match_id}/events", self._auth(), {"after": start}):
            if event.event == "action":
                yield Update.from_json(event.json())

    def turns(self) -> Iterator[TurnNotice]:
        """A notice whenever the match waits on this seat (``your_turn``; once when it starts waiting), and
        one when it ends; the stream ends after it. A reconnect is told the match's state afresh."""
        if self.token is None:
            raise GrimoireError("a spectator has no turns")
        for event in self.client.events("/v1/turns", {"Seat-Tokens": self.token}):
            if event.event == "turn":
                yield TurnNotice.from_json(event.json())


class AsyncClient:
    """:class:`Client` for asyncio: the same calls, awaited (``async with AsyncClient(url) as grimoire``)."""

    def __init__(self, url: str, *, timeout: float = 10.0, retry: Retry = Retry(), stream_read_timeout: float = 60.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.http = httpx.AsyncClient(base_url=url, timeout=timeout, transport=transport,
                                      headers={"User-Agent": USER_AGENT})
        self.retry = retry
        self.stream_read_timeout = stream_read_timeout

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def send(self, call: Call[T]) -> T:
        """:meth:`Client.send`, awaited."""
        waits = self.retry.delays()
        while True:
            error: httpx.TransportError | None = None
            response: httpx.Response | None = None
            try:
                response = await self.http.send(call.request(self.http))
            except httpx.TransportError as caught:
                error = caught
            if response is not None and response.status_code not in calls.RETRIED_STATUS:
                return call.answer(response)
            wait = calls.wait_before_retry(call.resendable, waits, error, response)
            if wait is None:
                if response is not None:
                    return call.answer(response)  # raises its refusal
                raise ConnectionLost(f"{call.method} {call.path}: {type(error).__name__}") from error
            log.warning("%s %s: %s; trying again in %.1f s", call.method, call.path,
                        type(error).__name__ if response is None else response.status_code, wait)
            await asyncio.sleep(wait)

    async def games(self) -> list[Game]:
        return await self.send(calls.list_games())

    async def create_match(self, game: str, *, variant: str | None = None, seats: int | None = None,
                           seed: int | str | None = None, options: JSON | None = None, bots: list[Bot] | None = None,
                           turn_seconds: int | None = None) -> Match:
        return await self.send(calls.create_match(game, variant=variant, seats=seats,
                                                  seed=None if seed is None else str(seed), options=options,
                                                  bots=bots, turn_seconds=turn_seconds))

    async def add_bot(self, match_id: str, level: str, seat: int | None = None) -> Match:
        return await self.send(calls.add_bot(match_id, None, Bot(level, seat)))

    async def join(self, match_id: str, name: str, *, seat: int | None = None) -> AsyncSeat:
        joined = await self.send(calls.join(match_id, name, seat))
        return AsyncSeat(self, match_id, joined.seat, joined.token, joined.match.version)

    async def seat(self, match_id: str, token: str) -> AsyncSeat:
        match = await self.send(calls.get_match(match_id, token))
        return AsyncSeat(self, match_id, match.my_seat, token, match.version)

    async def watch(self, match_id: str) -> AsyncSeat:
        return AsyncSeat(self, match_id, None, None, (await self.send(calls.get_match(match_id, None))).version)

    async def events(self, path: str, headers: dict[str, str],
                     params: dict[str, str | int] | None = None) -> AsyncIterator[ServerSentEvent]:
        """:meth:`Client.events`, awaited."""
        last_id: str | None = None
        waits = self.retry.delays()
        while True:
            error: httpx.TransportError | None = None
            cause = "the connection closed"
            request = calls.stream_request(self.http, path, headers, params, last_id, self.stream_read_timeout)
            refused: httpx.Response | None = None
            try:
                response = await self.http.send(request, stream=True)
                try:
                    if response.status_code != 200:
                        await response.aread()
                        refused, cause = response, str(response.status_code)
                    else:
                        waits = self.retry.delays()
                        async for event in EventSource(response).aiter_sse():
                            if event.event == "end":
                                reason = calls.end_reason(event)
                                if reason == "finished":
                                    return
                                cause = f"end: {reason}"
                                break
                            last_id = event.id or last_id
                            yield event
                finally:
                    await response.aclose()
            except httpx.TransportError as caught:
                error, cause = caught, type(caught).__name__
            if refused is not None and refused.status_code not in calls.RETRIED_STATUS:
                raise calls.refusal(refused)
            wait = calls.wait_before_retry(True, waits, error, refused)
            if wait is None:
                if refused is not None:
                    raise calls.refusal(refused)
                raise ConnectionLost(f"GET {path}: {cause}") from error
            log.warning("stream %s ended (%s); resuming after %s in %.1f s", path, cause, last_id, wait)
            await asyncio.sleep(wait)


class AsyncSeat:
    """:class:`Seat` for asyncio: the same methods, awaited; ``follow`` and ``turns`` are async iterators."""

    def __init__(self, client: AsyncClient, match_id: str, index: int | None, token: str | None,
                 version: int) -> None:
        self.client = client
        self.match_id = match_id
        self.index = index
        self.token = token
        self.version = version

    async def view(self) -> Match:
        match = await self.client.send(calls.get_match(self.match_id, self.token))
        self.version = match.version
        return match

    async def legal_actions(self) -> LegalActions:
        legal = await self.client.send(calls.legal_actions(self.match_id, self.token))
        self.version = legal.version
        return legal

    async def submit(self, action: JSON, *, version: int | None = None, key: str | None = None) -> Accepted:
        call = calls.submit(self.match_id, self.token, action, self.version if version is None else version, key)
        try:
            accepted = await self.client.send(call)
        except VersionConflict as conflict:
            conflict.match = await self.view()
            raise
        self.version = accepted.match.version
        return accepted

    async def play_turn(self, strategy: Strategy, attempts: int = 5) -> Accepted | None:
        for _ in range(attempts):
            match, legal = await self.view(), await self.legal_actions()
            if legal.version != match.version:
                continue
            if not legal.actions:
                return None
            try:
                return await self.submit(strategy(match.view, legal.actions), version=legal.version)
            except VersionConflict:
                continue
        raise GrimoireError(f"the match kept moving on: no action accepted in {attempts} attempts")

    async def history(self, after: int = 0, limit: int = 100) -> list[HistoryEntry]:
        return await self.client.send(calls.history(self.match_id, self.token, after, limit))

    async def hand_to_bot(self, level: str) -> Match:
        return await self.client.send(calls.add_bot(self.match_id, self.token, Bot(level, self.index)))

    async def leave(self) -> Match:
        if self.index is None:
            raise GrimoireError("a spectator holds no seat to leave")
        return await self.client.send(calls.leave(self.match_id, self.token, self.index))

    def _auth(self) -> dict[str, str]:
        return {} if self.token is None else {"Authorization": f"Bearer {self.token}"}

    async def follow(self, after: int | None = None) -> AsyncIterator[Update]:
        start = self.version if after is None else after
        async for event in self.client.events(f"/v1/matches/{self.match_id}/events", self._auth(), {"after": start}):
            if event.event == "action":
                yield Update.from_json(event.json())

    async def turns(self) -> AsyncIterator[TurnNotice]:
        if self.token is None:
            raise GrimoireError("a spectator has no turns")
        async for event in self.client.events("/v1/turns", {"Seat-Tokens": self.token}):
            if event.event == "turn":
                yield TurnNotice.from_json(event.json())
