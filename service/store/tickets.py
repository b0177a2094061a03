"""Stream tickets: a browser's way to open its seat's live stream without its seat token in a URL.

A browser's ``EventSource`` cannot send an ``Authorization`` header. ``POST
/v1/matches/{id}/stream-tickets`` (the seat token in ``Authorization``) issues a ticket that
the stream URL takes instead (``/v1/matches/{id}/events?ticket=...``). A ticket is:

* short-lived: good for ``ttl`` seconds (``GRIMOIRE_STREAM_TICKET_TTL``, 30 by default);
* single-use: spent by its first presentation, whatever comes of it (``ticket.lua``, atomic);
* bound to one match and one seat: presented at another match it is refused; if the seat
  changed hands since it was issued (left, handed to a bot), it is refused. It is asked for with the
  seat token or with the credential of the player the seat is bound to (a player token, a JWT);
* stored only as a SHA-256 hash, like seat tokens, with the hash of the seat token it stands
  for (never the token itself), in the match's hash slot. Its stream counts against that seat
  token's stream limit. The record outlives the ticket by
  :data:`REMEMBERED` seconds, so that an expired or used ticket is refused as such rather
  than as unknown.

A ticket reads ``st.<match id>.<secret>`` (as tokens do: the match id routes it to its key,
only the 256-bit secret proves it). Tickets are not logged: the access log prints paths
without their query string (service/logs.py).
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from importlib import resources

from .errors import StoreError, TokenRequired
from .matches import Match, MatchStore
from .tokens import hash_token

#: Seconds a ticket's record is kept past its expiry, to tell "expired" and "used" from "unknown".
REMEMBERED = 600


class InvalidStreamTicket(StoreError):
    """No such ticket: never issued, malformed, or expired long enough ago to be forgotten."""

    code = "invalid_stream_ticket"


class StreamTicketExpired(StoreError):
    code = "stream_ticket_expired"


class StreamTicketUsed(StoreError):
    code = "stream_ticket_used"


class StreamTicketWrongMatch(StoreError):
    """The ticket was issued for another match (and is spent by this presentation)."""

    code = "stream_ticket_wrong_match"


@dataclass(frozen=True)
class StreamTicket:
    ticket: str
    match_id: str
    seat: int
    expires_in: int

    @property
    def events_url(self) -> str:
        return f"/v1/matches/{self.match_id}/events?ticket={self.ticket}"


@dataclass(frozen=True)
class TicketHolder:
    """Whom a spent ticket stands for: a seat, and the hash of the token that held it when issued."""

    match_id: str
    seat: int
    token_hash: str

    def still_holds(self, match: Match) -> bool:
        """Whether the seat is still the token's (not left, not handed to a bot since)."""
        return any(seat.index == self.seat and seat.token_hash == self.token_hash for seat in match.seats)


def ticket_match(ticket: str) -> str | None:
    """The match id a ticket claims to be for, or None if it is not shaped like one."""
    parts = ticket.split(".")
    return parts[1] if len(parts) == 3 and parts[0] == "st" and parts[1] else None


def _now_ms() -> int:
    return int(time.time() * 1000)


class StreamTickets:
    """Issue and spend stream tickets in the store's Redis."""

    def __init__(self, store: MatchStore, ttl: int = 30):
        self.store = store
        self.ttl = ttl
        self._spend = store.redis.register_script(resources.files(__package__).joinpath("ticket.lua").read_text())

    def key(self, match_id: str, ticket: str) -> str:
        return f"{self.store.key(match_id)}:ticket:{hash_token(ticket)}"

    async def issue(self, match_id: str, token: str | None) -> StreamTicket:
        """A ticket for the seat ``token`` holds; raises TokenRequired, InvalidToken or MatchNotFound."""
        if token is None:
            raise TokenRequired("A stream ticket is for a seat: send its token (Authorization: Bearer ...). "
                                "A spectator's stream needs no ticket.")
        match, seat = await self.store.read_as(match_id, token)
        ticket = f"st.{match_id}.{secrets.token_urlsafe(32)}"
        key = self.key(match_id, ticket)
        # the seat's own token hash, not the presenter's: a player's credential holds the seat through its
        # binding (service/store/players.py), and the stream stands for the seat either way
        seat_token_hash = next(s.token_hash for s in match.seats if s.index == seat)
        record = {"match": match_id, "seat": seat, "token": seat_token_hash,
                  "expires": _now_ms() + self.ttl * 1000}
        async with self.store.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping=record)
            pipe.expire(key, self.ttl + REMEMBERED)
            await pipe.execute()
        return StreamTicket(ticket=ticket, match_id=match.id, seat=seat, expires_in=self.ttl)

    async def spend(self, match_id: str, ticket: str) -> TicketHolder:
        """Spend ``ticket`` for a stream of ``match_id``; raises one of this module's errors if refused."""
        issued_for = ticket_match(ticket)
        if issued_for is None or len(ticket) > 200:
            raise InvalidStreamTicket("That is not a stream ticket.")
        reply = await self._spend(keys=[self.key(issued_for, ticket)], args=[_now_ms()])
        outcome = reply[0].decode() if isinstance(reply[0], bytes) else reply[0]
        if outcome == "unknown":
            raise InvalidStreamTicket("No such stream ticket (or it expired a while ago); ask for a new one.")
        if outcome == "used":
            raise StreamTicketUsed("This stream ticket was already used: a ticket opens one stream; ask for a "
                                   "new one.")
        if outcome == "expired":
            raise StreamTicketExpired(f"This stream ticket expired (tickets last {self.ttl} s); ask for a new one.")
        holder_match, seat, token_hash = (v.decode() if isinstance(v, bytes) else v for v in reply[1:])
        if holder_match != match_id:
            raise StreamTicketWrongMatch("This stream ticket is for another match.")
        return TicketHolder(match_id=holder_match, seat=int(seat), token_hash=token_hash)
