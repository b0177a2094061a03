"""GraphQL for collections and trading: the same operations as REST (service/rest/collections.py).

:func:`extend` adds the queries and mutations to the Query and Mutation that schema/api.py builds; resolvers
only call the stores (service/store/collections.py, trades.py). Every operation but the public collection
reads acts as the player the bearer token proves (a player token, or the identity provider's JWT).
"""

from typing import Annotated, Any, Optional, Union

import strawberry
from strawberry.types import Info

from service.engine import RuleError
from service.store import StoreError
from service.store.collections import Collections
from service.store.trades import Trades

from . import problems as P
from .collection_types import CollectionItems, ItemCount, Trade, items, trade
from .game_types import graphql_enum

SetKind = graphql_enum("SetKind", ["starter", "refill"], "STARTER: once per player; REFILL: as the daily "
                                                         "allowance and an operator's grants allow.")
SetAllowanceSource = graphql_enum("SetAllowanceSource", ["once", "daily", "grant"],
                                  "What a set was opened from: ONCE (the starter), DAILY (the daily allowance), "
                                  "GRANT (an operator's grant).")


def _union(name: str, *members: type) -> Any:
    return Annotated[Union[members], strawberry.union(name)]


def _collections(info: Info) -> Collections:
    return info.context["request"].app.state.collections


def _trades(info: Info) -> Trades:
    return info.context["request"].app.state.trades


async def _me(info: Info) -> str:
    return await info.context["request"].app.state.players.identify(info.context["token"])


@strawberry.type(description="How many of each kind, and how many different ones.")
class CollectionTotals:
    stones: int
    distinct_stones: int
    cards: int
    distinct_cards: int


@strawberry.type(description="A set you can open: how many now, and when one comes back.")
class SetAllowance:
    kind: SetKind
    available: int
    per_day: Optional[int] = strawberry.field(description="Refills a UTC day allows; null for the starter (once).")
    opened_today: Optional[int]
    granted: int = strawberry.field(description="Granted by an operator, beyond the daily allowance.")
    next_at: Optional[float] = strawberry.field(description="When one comes back, if none is available now (ms).")


@strawberry.type(description="Your collection.")
class MyCollection:
    player_id: strawberry.ID
    game: strawberry.ID
    public: bool = strawberry.field(description="Others may read the counts.")
    stones: list[ItemCount]
    cards: list[ItemCount]
    totals: CollectionTotals
    sets: list[SetAllowance]
    default_hand: Optional[str] = strawberry.field(description="The saved hand a quick match brings.")


@strawberry.type(description="A player's counts, as they made them public.")
class PublicCollection:
    player_id: strawberry.ID
    game: strawberry.ID
    stones: list[ItemCount]
    cards: list[ItemCount]
    totals: CollectionTotals


@strawberry.type(description="Different items owned of how many.")
class Completion:
    owned: int
    total: int
    complete: bool


@strawberry.type(description="Completion of one rarity of stones.")
class RarityCompletion:
    rarity: str = strawberry.field(description="common, uncommon, rare, rare_foil or chaser.")
    owned: int
    total: int
    complete: bool


@strawberry.type(description="What is not owned yet, by id.")
class MissingItems:
    stones: list[str]
    cards: list[str]


@strawberry.type(description="Collectors' view: completion per rarity, missing stones and cards, duplicates.")
class CollectionProgress:
    player_id: strawberry.ID
    game: strawberry.ID
    rarities: list[RarityCompletion]
    stones: Completion
    cards: Completion
    missing: MissingItems
    duplicates: CollectionItems = strawberry.field(description="What is owned beyond one of each: what can be "
                                                               "traded without losing one.")


@strawberry.type(description="A set you opened: its seed (open_set(seed, kind) gives its contents again) and "
                             "contents.")
class SetOpening:
    id: strawberry.ID
    kind: SetKind
    seed: str = strawberry.field(description="A decimal integer below 2^63.")
    at: float
    stones: list[str]
    cards: list[str]
    allowance: SetAllowanceSource


@strawberry.type(description="The set was opened (or this repeats the request of the same idempotency key).")
class SetOpened:
    opening: SetOpening
    duplicate: bool


@strawberry.type(description="A page of your openings, newest first.")
class SetOpeningPage:
    openings: list[SetOpening]
    next_cursor: Optional[str]


@strawberry.type(description="A hand you saved to bring by name into Advanced matches.")
class SavedHand:
    name: str
    stones: list[str]
    cards: list[str] = strawberry.field(description="In the order you prefer them: a match of N cards takes the "
                                                    "first N.")
    hand: list[str] = strawberry.field(description="The 5 stones of the Casting Hand.")
    saved: float
    default: bool = strawberry.field(description="The hand a quick match brings.")


@strawberry.type(description="Your saved hands, by name.")
class SavedHandList:
    hands: list[SavedHand]


@strawberry.type(description="The saved hand is deleted.")
class HandDeleted:
    name: str


@strawberry.type(description="Your saved hand was brought: the match's version after it.")
class SavedHandBrought:
    match_id: strawberry.ID
    version: int
    seat: int
    duplicate: bool


@strawberry.type(description="A page of your trades, made and received, newest first.")
class TradePage:
    trades: list[Trade]
    next_cursor: Optional[str]


@strawberry.input(description="An item of a trade and how many (1 to 100).")
class TradeLineInput:
    id: str
    count: int = 1


@strawberry.input(description="One side of a trade.")
class TradeSideInput:
    stones: list[TradeLineInput] = strawberry.field(default_factory=list)
    cards: list[TradeLineInput] = strawberry.field(default_factory=list)


@strawberry.input
class OfferTradeInput:
    to: strawberry.ID = strawberry.field(description="The player you offer it to.")
    give: TradeSideInput = strawberry.field(description="What you give.")
    get: TradeSideInput = strawberry.field(description="What you get in return.")
    expires_in: Optional[int] = strawberry.field(default=None, description="Seconds the offer stays open.")


@strawberry.input
class TradeInput:
    trade_id: strawberry.ID


@strawberry.input
class OpenSetInput:
    kind: SetKind
    idempotency_key: Optional[str] = strawberry.field(
        default=None, description="Repeat a request with the same key to get its first outcome again.")


@strawberry.input
class CollectionVisibilityInput:
    public: bool


@strawberry.input
class SaveHandInput:
    name: str
    stones: list[str] = strawberry.field(description="10 different stones.")
    cards: list[str] = strawberry.field(description="3 or more different cards, preferred first.")
    hand: list[str] = strawberry.field(description="The 5 of the stones in your Casting Hand.")
    default: bool = strawberry.field(default=False, description="The hand a quick match brings.")


@strawberry.input
class HandInput:
    name: str


@strawberry.input
class BringSavedHandInput:
    match_id: strawberry.ID
    expected_version: int = strawberry.field(description="The version you read; a stale one is a VersionConflict.")
    name: Optional[str] = strawberry.field(default=None, description="A saved hand; null: your default one.")
    idempotency_key: Optional[str] = None


def _collection(data: dict) -> MyCollection:
    return MyCollection(
        player_id=data["player_id"], game=data["game"], public=data["public"],
        stones=[ItemCount(**e) for e in data["stones"]], cards=[ItemCount(**e) for e in data["cards"]],
        totals=CollectionTotals(**data["totals"]), default_hand=data["default_hand"],
        sets=[SetAllowance(kind=SetKind(s["kind"]), available=s["available"], per_day=s["per_day"],
                           opened_today=s["opened_today"], granted=s["granted"], next_at=s["next_at"])
              for s in data["sets"]])


def _progress(data: dict) -> CollectionProgress:
    return CollectionProgress(
        player_id=data["player_id"], game=data["game"], rarities=[RarityCompletion(**r) for r in data["rarities"]],
        stones=Completion(**data["stones"]), cards=Completion(**data["cards"]), missing=MissingItems(**data["missing"]),
        duplicates=items(data["duplicates"]))


def _opening(data: dict) -> SetOpening:
    return SetOpening(id=data["id"], kind=SetKind(data["kind"]), seed=data["seed"], at=data["at"],
                      stones=data["stones"], cards=data["cards"], allowance=SetAllowanceSource(data["allowance"]))


def _hand(data: dict) -> SavedHand:
    return SavedHand(name=data["name"], stones=data["stones"], cards=data["cards"], hand=data["hand"],
                     saved=data["saved"], default=data["default"])


def _side(side: TradeSideInput) -> dict:
    return {kind: [{"id": line.id, "count": line.count} for line in getattr(side, kind)] for kind in ("stones", "cards")}


ME = (P.PlayerRequired, P.InvalidToken)
MyCollectionLookup = _union("MyCollectionLookup", MyCollection, *ME)
PublicCollectionLookup = _union("PublicCollectionLookup", PublicCollection, P.PlayerNotFound, P.CollectionPrivate)
ProgressLookup = _union("CollectionProgressLookup", CollectionProgress, *ME, P.PlayerNotFound, P.CollectionPrivate)
SetOpeningsLookup = _union("SetOpeningsLookup", SetOpeningPage, *ME)
SavedHandsLookup = _union("SavedHandsLookup", SavedHandList, *ME)
TradesLookup = _union("TradesLookup", TradePage, *ME)
TradeLookup = _union("TradeLookup", Trade, *ME, P.TradeNotFound)
OpenSetResult = _union("OpenSetResult", SetOpened, *ME, P.PlayerNotFound, P.UnknownSet, P.SetOpenedBefore,
                       P.NoSetLeft)
VisibilityResult = _union("CollectionVisibilityResult", MyCollection, *ME, P.PlayerNotFound)
SaveHandResult = _union("SaveHandResult", SavedHand, *ME, P.InvalidHand, P.NotInCollection, P.TooManyHands)
DeleteHandResult = _union("DeleteHandResult", HandDeleted, *ME, P.HandNotFound)
BringSavedHandResult = _union(
    "BringSavedHandResult", SavedHandBrought, *ME, P.HandNotFound, P.NotInCollection, P.CollectionRequired,
    P.VersionConflict, P.NotYourTurn, P.IllegalAction, P.MalformedAction, P.MatchFinished, P.MatchNotStarted,
    P.MatchNotFound, P.IdempotencyKeyReused)
OfferTradeResult = _union("OfferTradeResult", Trade, *ME, P.InvalidTrade, P.PlayerNotFound, P.NotInCollection)
AcceptTradeResult = _union("AcceptTradeResult", Trade, *ME, P.TradeNotFound, P.NotYourTrade, P.TradeClosed,
                           P.NotInCollection, P.TradeFailed)
CloseTradeResult = _union("CloseTradeResult", Trade, *ME, P.TradeNotFound, P.NotYourTrade, P.TradeClosed)


@strawberry.type
class CollectionQuery:
    @strawberry.field(description="Your collection: counts, visibility, the sets you can open.")
    async def my_collection(self, info: Info) -> MyCollectionLookup:
        try:
            return _collection(await _collections(info).collection(await _me(info)))
        except StoreError as error:
            return P.problem_for(error)

    @strawberry.field(description="A player's counts, if they made them public.")
    async def player_collection(self, info: Info, player_id: strawberry.ID) -> PublicCollectionLookup:
        try:
            data = await _collections(info).public_collection(player_id)
        except StoreError as error:
            return P.problem_for(error)
        return PublicCollection(player_id=data["player_id"], game=data["game"],
                                stones=[ItemCount(**e) for e in data["stones"]],
                                cards=[ItemCount(**e) for e in data["cards"]], totals=CollectionTotals(**data["totals"]))

    @strawberry.field(description="Collectors' view of a collection: yours (no `playerId`) or a public one.")
    async def collection_progress(self, info: Info, player_id: Optional[strawberry.ID] = None) -> ProgressLookup:
        try:
            if player_id is None:
                return _progress(await _collections(info).progress(await _me(info), owner=True))
            return _progress(await _collections(info).progress(player_id, owner=False))
        except StoreError as error:
            return P.problem_for(error)

    @strawberry.field(description="The sets you opened, with their seeds, newest first.")
    async def my_set_openings(self, info: Info, cursor: Optional[str] = None, limit: int = 20) -> SetOpeningsLookup:
        try:
            openings, next_cursor = await _collections(info).openings(await _me(info), cursor, min(max(limit, 1), 100))
        except StoreError as error:
            return P.problem_for(error)
        except ValueError:
            openings, next_cursor = [], None
        return SetOpeningPage(openings=[_opening(o) for o in openings], next_cursor=next_cursor)

    @strawberry.field(description="Your saved hands, by name.")
    async def my_hands(self, info: Info) -> SavedHandsLookup:
        try:
            return SavedHandList(hands=[_hand(h) for h in await _collections(info).hands(await _me(info))])
        except StoreError as error:
            return P.problem_for(error)

    @strawberry.field(description="Your trades, made and received, newest first.")
    async def my_trades(self, info: Info, cursor: Optional[str] = None, limit: int = 20) -> TradesLookup:
        try:
            trades, next_cursor = await _trades(info).history(await _me(info), cursor, min(max(limit, 1), 100))
        except StoreError as error:
            return P.problem_for(error)
        except ValueError:
            trades, next_cursor = [], None
        return TradePage(trades=[trade(t) for t in trades], next_cursor=next_cursor)

    @strawberry.field(description="A trade of yours (one being carried out is finished first).")
    async def trade(self, info: Info, id: strawberry.ID) -> TradeLookup:
        try:
            return trade(await _trades(info).get(id, await _me(info)))
        except StoreError as error:
            return P.problem_for(error)


@strawberry.type
class CollectionMutation:
    @strawberry.mutation(description="Open a set: the starter once, refills as the daily allowance and grants allow.")
    async def open_set(self, info: Info, input: OpenSetInput) -> OpenSetResult:
        try:
            opening, repeated = await _collections(info).open_set(await _me(info), input.kind.value,
                                                                  input.idempotency_key)
        except StoreError as error:
            return P.problem_for(error)
        return SetOpened(opening=_opening(opening), duplicate=repeated)

    @strawberry.mutation(description="Let others read your counts, or stop them.")
    async def set_collection_visibility(self, info: Info, input: CollectionVisibilityInput) -> VisibilityResult:
        collections = _collections(info)
        try:
            player_id = await _me(info)
            await collections.set_public(player_id, input.public)
            return _collection(await collections.collection(player_id))
        except StoreError as error:
            return P.problem_for(error)

    @strawberry.mutation(description="Save a hand you own, by name (the same name replaces it).")
    async def save_hand(self, info: Info, input: SaveHandInput) -> SaveHandResult:
        hand = {"stones": input.stones, "cards": input.cards, "hand": input.hand}
        try:
            return _hand(await _collections(info).save_hand(await _me(info), input.name, hand, default=input.default))
        except StoreError as error:
            return P.problem_for(error)

    @strawberry.mutation(description="Delete a saved hand.")
    async def delete_hand(self, info: Info, input: HandInput) -> DeleteHandResult:
        try:
            await _collections(info).delete_hand(await _me(info), input.name)
        except StoreError as error:
            return P.problem_for(error)
        return HandDeleted(name=input.name)

    @strawberry.mutation(description="Bring a saved hand (null name: your default one) into an Advanced match, as "
                                     "your seat: the bring action made of it, submitted at `expectedVersion`.")
    async def bring_saved_hand(self, info: Info, input: BringSavedHandInput) -> BringSavedHandResult:
        try:
            accepted = await _collections(info).bring_hand(input.match_id, info.context["token"],
                                                           input.expected_version, input.name, input.idempotency_key)
        except (RuleError, StoreError) as error:
            return P.problem_for(error)
        return SavedHandBrought(match_id=input.match_id, version=accepted.version, seat=accepted.seat,
                                duplicate=accepted.duplicate)

    @strawberry.mutation(description="Offer a trade: what you give for what you get. Nothing moves until it is "
                                     "accepted.")
    async def offer_trade(self, info: Info, input: OfferTradeInput) -> OfferTradeResult:
        try:
            return trade(await _trades(info).offer(await _me(info), input.to, _side(input.give), _side(input.get),
                                                   input.expires_in))
        except StoreError as error:
            return P.problem_for(error)

    @strawberry.mutation(description="Accept a trade offered to you: the swap is made, atomically.")
    async def accept_trade(self, info: Info, input: TradeInput) -> AcceptTradeResult:
        try:
            return trade(await _trades(info).accept(input.trade_id, await _me(info)))
        except StoreError as error:
            return P.problem_for(error)

    @strawberry.mutation(description="Decline a trade offered to you.")
    async def decline_trade(self, info: Info, input: TradeInput) -> CloseTradeResult:
        try:
            return trade(await _trades(info).decline(input.trade_id, await _me(info)))
        except StoreError as error:
            return P.problem_for(error)

    @strawberry.mutation(description="Take back a trade you offered.")
    async def cancel_trade(self, info: Info, input: TradeInput) -> CloseTradeResult:
        try:
            return trade(await _trades(info).cancel(input.trade_id, await _me(info)))
        except StoreError as error:
            return P.problem_for(error)


def extend(Query: type, Mutation: type) -> tuple[type, type]:
    """The Query and Mutation with the collections' fields added (subclasses, as schema/players.py does)."""
    return (strawberry.type(type("Query", (CollectionQuery, Query), {}), name="Query"),
            strawberry.type(type("Mutation", (CollectionMutation, Mutation), {}), name="Mutation"))
