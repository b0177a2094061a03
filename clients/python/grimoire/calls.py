"""The REST calls as values, and the rules for trying again: everything :class:`~grimoire.client.Client` and
:class:`~grimoire.client.AsyncClient` share, so the two differ only in how they wait.

A :class:`Call` names one request and how to read its answer; the clients send it. Nothing here does I/O.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Generic, Iterator, TypeVar

import httpx
from httpx_sse import ServerSentEvent

from grimoire.errors import ProblemError, StreamEnded, Unauthorized, problem_error
from grimoire.models import JSON, Accepted, Bot, Game, HistoryEntry, LegalActions, Match

T = TypeVar("T")

#: transport errors raised before the request left this machine: any request may be sent again
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout)

#: answers that are tried again: 429 (rate limited, or too many streams: refused before anything was done)
#: and 503 (the store did not answer)
RETRIED_STATUS = frozenset({429, 503})

#: ``end`` reasons after which a stream is opened again where it stopped (docs/api.md, "A bot: the NDJSON stream")
RESUMABLE = frozenset({"shutdown", "store_unavailable", "slow_consumer"})


@dataclass(frozen=True)
class Call(Generic[T]):
    """One REST request (``token``: the seat's bearer token, if any) and ``read``, which types its answer."""

    method: str
    path: str
    read: Callable[[JSON], T]
    body: JSON | None = None
    params: dict[str, str | int] | None = None
    token: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def resendable(self) -> bool:
        """Whether it may be sent again after it may have reached the service: a read, or a keyed action
        (the service answers a repeated ``Idempotency-Key`` with the first outcome and applies nothing twice)."""
        return self.method == "GET" or "Idempotency-Key" in self.headers

    def request(self, http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        headers = dict(self.headers)
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        return http.build_request(self.method, self.path, json=self.body, params=self.params, headers=headers)

    def answer(self, response: httpx.Response) -> T:
        """The typed answer, or the typed refusal raised (grimoire.errors)."""
        if response.is_success:
            return self.read(response.json())
        raise refusal(response)


def refusal(response: httpx.Response) -> ProblemError:
    """The typed exception of a refused request (its body read)."""
    try:
        body = response.json()
    except ValueError:  # not JSON: a proxy's page
        body = None
    return problem_error(response.status_code, body, response.headers.get("retry-after"))


@dataclass(frozen=True)
class Joined:
    """A seat just taken: its number and the bearer token that acts for it (shown once by the service)."""

    seat: int
    token: str
    match: Match

    @classmethod
    def from_json(cls, data: JSON) -> Joined:
        return cls(seat=data["seat"], token=data["token"], match=Match.from_json(data["match"]))


def _match_of(data: JSON) -> Match:
    """The match inside an answer that carries one (adding a bot, leaving a seat)."""
    return Match.from_json(data["match"])


def list_games() -> Call[list[Game]]:
    return Call("GET", "/v1/games", lambda data: [Game.from_json(g) for g in data["games"]])


def create_match(game: str, *, variant: str | None, seats: int | None, seed: str | None, options: JSON | None,
                 bots: list[Bot] | None, turn_seconds: int | None) -> Call[Match]:
    body: JSON = {"game": game, "variant": variant, "seats": seats, "seed": seed, "options": options,
                  "turn_seconds": turn_seconds, "bots": [b.to_json() for b in bots] if bots else None}
    return Call("POST", "/v1/matches", Match.from_json, body={k: v for k, v in body.items() if v is not None})


def join(match_id: str, name: str, seat: int | None) -> Call[Joined]:
    body: JSON = {"name": name} if seat is None else {"name": name, "seat": seat}
    return Call("POST", f"/v1/matches/{match_id}/seats", Joined.from_json, body=body)


def get_match(match_id: str, token: str | None) -> Call[Match]:
    return Call("GET", f"/v1/matches/{match_id}", Match.from_json, token=token)


def legal_actions(match_id: str, token: str | None) -> Call[LegalActions]:
    return Call("GET", f"/v1/matches/{match_id}/legal-actions", LegalActions.from_json, token=token)


def submit(match_id: str, token: str | None, action: JSON, version: int, key: str | None) -> Call[Accepted]:
    """An action based on ``version``; ``key`` (made up when None) makes a repeat of it harmless."""
    headers = {"If-Match": f'"{version}"', "Idempotency-Key": key or f"grimoire-client-{uuid.uuid4()}"}
    return Call("POST", f"/v1/matches/{match_id}/actions", Accepted.from_json, body={"action": action},
                token=token, headers=headers)


def history(match_id: str, token: str | None, after: int, limit: int) -> Call[list[HistoryEntry]]:
    return Call("GET", f"/v1/matches/{match_id}/history",
                lambda data: [HistoryEntry.from_json(e) for e in data["entries"]],
                params={"after": after, "limit": limit}, token=token)


def add_bot(match_id: str, token: str | None, bot: Bot) -> Call[Match]:
    return Call("POST", f"/v1/matches/{match_id}/bots", _match_of, body=bot.to_json(), token=token)


def leave(match_id: str, token: str | None, seat: int) -> Call[Match]:
    return Call("DELETE", f"/v1/matches/{match_id}/seats/{seat}", _match_of, token=token)


@dataclass(frozen=True)
class Retry:
    """When to try again: the service unreachable, or answering 503, is retried for ``within`` seconds,
    waiting ``first`` seconds and twice as long each time after, up to ``longest``."""

    within: float = 60.0
    first: float = 0.2
    longest: float = 2.0

    def delays(self) -> Iterator[float]:
        """The waits of one outage; it stops once the next wait would end past ``within``."""
        deadline = time.monotonic() + self.within
        delay = self.first
        while time.monotonic() + delay <= deadline:
            yield delay
            delay = min(delay * 2, self.longest)


def wait_before_retry(resendable: bool, waits: Iterator[float], error: httpx.TransportError | None,
                      response: httpx.Response | None) -> float | None:
    """How long to wait before sending a request again after ``error`` or the RETRIED_STATUS ``response``, or
    None: give up (the outage has lasted past ``Retry.within``, or the request may not be sent again).

    A 429 refused the request before doing anything: any request is sent again, no sooner than its
    ``Retry-After``. After a 503 or a broken connection, only a ``resendable`` one (``Call.resendable``)
    or one that never left (NOT_SENT).
    """
    if response is not None and response.status_code == 429:
        wait = next(waits, None)
        try:
            advised = float(response.headers.get("retry-after", "0"))
        except ValueError:
            advised = 0.0
        return None if wait is None else max(wait, advised)
    if resendable or isinstance(error, NOT_SENT):
        return next(waits, None)
    return None


def stream_request(http: httpx.Client | httpx.AsyncClient, path: str, headers: dict[str, str],
                   params: dict[str, str | int] | None, last_event_id: str | None,
                   read_timeout: float) -> httpx.Request:
    """A request for an SSE stream, resuming after ``last_event_id`` (the stream's own ``id:``) when set.

    The read timeout bounds silence: the service sends a keep-alive every 15 s (``GRIMOIRE_STREAM_KEEPALIVE``),
    so a stream silent for longer than ``read_timeout`` is a dead connection and is opened again.
    """
    sent = {**headers, "Accept": "text/event-stream", "Cache-Control": "no-store"}
    if last_event_id is not None:
        sent["Last-Event-ID"] = last_event_id
    timeout = httpx.Timeout(http.timeout.connect, read=read_timeout, write=http.timeout.write,
                            pool=http.timeout.pool)
    return http.build_request("GET", path, headers=sent, params=params, timeout=timeout)


def end_reason(end: ServerSentEvent) -> str:
    """The reason of a stream's ``end`` message: ``finished`` (the match, or every followed match, is over:
    the stream is closed for good) or one of RESUMABLE (the server is stopping, the store did not answer,
    the client was too slow: open it again where it stopped).

    The seat's token revoked meanwhile raises :class:`Unauthorized`, as the service would answer when the
    stream is opened again; any other reason :class:`StreamEnded`.
    """
    reason = str(json.loads(end.data or "{}").get("reason"))
    if reason == "finished" or reason in RESUMABLE:
        return reason
    if reason == "invalid_token":
        raise Unauthorized("invalid_token", 401, "The seat was left or handed to a bot while the stream was open.")
    raise StreamEnded(reason)
