"""The service's answers as typed values, read from the REST API's JSON (openapi/openapi.yaml).

A game's own data (a view, an action, an event, a result) stays JSON (``dict``): its shape is the
game's (``schema.json``, served in ``GET /v1/games``), and an action goes back to the service exactly
as ``legal_actions`` gave it. Field names are the JSON's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]


@dataclass(frozen=True)
class Variant:
    id: str
    title: str
    description: str


@dataclass(frozen=True)
class Game:
    """A hosted game: seats, variants, and the JSON Schemas of its options, actions and view."""

    id: str
    title: str
    min_seats: int
    max_seats: int
    variants: list[Variant]
    summary: str
    options_schema: JSON
    action_schemas: JSON
    view_schema: JSON

    @classmethod
    def from_json(cls, data: JSON) -> Game:
        return cls(id=data["id"], title=data["title"], min_seats=data["min_seats"], max_seats=data["max_seats"],
                   variants=[Variant(v["id"], v["title"], v["description"]) for v in data["variants"]],
                   summary=data["summary"], options_schema=data["options_schema"],
                   action_schemas=data["action_schemas"], view_schema=data["view_schema"])


@dataclass(frozen=True)
class SeatInfo:
    """A place at the table: who sits there (``bot``: the level of a server bot, else None)."""

    seat: int
    name: str | None
    joined: bool
    bot: str | None


@dataclass(frozen=True)
class Bot:
    """A server bot for a seat (``seat`` None: the lowest free one); levels: docs/bots.md."""

    level: str
    seat: int | None = None

    def to_json(self) -> JSON:
        return {"level": self.level} if self.seat is None else {"level": self.level, "seat": self.seat}


@dataclass(frozen=True)
class Match:
    """A match as one seat (``my_seat``; None: a spectator) may see it, at ``version``.

    ``status`` is ``waiting``, ``active`` or ``finished``; ``to_act`` the seats the match waits on (``-1``:
    the board, played by the service's workers); ``result`` is set once it is finished, as is ``seed``.
    """

    id: str
    game: str
    variant: str
    version: int
    status: str
    options: JSON
    seed: str | None
    seats: list[SeatInfo]
    to_act: list[int]
    my_seat: int | None
    result: JSON | None
    view: JSON

    @classmethod
    def from_json(cls, data: JSON) -> Match:
        return cls(id=data["id"], game=data["game"], variant=data["variant"], version=data["version"],
                   status=data["status"], options=data["options"], seed=data["seed"],
                   seats=[SeatInfo(s["seat"], s["name"], s["joined"], s["bot"]) for s in data["seats"]],
                   to_act=data["to_act"], my_seat=data["my_seat"], result=data["result"], view=data["view"])


@dataclass(frozen=True)
class LegalActions:
    """Every action ``seat`` may take at ``version``: send one back as it is."""

    game: str
    version: int
    seat: int | None
    actions: list[JSON]

    @classmethod
    def from_json(cls, data: JSON) -> LegalActions:
        return cls(game=data["game"], version=data["version"], seat=data["seat"], actions=data["actions"])


@dataclass(frozen=True)
class Accepted:
    """An accepted action: the ``version`` it made, its ``events`` as the seat sees them, and the match after.

    ``duplicate``: a retry with the same idempotency key; this is the first outcome, nothing was applied again.
    """

    game: str
    version: int
    events: list[JSON]
    duplicate: bool
    match: Match

    @classmethod
    def from_json(cls, data: JSON) -> Accepted:
        return cls(game=data["game"], version=data["version"], events=data["events"],
                   duplicate=data["duplicate"], match=Match.from_json(data["match"]))


@dataclass(frozen=True)
class HistoryEntry:
    """One accepted action of the history (``action`` only for the seat that acted; ``seat`` -1: the board)."""

    version: int
    seat: int
    action: JSON | None
    events: list[JSON]
    at: int
    auto: JSON | None

    @classmethod
    def from_json(cls, data: JSON) -> HistoryEntry:
        return cls(version=data["version"], seat=data["seat"], action=data["action"], events=data["events"],
                   at=data["at"], auto=data.get("auto"))


@dataclass(frozen=True)
class Update:
    """One accepted action pushed by the match stream, as the follower's seat may see it.

    ``to_act`` and ``status`` are the match's after it; ``at`` is the acceptance time in milliseconds;
    ``auto`` tells a turn timer's default move (docs/bots.md, "Turn timers").
    """

    match_id: str
    version: int
    seat: int
    action: JSON | None
    events: list[JSON]
    status: str
    to_act: list[int]
    at: int
    auto: JSON | None

    @classmethod
    def from_json(cls, data: JSON) -> Update:
        return cls(match_id=data["match_id"], version=data["version"], seat=data["seat"], action=data["action"],
                   events=data["events"], status=data["status"], to_act=data["to_act"], at=data["at"],
                   auto=data.get("auto"))


@dataclass(frozen=True)
class TurnNotice:
    """The turn stream's message: the match waits on ``seat`` (``your_turn``) or has ended."""

    match_id: str
    seat: int
    version: int
    status: str
    to_act: list[int]
    your_turn: bool

    @classmethod
    def from_json(cls, data: JSON) -> TurnNotice:
        return cls(match_id=data["match_id"], seat=data["seat"], version=data["version"], status=data["status"],
                   to_act=data["to_act"], your_turn=data["your_turn"])
