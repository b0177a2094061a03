"""GraphQL for players: identity, ``me { matches, myTurn }``, quick match, rematch, profiles, leaderboards,
and the ``playerTurns`` subscription. :func:`extend` adds them to the Query, Mutation and Subscription that
schema/api.py builds; resolvers only call the stores (service/store/players.py, quickmatch.py, rematch.py,
ratings.py), as REST does (service/rest/players.py).

The player's credential is the bearer token (``Authorization`` on HTTP, ``{"token": ...}`` in
``connection_init`` on a websocket): a player token, or the identity provider's JWT.
"""


import contextlib
from typing import Annotated, Any, AsyncGenerator, Optional, Union

import strawberry
from strawberry.types import Info

from service.engine import RuleError
from service.rest.streams import seat_check
from service.store import InvalidToken, StoreError
from service.store.live import StoreUnavailable, guarded, turns
from service.store.players import PlayerStore
from service.store.quickmatch import QuickMatch
from service.store.ratings import leaderboard as store_leaderboard
from service.store.rematch import Rematches

from . import live, problems as P
from .game_types import graphql_enum


def _union(name: str, *members: type) -> Any:
    return Annotated[Union[members], strawberry.union(name)]


def _players(info: Info) -> PlayerStore:
    return info.context["request"].app.state.players


async def _me(info: Info) -> str:
    return await _players(info).identify(info.context["token"])


@strawberry.type(description="A player: an identity across matches.")
class Player:
    id: strawberry.ID
    name: str
    created: float = strawberry.field(description="Milliseconds since the epoch.")


@strawberry.type(description="A rating in one game and variant (openskill), with the counts of rated results.")
class Rating:
    game: strawberry.ID
    variant: str
    rating: float = strawberry.field(description="The conservative rating players are ranked on: mu - 3 sigma.")
    mu: float = strawberry.field(description="The estimate of the player's strength (25 to start).")
    sigma: float = strawberry.field(description="Its uncertainty (8.33 to start).")
    games: int
    wins: int
    losses: int
    draws: int
    provisional: bool = strawberry.field(description="Fewer than 5 rated matches of this game and variant.")


def _rating(row: dict) -> Rating:
    return Rating(game=row["game"], variant=row["variant"], rating=row["rating"], mu=row["mu"], sigma=row["sigma"],
                  games=row["games"], wins=row["wins"], losses=row["losses"], draws=row["draws"],
                  provisional=row["provisional"])


@strawberry.type(description="A player's public profile.")
class PlayerProfile:
    id: strawberry.ID
    name: str
    created: float
    ratings: list[Rating]


def _profile(profile: dict) -> PlayerProfile:
    return PlayerProfile(id=profile["id"], name=profile["name"], created=profile["created"],
                         ratings=[_rating(r) for r in profile["ratings"]])


@strawberry.type(description="A seat of one of your matches held by someone else.")
class SeatHolder:
    seat: int
    name: Optional[str]
    player: Optional[strawberry.ID] = strawberry.field(description="The player id, if a player holds the seat.")
    bot: Optional[str] = strawberry.field(description="The bot level, if a bot.")


@strawberry.type(description="One of your player token's ids (never the token).")
class PlayerToken:
    id: strawberry.ID
    created: float


@strawberry.type(description="The player was made. Keep the token: it is shown once.")
class PlayerCreated:
    player: Player
    token: str
    token_id: strawberry.ID


@strawberry.type(description="A new player token, shown once.")
class PlayerTokenIssued:
    token: str
    token_id: strawberry.ID
    replaced: Optional[strawberry.ID] = strawberry.field(description="The token revoked in the same step, if any.")


@strawberry.type(description="The token no longer works.")
class PlayerTokenRevoked:
    token_id: strawberry.ID


QuickMatchState = graphql_enum("QuickMatchState", ["idle", "waiting", "pairing", "matched"],
                               "WAITING in `queue`; PAIRING: your group's match is being made; MATCHED: `last` is "
                               "your newest quick match; IDLE: none of these.")


@strawberry.type(description="The queue you wait in.")
class QuickMatchQueue:
    game: strawberry.ID
    variant: str
    seats: int
    rated: bool
    turn_seconds: Optional[int]
    since: Optional[float]


@strawberry.type(description="Your newest quick match.")
class QuickMatchPlacement:
    match_id: strawberry.ID
    seat: int
    at: float


@strawberry.type(description="Where you stand in quick match.")
class QuickMatchStatus:
    status: QuickMatchState
    queue: Optional[QuickMatchQueue]
    last: Optional[QuickMatchPlacement]


def _quick_status(status: dict) -> QuickMatchStatus:
    queue, last = status["queue"], status["last"]
    return QuickMatchStatus(status=QuickMatchState(status["status"]),
                            queue=QuickMatchQueue(**queue) if queue else None,
                            last=QuickMatchPlacement(**last) if last else None)


@strawberry.type(description="A rematch: who accepted, who is awaited, and once made its id and your seat.")
class RematchStatus:
    match_id: strawberry.ID
    rematch_id: Optional[strawberry.ID]
    accepted: list[int]
    waiting_for: list[int]
    seat: Optional[int] = strawberry.field(description="Your seat in the rematch, once made.")
    token: Optional[str] = strawberry.field(description="Your new seat token, shown once, for a seat held without "
                                                        "a player token.")


@strawberry.type(description="A leaderboard row.")
class LeaderboardRow:
    rank: int
    player_id: strawberry.ID
    name: Optional[str]
    rating: float
    mu: float
    sigma: float
    games: int
    wins: int
    losses: int
    draws: int
    provisional: bool


@strawberry.type(description="A page of a leaderboard, best first.")
class LeaderboardPage:
    game: strawberry.ID
    variant: str
    players: list[LeaderboardRow]
    next_cursor: Optional[str] = strawberry.field(description="The next page's cursor; null at the end.")


@strawberry.input
class CreatePlayerInput:
    name: str


@strawberry.input
class CreatePlayerTokenInput:
    replace: Optional[strawberry.ID] = strawberry.field(default=None, description="A token id to revoke in the "
                                                                                  "same step (rotation).")


@strawberry.input
class RevokePlayerTokenInput:
    token_id: strawberry.ID


@strawberry.input
class QuickMatchInput:
    game: strawberry.ID
    variant: Optional[str] = None
    seats: Optional[int] = strawberry.field(default=None, description="2 to 4; the game's minimum if absent.")
    rated: bool = True
    bots_after: Optional[int] = strawberry.field(default=None, description="Seconds after which bots may fill the "
                                                                           "seats no player took; null: never.")
    turn_seconds: Optional[int] = strawberry.field(default=None, description="A turn timer for the match; paired only "
                                                                             "with the same. Rated: a turn that times "
                                                                             "out loses the match.")


@strawberry.input
class RematchInput:
    match_id: strawberry.ID


CreatePlayerResult = _union("CreatePlayerResult", PlayerCreated, P.InvalidName, P.NameTaken)
PlayerTokenResult = _union("PlayerTokenResult", PlayerTokenIssued, P.PlayerRequired, P.InvalidToken,
                           P.PlayerTokenNotFound, P.TooManyPlayerTokens)
RevokePlayerTokenResult = _union("RevokePlayerTokenResult", PlayerTokenRevoked, P.PlayerRequired, P.InvalidToken,
                                 P.PlayerTokenNotFound)
PlayerLookup = _union("PlayerLookup", PlayerProfile, P.PlayerNotFound)
QuickMatchLookup = _union("QuickMatchLookup", QuickMatchStatus, P.PlayerRequired, P.InvalidToken)
JoinQuickMatchResult = _union("JoinQuickMatchResult", QuickMatchStatus, P.PlayerRequired, P.InvalidToken,
                              P.UnknownGame, P.InvalidOptions, P.AlreadyQueued,
                              P.HandNotFound, P.CollectionRequired)  # owned collections (schema/collections.py)
LeaveQuickMatchResult = _union("LeaveQuickMatchResult", QuickMatchStatus, P.PlayerRequired, P.InvalidToken,
                               P.NotQueued)
RematchResult = _union("RematchResult", RematchStatus, P.TokenRequired, P.InvalidToken, P.MatchNotFound,
                       P.RematchUnavailable)
LeaderboardLookup = _union("LeaderboardLookup", LeaderboardPage, P.UnknownGame, P.InvalidOptions)


def extend(Query: type, Mutation: type, Subscription: type, *, TurnNotice: type, MatchStatusEnum: Any,
           Result: type) -> tuple[type, type, type]:
    """The three root types with the players' fields added (subclasses, as the catalogue fields are)."""

    @strawberry.type(description="One of your matches.")
    class MyMatch:
        match_id: strawberry.ID
        game: strawberry.ID
        variant: str
        status: MatchStatusEnum
        rated: bool
        my_seats: list[int]
        opponents: list[SeatHolder]
        to_act: list[int]
        your_turn: bool
        result: Optional[Result]
        created: float
        updated: float

    def my_match(entry: dict) -> MyMatch:
        r = entry["result"]
        return MyMatch(match_id=entry["match_id"], game=entry["game"], variant=entry["variant"],
                       status=MatchStatusEnum(entry["status"]), rated=entry["rated"], my_seats=entry["my_seats"],
                       opponents=[SeatHolder(**o) for o in entry["opponents"]], to_act=entry["to_act"],
                       your_turn=entry["your_turn"], created=entry["created"], updated=entry["updated"],
                       result=None if r is None else Result(winners=r["winners"], scores=r.get("scores"),
                                                            reason=r["reason"], cause=r.get("cause")))

    @strawberry.type(description="A page of your matches, newest first.")
    class MyMatchPage:
        matches: list[MyMatch]
        next_cursor: Optional[str] = strawberry.field(description="The next page's cursor; null at the end.")

    MyMatchStatus = graphql_enum("MyMatchStatus", ["active", "finished"],
                                 "ACTIVE: not finished yet (waiting or being played); FINISHED: over.")

    @strawberry.type(description="You: your profile, tokens and matches.")
    class Me:
        player_id: strawberry.Private[str]
        profile: strawberry.Private[dict]

        @strawberry.field
        def id(self) -> strawberry.ID:
            return strawberry.ID(self.player_id)

        @strawberry.field
        def name(self) -> str:
            return self.profile["name"]

        @strawberry.field
        def ratings(self) -> list[Rating]:
            return [_rating(r) for r in self.profile["ratings"]]

        @strawberry.field(description="Your player tokens' ids.")
        async def tokens(self, info: Info) -> list[PlayerToken]:
            return [PlayerToken(**t) for t in await _players(info).list_tokens(self.player_id)]

        @strawberry.field(description="Your matches of `status`, newest first, a page at a time (`cursor`: the "
                                      "page before's `nextCursor`).")
        async def matches(self, info: Info, status: MyMatchStatus = MyMatchStatus("active"),
                          cursor: Optional[str] = None, limit: int = 20) -> MyMatchPage:
            try:
                entries, next_cursor = await _players(info).matches(self.player_id, status.value, cursor,
                                                                    min(max(limit, 1), 100))
            except ValueError:
                entries, next_cursor = [], None  # a cursor this service did not give: nothing after it
            return MyMatchPage(matches=[my_match(e) for e in entries], next_cursor=next_cursor)

        @strawberry.field(description="Your matches waiting on you now (of your newest 100 unfinished ones).")
        async def my_turn(self, info: Info) -> list[MyMatch]:
            entries, _ = await _players(info).matches(self.player_id, "active", None, 100)
            return [my_match(e) for e in entries if e["your_turn"]]

    MeLookup = _union("MeLookup", Me, P.PlayerRequired, P.InvalidToken)
    PlayerTurnResult = _union("PlayerTurnResult", TurnNotice, live.StreamEnded, P.PlayerRequired, P.InvalidToken,
                              P.TooManyStreams)

    @strawberry.type
    class PlayerQuery:
        @strawberry.field(description="You (the bearer token's player): profile, tokens, `matches`, `myTurn`.")
        async def me(self, info: Info) -> MeLookup:
            players = _players(info)
            try:
                player_id = await players.identify(info.context["token"])
                return Me(player_id=player_id, profile=await players.profile(player_id))
            except StoreError as error:
                return P.problem_for(error)

        @strawberry.field(description="A player's public profile.")
        async def player(self, info: Info, id: strawberry.ID) -> PlayerLookup:
            try:
                return _profile(await _players(info).profile(id))
            except StoreError as error:
                return P.problem_for(error)

        @strawberry.field(description="Top players of a game and variant (its first if null), by conservative "
                                      "rating, a page at a time.")
        async def leaderboard(self, info: Info, game: strawberry.ID, variant: Optional[str] = None,
                              cursor: Optional[str] = None, limit: int = 20) -> LeaderboardLookup:
            store = info.context["store"]
            try:
                found = store.game(game)
                variant = variant or found.variant_ids()[0]
                if variant not in found.variant_ids():
                    return P.InvalidOptions(code=P.ProblemCode("invalid_options"),
                                            message=f"{found.title} has no variant {variant!r}.")
                rows, next_cursor = await store_leaderboard(_players(info), found.id, variant, cursor,
                                                            min(max(limit, 1), 100))
            except StoreError as error:
                return P.problem_for(error)
            except ValueError:
                rows, next_cursor = [], None
            return LeaderboardPage(game=found.id, variant=variant, players=[LeaderboardRow(**r) for r in rows],
                                   next_cursor=next_cursor)

        @strawberry.field(description="Where a rematch of a finished match stands, as your seat (seat token or "
                                      "player token), without accepting it (`offerRematch` accepts).")
        async def rematch(self, info: Info, match_id: strawberry.ID) -> RematchResult:
            try:
                state = await Rematches(info.context["store"], _players(info)).offer(match_id, info.context["token"],
                                                                                   accept=False)
            except StoreError as error:
                return P.problem_for(error)
            return RematchStatus(**state)

        @strawberry.field(description="Where you stand in quick match.")
        async def quick_match(self, info: Info) -> QuickMatchLookup:
            try:
                return _quick_status(await _quick(info).status(await _me(info)))
            except StoreError as error:
                return P.problem_for(error)

    @strawberry.type
    class PlayerMutation:
        @strawberry.mutation(description="Make a player; the answer carries its first token, shown once.")
        async def create_player(self, info: Info, input: CreatePlayerInput) -> CreatePlayerResult:
            try:
                player, token, token_id = await _players(info).create(input.name)
            except StoreError as error:
                return P.problem_for(error)
            return PlayerCreated(player=Player(id=player.id, name=player.name, created=player.created), token=token,
                                 token_id=token_id)

        @strawberry.mutation(description="A new player token, shown once; `replace` revokes another in the same "
                                         "step.")
        async def create_player_token(self, info: Info, input: CreatePlayerTokenInput) -> PlayerTokenResult:
            try:
                token, token_id = await _players(info).issue_token(await _me(info), input.replace)
            except StoreError as error:
                return P.problem_for(error)
            return PlayerTokenIssued(token=token, token_id=token_id, replaced=input.replace)

        @strawberry.mutation(description="Revoke one of your player tokens, at once.")
        async def revoke_player_token(self, info: Info, input: RevokePlayerTokenInput) -> RevokePlayerTokenResult:
            try:
                await _players(info).revoke(await _me(info), input.token_id)
            except StoreError as error:
                return P.problem_for(error)
            return PlayerTokenRevoked(token_id=input.token_id)

        @strawberry.mutation(description="Wait for a match: paired with players of similar rating (the window "
                                         "widens as you wait), bots after `botsAfter` seconds if asked.")
        async def join_quick_match(self, info: Info, input: QuickMatchInput) -> JoinQuickMatchResult:
            quick = _quick(info)
            try:
                player_id = await _me(info)  # who asks first, as REST: an anonymous caller learns no more
            except StoreError as error:
                return P.problem_for(error)
            if input.bots_after is not None and not 0 <= input.bots_after <= 3600:
                return P.InvalidOptions(code=P.ProblemCode("invalid_options"), message="botsAfter is 0 to 3600.")
            try:
                queue = quick.queue(input.game, input.variant, input.seats, input.rated, input.turn_seconds)
                return _quick_status(await quick.join(player_id, queue, input.bots_after))
            except (RuleError, StoreError) as error:
                return P.problem_for(error)

        @strawberry.mutation(description="Stop waiting for a quick match.")
        async def leave_quick_match(self, info: Info) -> LeaveQuickMatchResult:
            quick = _quick(info)
            try:
                player_id = await _me(info)
                await quick.leave(player_id)
                return _quick_status(await quick.status(player_id))
            except StoreError as error:
                return P.problem_for(error)

        @strawberry.mutation(description="Offer (or accept) a rematch of a finished match, as your seat (seat "
                                         "token or player token); made when every seat has accepted.")
        async def offer_rematch(self, info: Info, input: RematchInput) -> RematchResult:
            try:
                state = await Rematches(info.context["store"], _players(info)).offer(input.match_id,
                                                                                   info.context["token"])
            except StoreError as error:
                return P.problem_for(error)
            return RematchStatus(**state)

    @strawberry.type
    class PlayerSubscription:
        @strawberry.subscription(description="A notice whenever any of your matches (the connection_init `token`: "
                                             "a player token) waits on you, when one ends, and once when a new one "
                                             "starts (a quick match); the last message is a StreamEnded.")
        async def player_turns(self, info: Info) -> AsyncGenerator[PlayerTurnResult, None]:
            async with contextlib.aclosing(live.turn_results(info, _player_turns(info.context),
                                                             TurnNotice.of)) as results:
                async for result in results:
                    yield result

    def merged(name: str, base: type, extra: type) -> type:
        return strawberry.type(type(name, (extra, base), {}), name=name)

    return (merged("Query", Query, PlayerQuery), merged("Mutation", Mutation, PlayerMutation),
            merged("Subscription", Subscription, PlayerSubscription))


def _quick(info: Info) -> QuickMatch:
    return info.context["request"].app.state.quick_match


async def _player_turns(context: dict):
    """("notice", dict) items; the last is ("problem", error) when refused, else ("end", StreamEnded)."""
    store = context["store"]
    request = context["request"]
    live_updates, limit, settings = request.app.state.live, request.app.state.stream_limit, request.app.state.settings
    players: PlayerStore = request.app.state.players
    token, _ = live._presented(context)
    try:
        if token is not None and not isinstance(token, str):
            raise InvalidToken("The connection's token is not a player token.")
        player_id = await guarded(lambda: players.identify(token), live_updates.timeout)
        seats = await guarded(lambda: players.active_seats(player_id), live_updates.timeout)
        lease = await limit.acquire(store, [token], keepalive=settings.stream_keepalive)
    except StoreUnavailable as error:
        yield "end", live.ended(error.code, error.message)
        return
    except StoreError as error:
        yield "problem", error
        return

    async def discover():
        return await players.active_seats(player_id)

    reason, message = "finished", None
    try:
        notices = turns(live_updates, seats, idle=settings.stream_keepalive, discover=discover,
                        seat_checks={s: seat_check(store, s[0], token) for s in seats},
                        check=lambda match_id: seat_check(store, match_id, token))
        async with contextlib.aclosing(live.watched(notices, request, settings.stream_send_timeout)) as items:
            async for notice in items:
                await lease.renew()
                if notice is not None:
                    yield "notice", notice
        if live_updates.closing.is_set():
            reason = "shutdown"
    except StoreError as error:
        reason, message = error.code, error.message
    finally:
        await lease.release()
    yield "end", live.ended(reason, message)

