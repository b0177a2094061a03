"""The GraphQL schema: games, matches, seats and actions.

:func:`build_schema` assembles it for a set of games, because the view and
action types are generated per game (:mod:`schema.game_types`). Resolvers are
thin: they call :class:`service.store.MatchStore` and turn its results and
errors into GraphQL data. No game rules live here.

The caller's seat comes from the bearer token in the ``Authorization`` header
(``context["token"]``); without one, a caller is a spectator.
"""

import asyncio
import contextlib
import inspect
from typing import Annotated, Any, AsyncGenerator, Optional, Union

import strawberry
from strawberry.extensions import (
    AddValidationRules, MaxAliasesLimiter, MaxTokensLimiter, ParserCache, QueryDepthLimiter,
)
from strawberry.scalars import JSON
from strawberry.types import Info

from service.engine import BOARD_SEAT_NOTE as BOARD_NOTE, RESULT_CAUSE, Game, InvalidOptions, RuleError, seeds
from service.settings import Settings
from service.store import Match, MatchStore, StoreError
from service.store.bots import add_bot as store_add_bot, create_match as store_create_match
from service.store.records import match_record as store_match_record
from service.store.tickets import StreamTickets

from . import live, problems
from . import players as player_fields
from . import collections as collection_fields
from .errors import MaskUnexpectedErrors, OperationNameRequired, log_errors
from .cost import limit_argument, max_cost_rule
from .execution import PlainDataExecutor
from .runner import ExtensionsRunner
from .validation import DocumentValidationCache
from .game_types import GameTypes, action_type_enum, graphql_enum, pascal, screaming

#: The largest pages of `history` and `lobby`: a larger ``limit`` gets this many (and the cost rule counts this many)
HISTORY_PAGE, LOBBY_PAGE = 1000, 200

#: How an acting ``seat`` field documents the board itself (service.engine.BOARD_SEAT).
ACTED = f"The seat that acted; {BOARD_NOTE}"


class Schema(strawberry.Schema):
    """strawberry's schema, logging each error by whose it is (schema/errors.py) instead of all at ERROR, its
    extensions run by :class:`~schema.runner.ExtensionsRunner`."""

    def process_errors(self, errors, execution_context=None) -> None:
        log_errors(errors)

    def create_extensions_runner(self, execution_context, extensions) -> ExtensionsRunner:
        return ExtensionsRunner(execution_context=execution_context, extensions=extensions)


def build_schema(games: dict[str, Game], *, max_depth: int = Settings.graphql_max_depth,
                 max_tokens: int = Settings.graphql_max_tokens, max_aliases: int = Settings.graphql_max_aliases,
                 max_cost: int = Settings.graphql_max_cost) -> strawberry.Schema:
    """The schema of ``games``, with the GraphQL limits the settings name (their defaults unless given)."""
    action_type = action_type_enum(games.values())
    types = {game_id: GameTypes(game, action_type) for game_id, game in games.items()}

    GameView = Annotated[
        Union[tuple(t.view_type for t in types.values())],
        strawberry.union("GameView", description="The view of a match, typed by game."),
    ]
    GameAction = Annotated[
        Union[tuple(cls for t in types.values() for cls in t.action_types.values())],
        strawberry.union("GameAction", description="An action, typed by game; send it back verbatim."),
    ]
    action_input_fields = {}
    for game_id, t in types.items():
        field = pascal(game_id)
        field = field[0].lower() + field[1:]
        action_input_fields[field] = (game_id, t)
    ActionInput = strawberry.input(
        type("ActionInput", (), {
            "__annotations__": {name: Optional[t.action_input] for name, (_, t) in action_input_fields.items()},
            **{name: strawberry.field(default=strawberry.UNSET, description=f"An action of {t.game.title}.")
               for name, (_, t) in action_input_fields.items()},
        }),
        name="ActionInput", one_of=True,
        description="An action: exactly one field, named after the match's game.",
    )

    def action_from_input(value: Any) -> tuple[str, dict]:
        """The game id and the plain JSON action of an ``ActionInput``: its one field (``@oneOf``: GraphQL
        refuses one with none or more before any resolver runs)."""
        [(game_id, action)] = [(game_id, t.from_input(given)) for name, (game_id, t) in action_input_fields.items()
                               if (given := getattr(value, name)) is not strawberry.UNSET and given is not None]
        return game_id, action

    @strawberry.type(description="A way to play a game.")
    class Variant:
        id: str
        title: str
        description: str

    @strawberry.type(name="Game", description="A game Grimoire hosts.")
    class GameInfo:
        id: strawberry.ID
        title: str
        min_seats: int
        max_seats: int
        variants: list[Variant]
        summary: str
        options_schema: JSON = strawberry.field(description="JSON Schema of the match options.")
        action_schemas: JSON = strawberry.field(description="JSON Schema of each action type.")
        view_schema: JSON = strawberry.field(description="JSON Schema of a seat's view.")
        rules_version: str = strawberry.field(description="The version of the game's rules new matches get; "
                                                          "a match keeps the one it was created with.")

    def game_info(game: Game) -> GameInfo:
        return GameInfo(
            id=game.id, title=game.title, min_seats=game.min_seats, max_seats=game.max_seats,
            variants=[Variant(id=v.id, title=v.title, description=v.description) for v in game.variants],
            summary=game.summary, options_schema=game.options_schema, action_schemas=game.action_schemas,
            view_schema=game.view_schema, rules_version=game.rules_version,
        )

    @strawberry.type(description="A seat at the table.")
    class Seat:
        seat: int
        name: Optional[str]
        joined: bool
        bot: Optional[str] = strawberry.field(default=None, description="The bot level playing this seat, if a bot.")

    @strawberry.type(description="An open match in the lobby: waiting for players, with a free seat.")
    class LobbyEntry:
        id: strawberry.ID
        game: strawberry.ID
        variant: str
        seats: list[Seat]
        open_seats: int
        created: float = strawberry.field(description="Milliseconds since the epoch.")
        updated: float = strawberry.field(description="When a seat was last taken (ms since the epoch).")

    @strawberry.type(description="How a finished match ended.")
    class Result:
        winners: list[int]
        scores: Optional[list[float]]
        reason: str = strawberry.field(description="A sentence for people.")
        cause: Optional[str] = strawberry.field(default=None, description=RESULT_CAUSE)

    @strawberry.type(description="A default action the service played for a late seat (turn timer).")
    class AutoAction:
        seat: int
        reason: str = strawberry.field(description="turn_timeout")
        default: str = strawberry.field(description="pass, or random: the random bot's choice")
        turn_seconds: Optional[int]

    def auto_action(record: dict | None) -> Optional[AutoAction]:
        return None if not record else AutoAction(seat=record["seat"], reason=record["reason"],
                                                  default=record["default"], turn_seconds=record.get("turn_seconds"))

    AUTO = "Set when the service played this action for a late seat (turn timer); else null."

    @strawberry.type(description="An accepted action, as the reader's seat may see it.")
    class HistoryEntry:
        version: int
        seat: int = strawberry.field(description=ACTED)
        action: Optional[GameAction] = strawberry.field(description="Shown only to the seat that acted.")
        events: list[JSON]
        auto: Optional[AutoAction] = strawberry.field(description=AUTO)

    MatchStatusEnum = graphql_enum("MatchStatus", ["waiting", "active", "finished"],
                                   "WAITING: seats still open; ACTIVE: being played; FINISHED: over.")
    SeedSourceEnum = graphql_enum(
        "SeedSource", list(seeds.SEED_SOURCES),
        "COMMITMENT: the server seed was committed at creation and mixed with the seats' entropies "
        "(provable: docs/fairness.md); CREATOR: the creator fixed the seed (never rated); SERVER: drawn by "
        "the service before commitments existed (not provable).")

    @strawberry.type(description="The entropy a seat brought to the match's RNG seed (docs/fairness.md).")
    class SeatEntropy:
        seat: int
        entropy: str
        generated: bool = strawberry.field(description="True when the service generated it for the seat.")

    @strawberry.type(description="One accepted action in a match record.")
    class RecordedAction:
        version: int
        seat: int = strawberry.field(description=ACTED)
        action: Optional[GameAction] = strawberry.field(
            description="Shown to the seat that acted, and to everyone once the match is over.")
        state_hash: Optional[str] = strawberry.field(
            description="The chained hash of the state after this action (docs/fairness.md); null where withheld.")

    @strawberry.type(description="A match's record (docs/fairness.md): after the end, everything needed to check it "
                                 "offline with `grimoire verify`; before, the match so far with hidden parts withheld.")
    class MatchRecord:
        document: JSON = strawberry.field(description="The record as one JSON document, exactly as REST's "
                                                      "GET /v1/matches/{id}/record: save it for `grimoire verify`.")
        format: str
        match_id: strawberry.ID
        game: strawberry.ID
        variant: str
        rules_version: str
        seed_source: SeedSourceEnum
        seed_commitment: Optional[str] = strawberry.field(description="SHA-256 of the seed; null for SERVER.")
        revealed_seed: Optional[str] = strawberry.field(description="The committed seed, once the match is over.")
        rng_seed: Optional[str] = strawberry.field(description="The RNG seed derived from it, once the match is over.")
        entropies: Optional[list[SeatEntropy]] = strawberry.field(
            description="What each seat brought, once every seat has joined; null for CREATOR and SERVER.")
        initial_state_hash: Optional[str] = strawberry.field(description="The set-up's hash, the chain's start.")
        actions: list[RecordedAction]
        status: MatchStatusEnum
        version: int
        result: Optional[Result]
        disclosure: str = strawberry.field(description="everything (the match is over), seat (what the caller's "
                                                       "seat may see) or public (a spectator's)")
        seat: Optional[int] = strawberry.field(description="The caller's seat; null for a spectator.")

    def match_record(document: dict) -> MatchRecord:
        t = types[document["game"]]
        r = document["result"]
        return MatchRecord(
            document=document, format=document["format"], match_id=document["match_id"], game=document["game"],
            variant=document["variant"], rules_version=document["rules_version"],
            seed_source=SeedSourceEnum(document["seed_source"]), seed_commitment=document["seed_commitment"],
            revealed_seed=document["revealed_seed"], rng_seed=document["rng_seed"],
            entropies=None if document["entropies"] is None else [SeatEntropy(**e) for e in document["entropies"]],
            initial_state_hash=document["initial_state_hash"],
            actions=[RecordedAction(version=a["version"], seat=a["seat"], state_hash=a["state_hash"],
                                    action=t.to_action(a["action"]) if a["action"] is not None else None)
                     for a in document["actions"]],
            status=MatchStatusEnum(document["status"]), version=document["version"],
            result=None if r is None else Result(winners=r["winners"], scores=r.get("scores"), reason=r["reason"],
                                                 cause=r.get("cause")),
            disclosure=document["disclosure"], seat=document["seat"])

    def view_of(record: Match, seat: Optional[int]) -> Any:
        return types[record.game.id].to_view(record.view(seat))

    def legal_actions_of(record: Match, seat: Optional[int]) -> list:
        t = types[record.game.id]
        return [t.to_action(a) for a in record.legal_actions(seat)]

    def typed_match(t: GameTypes) -> type:
        """``<Game>Match``: the view and legal actions typed by one game, for a client that plays only it."""

        @strawberry.type(name=f"{t.prefix}Match",
                         description=f"A match of {t.game.title}: its view and legal actions, typed by the game.")
        class GameMatch:
            record: strawberry.Private[Match]
            my_seat: strawberry.Private[Optional[int]]

            @strawberry.field
            def view(self) -> t.view_type:
                return view_of(self.record, self.my_seat)

            @strawberry.field(description="Every action the caller's seat may take now.")
            def legal_actions(self) -> list[t.action_union]:
                return legal_actions_of(self.record, self.my_seat)

        return GameMatch

    def typed_match_field(game_id: str, cls: type) -> Any:
        def resolve(self) -> Optional[cls]:
            return cls(record=self.record, my_seat=self.my_seat) if self.record.game.id == game_id else None

        return strawberry.field(resolver=resolve, description=f"The match as a {games[game_id].title} match "
                                                              "(typed view and legal actions); null for another game.")

    class MatchType:
        record: strawberry.Private[Match]
        my_seat: Optional[int] = strawberry.field(description="The caller's seat; null for a spectator.")

        @strawberry.field
        def id(self) -> strawberry.ID:
            return strawberry.ID(self.record.id)

        @strawberry.field
        def game(self) -> GameInfo:
            return game_info(self.record.game)

        @strawberry.field
        def variant(self) -> str:
            return self.record.variant

        @strawberry.field(description="Starts at 0 and grows by one per accepted action.")
        def version(self) -> int:
            return self.record.version

        @strawberry.field
        def status(self) -> MatchStatusEnum:
            return MatchStatusEnum(self.record.status)

        @strawberry.field
        def options(self) -> JSON:
            return self.record.options

        @strawberry.field(description="The seed, revealed once the match is finished (it would reveal hidden cards).")
        def seed(self) -> Optional[str]:
            return str(self.record.seed) if self.record.status == "finished" else None

        @strawberry.field(description="Where the seed came from (docs/fairness.md); a CREATOR seed is never rated.")
        def seed_source(self) -> SeedSourceEnum:
            return SeedSourceEnum(self.record.seed_source)

        @strawberry.field(description="SHA-256 (hex) of the seed, published at creation; null for SERVER.")
        def seed_commitment(self) -> Optional[str]:
            return self.record.seed_commitment

        @strawberry.field(description="The committed seed, revealed once the match is finished.")
        def revealed_seed(self) -> Optional[str]:
            return self.record.revealed_seed

        @strawberry.field(description="The version of the game's rules the match is played with, fixed at creation.")
        def rules_version(self) -> str:
            return self.record.rules_version

        @strawberry.field
        def seats(self) -> list[Seat]:
            return [Seat(seat=s.index, name=s.name, joined=s.joined, bot=s.bot) for s in self.record.seats]

        @strawberry.field(description=f"The seats the game waits on; {BOARD_NOTE}")
        def to_act(self) -> list[int]:
            return self.record.acting

        @strawberry.field
        def result(self) -> Optional[Result]:
            r = self.record.result
            return None if r is None else Result(winners=r["winners"], scores=r.get("scores"), reason=r["reason"],
                                                cause=r.get("cause"))

        @strawberry.field
        def view(self) -> GameView:
            return view_of(self.record, self.my_seat)

        @strawberry.field(description="Every action the caller's seat may take now.")
        def legal_actions(self) -> list[GameAction]:
            return legal_actions_of(self.record, self.my_seat)

        @strawberry.field(description="Accepted actions after version `after`, as the caller may see them.")
        async def history(self, info: Info, after: int = 0,
                          limit: Annotated[int, limit_argument(HISTORY_PAGE)] = 100) -> list[HistoryEntry]:
            store: MatchStore = info.context["store"]
            t = types[self.record.game.id]
            entries = await store.history(self.record.id, self.my_seat, after=max(after, 0),
                                          limit=min(max(limit, 1), HISTORY_PAGE))
            return [HistoryEntry(version=e.version, seat=e.seat,
                                 action=t.to_action(e.action) if e.action is not None else None, events=e.events,
                                 auto=auto_action(e.auto))
                    for e in entries]

        @strawberry.field(name="record",  # `record` is the Match this type wraps
                          description="The match's record (docs/fairness.md): everything once it is over, for "
                                      "`grimoire verify`; before, the match so far as the caller may see it.")
        async def match_record(self, info: Info) -> MatchRecord:
            store: MatchStore = info.context["store"]
            return match_record(await store_match_record(store, self.record.id, info.context["token"]))

    for game_field, (game_id, t) in action_input_fields.items():
        setattr(MatchType, game_field, typed_match_field(game_id, typed_match(t)))
    MatchType = strawberry.type(MatchType, name="Match",
                                description="A match, as the caller's seat (or a spectator) may see it.")

    @strawberry.type(description="An accepted action, as the subscriber's seat may see it.")
    class MatchEvent:
        match_id: strawberry.ID
        game: strawberry.ID = strawberry.field(description="The match's game: which `<Game>Action` `action` is.")
        version: int
        seat: int = strawberry.field(description=ACTED)
        action: Optional[GameAction] = strawberry.field(description="Shown only to the seat that acted.")
        events: list[JSON]
        status: MatchStatusEnum
        to_act: list[int] = strawberry.field(description=f"The seats the game now waits on; {BOARD_NOTE}")
        at: float = strawberry.field(description="When the action was accepted, in milliseconds since the epoch.")
        auto: Optional[AutoAction] = strawberry.field(description=AUTO)

    @strawberry.type(description="One of your matches now waits on your seat, or has ended.")
    class TurnNotice:
        match_id: strawberry.ID
        seat: int
        version: int
        status: MatchStatusEnum
        to_act: list[int] = strawberry.field(description=f"The seats the game now waits on; {BOARD_NOTE}")
        your_turn: bool

        @classmethod
        def of(cls, notice: dict) -> "TurnNotice":
            """A notice of the live layer's turn streams (service/store/live.py) as its GraphQL type."""
            return cls(match_id=notice["match_id"], seat=notice["seat"], version=notice["version"],
                       status=MatchStatusEnum(notice["status"]), to_act=notice["to_act"],
                       your_turn=notice["your_turn"])

    def match_event(update: dict, game_id: str) -> MatchEvent:
        action = update["action"]
        return MatchEvent(match_id=update["match_id"], game=game_id, version=update["version"], seat=update["seat"],
                          action=types[game_id].to_action(action) if action is not None else None,
                          events=update["events"], status=MatchStatusEnum(update["status"]),
                          to_act=update["to_act"], at=update["at"], auto=auto_action(update["auto"]))

    @strawberry.type(description="The match was created.")
    class MatchCreated:
        match: MatchType

    @strawberry.type(description="You hold the seat. Keep the token: it is shown once and acts for this seat.")
    class SeatJoined:
        seat: int
        token: str
        match: MatchType

    @strawberry.type(description="The action was accepted.")
    class ActionAccepted:
        version: int
        events: list[JSON]
        match: MatchType
        duplicate: bool = strawberry.field(description="True when this repeats an earlier idempotent request.")

    @strawberry.type(description="The seat is now played by a bot.")
    class BotAdded:
        seat: int
        match: MatchType

    @strawberry.type(description="You gave up the seat: its token no longer works, and the seat is free to join.")
    class SeatLeft:
        seat: int
        match: MatchType

    @strawberry.type(description="A ticket for your seat's live stream in a browser, whose EventSource cannot send "
                                 "a token: open `eventsUrl` (REST Server-Sent Events) once, within `expiresIn` "
                                 "seconds. Never put the seat token itself in a URL.")
    class StreamTicket:
        ticket: str
        match_id: strawberry.ID
        seat: int
        expires_in: int = strawberry.field(description="Seconds the ticket is good for.")
        events_url: str = strawberry.field(description="The stream's path, the ticket in its query string.")

    @strawberry.type(description="One step of a replay: the state after an accepted action, as the replay's "
                                 "reader may see it (version 0: the set-up).")
    class ReplayFrame:
        version: int
        seat: Optional[int] = strawberry.field(description=f"The seat that acted; null for the set-up; {BOARD_NOTE}")
        action: Optional[GameAction] = strawberry.field(
            description="The action: shown to the seat that acted, and in the spectator replay.")
        events: list[JSON]
        view: GameView
        views: Optional[list[GameView]] = strawberry.field(
            description="Spectator replay only: every seat's view.")
        to_act: list[int] = strawberry.field(description=f"The seats the game waits on; {BOARD_NOTE}")
        auto: Optional[AutoAction] = strawberry.field(description=AUTO)

    @strawberry.type(description="A re-computed difference between what was stored and the replayed match.")
    class ReplayMismatch:
        version: int
        what: str = strawberry.field(description="log, action, events, to_act, status or state")
        detail: str

    @strawberry.type(description="A finished match re-played from its seed and action log, checked on the way.")
    class Replay:
        match_id: strawberry.ID
        game: str
        seat: Optional[int]
        disclosure: str = strawberry.field(
            description="seat: only what that seat could see; everything: the spectator replay of a finished match.")
        note: str
        seed: Optional[str]
        verified: bool = strawberry.field(description="True when every stored state matched the re-computed one.")
        mismatches: list[ReplayMismatch]
        frames: list[ReplayFrame]

    @strawberry.type(description="A replay job: poll it until its status is finished (or failed).")
    class ReplayJob:
        id: strawberry.ID
        status: str = strawberry.field(description="queued, started, finished or failed")
        match_id: strawberry.ID
        seat: Optional[int]
        replay: Optional[Replay]

    def replay_job(job: dict, game_id: str | None) -> ReplayJob:
        r = job["replay"]
        replay = None
        if r is not None:
            t = types[r["game"]]
            frames = [ReplayFrame(
                version=f["version"], seat=f["seat"],
                action=t.to_action(f["action"]) if f["action"] is not None else None, events=f["events"],
                view=t.to_view(f["view"]),
                views=[t.to_view(v) for v in f["views"]] if f.get("views") is not None else None,
                to_act=f["to_act"],
                auto=auto_action(f["auto"]),
            ) for f in r["frames"]]
            replay = Replay(match_id=r["match_id"], game=r["game"], seat=r["seat"], disclosure=r["disclosure"],
                            note=r["note"], seed=None if r["seed"] is None else str(r["seed"]),
                            verified=r["verified"], mismatches=[ReplayMismatch(**m) for m in r["mismatches"]],
                            frames=frames)
        return ReplayJob(id=job["id"], status=job["status"], match_id=job["match_id"], seat=job["seat"],
                         replay=replay)

    def union(name: str, *members: type) -> Any:
        return Annotated[Union[members], strawberry.union(name)]

    P = problems
    MatchLookup = union("MatchLookup", MatchType, P.MatchNotFound, P.InvalidToken)
    CreateMatchResult = union("CreateMatchResult", MatchCreated, P.UnknownGame, P.InvalidOptions, P.UnknownBotLevel,
                              P.NoSuchSeat, P.SeatTaken, P.CollectionRequired)
    AddBotResult = union("AddBotResult", BotAdded, P.UnknownBotLevel, P.MatchNotFound, P.SeatTaken, P.MatchFull,
                         P.NoSuchSeat, P.InvalidToken, P.NotYourSeat, P.CollectionRequired)
    LeaveSeatResult = union("LeaveSeatResult", SeatLeft, P.MatchNotFound, P.TokenRequired, P.InvalidToken,
                            P.NotYourSeat)
    CreateStreamTicketResult = union("CreateStreamTicketResult", StreamTicket, P.MatchNotFound,
                                     P.TokenRequired, P.InvalidToken)
    StartReplayResult = union("StartReplayResult", ReplayJob, P.MatchNotFound, P.MatchNotFinished, P.NoSuchSeat)
    ReplayLookup = union("ReplayLookup", ReplayJob, P.ReplayNotFound)
    JoinMatchResult = union("JoinMatchResult", SeatJoined, P.MatchNotFound, P.SeatTaken, P.MatchFull, P.NoSuchSeat,
                            P.AlreadySeated, P.InvalidToken, P.PlayerRequired,
                            P.InvalidEntropy, P.PlayerRequired)
    SubmitActionResult = union(
        "SubmitActionResult", ActionAccepted, P.VersionConflict, P.NotYourTurn, P.IllegalAction,
        P.MalformedAction, P.MatchFinished, P.MatchNotStarted, P.MatchNotFound, P.TokenRequired, P.InvalidToken,
        P.IdempotencyKeyReused, P.NotInCollection, P.CollectionRequired)

    @strawberry.input(description="A seat given to a bot.")
    class BotSeatInput:
        seat: Optional[int] = strawberry.field(default=None, description="A seat number; the lowest free one if absent.")
        level: str = strawberry.field(description="The bot level: random, greedy or strong (see docs/bots.md).")

    @strawberry.input(description="A bot for a free seat; or, sent with a seat token (Authorization), for the "
                                  "token's own seat, handed over at any point of the match (the token is revoked).")
    class AddBotInput:
        match_id: strawberry.ID
        level: str = strawberry.field(description="The bot level: random, greedy or strong (see docs/bots.md).")
        seat: Optional[int] = strawberry.field(default=None, description="A seat number; the lowest free one if absent.")

    @strawberry.input
    class LeaveSeatInput:
        match_id: strawberry.ID
        seat: Optional[int] = strawberry.field(default=None, description="The seat you hold (checked against the "
                                                                         "token); absent: the token's seat.")

    @strawberry.input
    class CreateStreamTicketInput:
        match_id: strawberry.ID

    @strawberry.input
    class StartReplayInput:
        match_id: strawberry.ID
        seat: Optional[int] = strawberry.field(
            default=None, description="Whose replay: a seat (what it could see), or null for the spectator's "
                                      "(everything, the match being over).")

    @strawberry.input
    class CreateMatchInput:
        game: strawberry.ID
        variant: Optional[str] = None
        seats: Optional[int] = strawberry.field(default=None, description="Number of seats; the game's minimum if absent.")
        seed: Optional[str] = strawberry.field(default=None, description="A decimal seed for reproducible matches.")
        options: Optional[JSON] = strawberry.field(default=None, description="Match options, per the game's optionsSchema.")
        turn_seconds: Optional[int] = strawberry.field(
            default=None, description="A turn timer: a late seat's default move is played after this many seconds.")
        bots: Optional[list[BotSeatInput]] = strawberry.field(default=None, description="Seats given to bots at once.")
        hot_seat: bool = strawberry.field(default=False, description="One player may hold several seats; else a "
                                                                      "player gets one seat of the match.")

    @strawberry.input
    class JoinMatchInput:
        match_id: strawberry.ID
        name: Optional[str] = strawberry.field(default=None, description="Required, unless you join with a player "
                                                                         "token: then the seat is bound to your "
                                                                         "player and named after it.")
        seat: Optional[int] = strawberry.field(default=None, description="A seat number; the lowest free one if absent.")
        entropy: Optional[str] = strawberry.field(
            default=None, description="Your contribution to the match's RNG seed: 1 to 128 characters of your "
                                      "choosing; one is generated if absent (docs/fairness.md).")

    @strawberry.input
    class SubmitActionInput:
        match_id: strawberry.ID
        expected_version: int = strawberry.field(description="The version you read; a stale one is a VersionConflict.")
        action: ActionInput
        idempotency_key: Optional[str] = strawberry.field(
            default=None, description="Repeat a request with the same key to get its first outcome again.")

    def catalogue_field(game: Game, catalogue) -> Any:
        item_type, converter = types[game.id].catalogue_type(catalogue)

        def resolve(**arguments) -> list[item_type]:
            params = {k: arguments[k] for k in catalogue.params}
            for name, schema in catalogue.params.items():
                params[name] = min(max(params[name], schema["minimum"]), schema["maximum"])
            wanted = {k: arguments[k] for k in catalogue.filters if arguments[k] is not None}
            return [converter.out(item) for item in catalogue.items(**params)
                    if all(v in (str(item.get(k)), screaming(str(item.get(k)))) for k, v in wanted.items())]

        resolve.__signature__ = inspect.Signature([
            *(inspect.Parameter(f, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Optional[str])
              for f in catalogue.filters),
            *(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=schema["default"], annotation=int)
              for name, schema in catalogue.params.items())])
        resolve.__annotations__ = {**{f: Optional[str] for f in catalogue.filters},
                                   **{name: int for name in catalogue.params}, "return": list[item_type]}
        description = (f"{game.title}: the {catalogue.name}, filtered by exact match (an enum value as it is "
                       "output, or as in JSON).")
        return list[item_type], strawberry.field(resolver=resolve, description=description)

    catalogue_fields = {}
    for game in games.values():
        for catalogue in game.catalogues:
            name = pascal(game.id)[0].lower() + pascal(game.id)[1:] + pascal(catalogue.name)
            catalogue_fields[name] = catalogue_field(game, catalogue)

    @strawberry.type
    class Query:
        @strawberry.field(description="Every game Grimoire hosts.")
        def games(self) -> list[GameInfo]:
            return [game_info(g) for g in games.values()]

        @strawberry.field
        def game(self, id: strawberry.ID) -> Optional[GameInfo]:
            return game_info(games[id]) if id in games else None

        @strawberry.field(description="A replay job (from startReplay): its status, and the replay once finished.")
        async def replay(self, info: Info, id: strawberry.ID) -> ReplayLookup:
            try:
                job = await asyncio.to_thread(info.context["request"].app.state.jobs.replay, id)
            except StoreError as error:
                return problems.problem_for(error)
            game_id = (job["replay"] or {}).get("game")
            return replay_job(job, game_id)

        @strawberry.field(description="Open matches (waiting, with a free seat), longest waiting first; "
                                      "`game` narrows to one game (an unknown game has none).")
        async def lobby(self, info: Info, game: Optional[strawberry.ID] = None,
                        limit: Annotated[int, limit_argument(LOBBY_PAGE)] = 50) -> list[LobbyEntry]:
            store: MatchStore = info.context["store"]
            if game is not None and game not in store.games:
                return []
            entries = await store.lobby(game, limit=min(max(limit, 1), LOBBY_PAGE))
            return [LobbyEntry(id=e["id"], game=e["game"], variant=e["variant"], open_seats=e["open_seats"],
                               created=e["created"], updated=e["updated"],
                               seats=[Seat(seat=s["seat"], name=s["name"], joined=s["joined"], bot=s.get("bot"))
                                      for s in e["seats"]])
                    for e in entries]

        @strawberry.field(description="A match, viewed by the seat of the bearer token (none: a spectator).")
        async def match(self, info: Info, id: strawberry.ID) -> MatchLookup:
            store: MatchStore = info.context["store"]
            try:
                record, seat = await store.read_as(id, info.context["token"])
            except StoreError as error:
                return problems.problem_for(error)
            return MatchType(record=record, my_seat=seat)

    @strawberry.type
    class Mutation:
        @strawberry.mutation(description="Create a match; then join its seats.")
        async def create_match(self, info: Info, input: CreateMatchInput) -> CreateMatchResult:
            store: MatchStore = info.context["store"]
            seed = None
            if input.seed is not None:
                if not input.seed.isdigit() or len(input.seed) > 19:
                    return problems.problem_for(InvalidOptions("seed must be a decimal integer below 2**63."))
                seed = int(input.seed) & ((1 << 63) - 1)
            options = input.options
            if options is not None and not isinstance(options, dict):
                return problems.problem_for(InvalidOptions("options must be a JSON object."))
            if input.turn_seconds is not None and not 1 <= input.turn_seconds <= 86400:
                return problems.problem_for(InvalidOptions("turnSeconds must be 1 to 86400."))
            bots = [{"seat": b.seat, "level": b.level} for b in input.bots or []]
            try:
                record = await store_create_match(store, input.game, variant=input.variant, options=options,
                                                  seats=input.seats, seed=seed, turn_seconds=input.turn_seconds,
                                                  bots=bots, hot_seat=input.hot_seat)
            except (RuleError, StoreError) as error:
                return problems.problem_for(error)
            return MatchCreated(match=MatchType(record=record, my_seat=None))

        @strawberry.mutation(description="Take a seat; returns its bearer token, shown once.")
        async def join_match(self, info: Info, input: JoinMatchInput) -> JoinMatchResult:
            store: MatchStore = info.context["store"]
            token = info.context["token"]
            if token and store.players is not None and store.players.claims(token):  # bound to the player
                try:
                    record, seat, token = await store.players.join(input.match_id, await store.players.identify(token),
                                                                   input.seat, entropy=input.entropy)
                except StoreError as error:
                    return problems.problem_for(error)
                return SeatJoined(seat=seat, token=token, match=MatchType(record=record, my_seat=seat))
            if input.name is None:
                return problems.PlayerRequired(code=problems.ProblemCode("player_required"),
                                               message="Send a name, or join with a player token.")
            try:
                record, seat, token = await store.join(input.match_id, input.name, input.seat,
                                                       entropy=input.entropy)
            except StoreError as error:
                return problems.problem_for(error)
            return SeatJoined(seat=seat, token=token, match=MatchType(record=record, my_seat=seat))

        @strawberry.mutation(description="Give a free seat to a bot; it plays when the match waits on it.")
        async def add_bot(self, info: Info, input: AddBotInput) -> AddBotResult:
            store: MatchStore = info.context["store"]
            try:
                record, seat = await store_add_bot(store, input.match_id, input.seat, input.level,
                                                   info.context["token"])
            except StoreError as error:
                return problems.problem_for(error)
            return BotAdded(seat=seat, match=MatchType(record=record, my_seat=None))

        @strawberry.mutation(description="Give up your seat (the bearer token's): the token is revoked at once and "
                                         "the seat is free to join again.")
        async def leave_seat(self, info: Info, input: LeaveSeatInput) -> LeaveSeatResult:
            store: MatchStore = info.context["store"]
            try:
                record, seat = await store.leave(input.match_id, info.context["token"], input.seat)
            except StoreError as error:
                return problems.problem_for(error)
            return SeatLeft(seat=seat, match=MatchType(record=record, my_seat=None))

        @strawberry.mutation(description="A short-lived, single-use ticket for the bearer token's seat stream "
                                         "(`GET /v1/matches/{id}/events?ticket=...`), for a browser's EventSource.")
        async def create_stream_ticket(self, info: Info, input: CreateStreamTicketInput) -> CreateStreamTicketResult:
            tickets: StreamTickets = info.context["request"].app.state.tickets
            try:
                issued = await tickets.issue(input.match_id, info.context["token"])
            except StoreError as error:
                return problems.problem_for(error)
            return StreamTicket(ticket=issued.ticket, match_id=issued.match_id, seat=issued.seat,
                                expires_in=issued.expires_in, events_url=issued.events_url)

        @strawberry.mutation(description="Start the replay of a finished match; poll `replay(id)` for it.")
        async def start_replay(self, info: Info, input: StartReplayInput) -> StartReplayResult:
            store: MatchStore = info.context["store"]
            try:
                record = await store.get(input.match_id)
                job = await asyncio.to_thread(info.context["request"].app.state.jobs.start_replay, record, input.seat)
            except StoreError as error:
                return problems.problem_for(error)
            return replay_job(job, record.game.id)

        @strawberry.mutation(description="Submit one of your legal actions at the version you read.")
        async def submit_action(self, info: Info, input: SubmitActionInput) -> SubmitActionResult:
            store: MatchStore = info.context["store"]
            try:
                game_id, action = action_from_input(input.action)
                accepted = await store.submit(input.match_id, info.context["token"], input.expected_version,
                                              action, input.idempotency_key, game_id=game_id)
            except (RuleError, StoreError) as error:
                return problems.problem_for(error)
            return ActionAccepted(version=accepted.version, events=accepted.events_for(accepted.seat),
                                  match=MatchType(record=accepted.match, my_seat=accepted.seat),
                                  duplicate=accepted.duplicate)

    MatchEventResult = union("MatchEventResult", MatchEvent, live.StreamEnded, P.MatchNotFound, P.InvalidToken,
                             P.TooManyStreams)
    TurnNoticeResult = union("TurnNoticeResult", TurnNotice, live.StreamEnded, P.TokenRequired, P.InvalidToken,
                             P.MatchNotFound, P.TooManyStreams)

    @strawberry.type
    class Subscription:
        @strawberry.subscription(description="Each accepted action after version `after`, in order, as your seat "
                                             "(the connection_init token; a token holding no seat in this match is "
                                             "InvalidToken) may see it. The last message is a StreamEnded with the "
                                             "reason: the match ended, the server is stopping, the store failed.")
        async def match_events(self, info: Info, match_id: strawberry.ID,
                               after: int = 0) -> AsyncGenerator[MatchEventResult, None]:
            with info.context["request"].app.state.live.subscription():
                async with contextlib.aclosing(live.match_updates(info.context, match_id, after)) as items:
                    async for kind, payload, about in items:
                        if kind == "update":
                            # one MatchEvent per update and seat, every subscriber of this process shares it
                            seat, game_id = about
                            yield payload.shared((MatchEvent, seat),
                                                 lambda: match_event(payload.for_seat(seat), game_id))
                        else:
                            yield problems.problem_for(payload) if kind == "problem" else payload

        @strawberry.subscription(description="A notice whenever one of your matches (the connection_init "
                                             "`tokens`) waits on your seat, and when it ends; the last message is "
                                             "a StreamEnded with the reason.")
        async def my_turns(self, info: Info) -> AsyncGenerator[TurnNoticeResult, None]:
            async with contextlib.aclosing(live.turn_results(info, live.turn_notices(info.context),
                                                             TurnNotice.of)) as results:
                async for result in results:
                    yield result

    # players: identity, me, quick match, rematch, ratings (schema/players.py)
    Query, Mutation, Subscription = player_fields.extend(Query, Mutation, Subscription, TurnNotice=TurnNotice,
                                                         MatchStatusEnum=MatchStatusEnum, Result=Result)
    # collections and trading (schema/collections.py)
    Query, Mutation = collection_fields.extend(Query, Mutation)
    if catalogue_fields:
        Query = strawberry.type(type("Query", (Query,), {
            "__annotations__": {name: kind for name, (kind, _) in catalogue_fields.items()},
            **{name: field for name, (_, field) in catalogue_fields.items()}}), name="Query")
    limits = [
        *QueryDepthLimiter(max_depth=max_depth).validation_rules,
        *MaxAliasesLimiter(max_alias_count=max_aliases).validation_rules,
        max_cost_rule(max_cost),
    ]
    return Schema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        types=list(problems.ALL),
        execution_context_class=PlainDataExecutor,  # the games' views and actions completed fast (execution.py)
        extensions=[
            lambda: ParserCache(maxsize=256),
            DocumentValidationCache.factory(maxsize=256),  # strawberry's ValidationCache hashes the whole document
            # The limiters' rule classes are built once: the validation cache keys on them,
            # so rules built per request would make every request miss the cache.
            lambda: AddValidationRules(limits),
            lambda: MaxTokensLimiter(max_token_count=max_tokens),
            OperationNameRequired,
            MaskUnexpectedErrors,
        ],
    )
