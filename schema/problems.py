"""Expected failures as GraphQL data.

Every machine code the engine or the store can raise has one GraphQL type
implementing ``Problem``; mutations return unions of a success type and the
problems that operation can meet. REST uses the same codes in its
``application/problem+json`` bodies: ``ProblemCode`` is REST's list of codes
(:data:`service.rest.problems.STATUS`), in SCREAMING_CASE as GraphQL enum
values are (``version_conflict`` -> ``VERSION_CONFLICT``).
"""

from typing import Any, Optional

import strawberry

from service.engine import RuleError
from service.rest.problems import STATUS
from service.store import StoreError, VersionConflict as VersionConflictError

from .collection_types import CollectionItems, Trade, items as collection_items, trade as trade_type
from .game_types import graphql_enum

ProblemCode = graphql_enum(
    "ProblemCode", STATUS,
    "The machine code of a problem: REST's `code`, in SCREAMING_CASE (`version_conflict` -> `VERSION_CONFLICT`).")


@strawberry.interface(description="An expected failure: a stable machine `code` and a sentence for a person.")
class Problem:
    code: ProblemCode
    message: str
    rule_code: Optional[str] = strawberry.field(
        default=None, description="A game's own code for a refused action, where the game has one beyond "
                                  "ILLEGAL_ACTION (then `code` is ILLEGAL_ACTION); else null.")


def _problem(name: str, description: str) -> type:
    cls = type(name, (Problem,), {"__annotations__": {}})
    return strawberry.type(cls, name=name, description=description)


@strawberry.type(description="The match is not at the version you expected; nothing was applied.")
class VersionConflict(Problem):
    current_version: int


UnknownGame = _problem("UnknownGame", "No game has that id.")
InvalidOptions = _problem("InvalidOptions", "The variant, seat count or options are not ones the game offers.")
MatchNotFound = _problem("MatchNotFound", "No match has that id (or it has expired).")
SeatTaken = _problem("SeatTaken", "That seat already has a player.")
MatchFull = _problem("MatchFull", "Every seat of the match is taken.")
NoSuchSeat = _problem("NoSuchSeat", "The match has no seat with that number.")
TokenRequired = _problem("TokenRequired", "The operation needs a seat's bearer token.")
InvalidToken = _problem("InvalidToken", "The bearer token does not hold a seat in this match.")
NotYourSeat = _problem("NotYourSeat", "The token holds another seat of this match than the one named.")
MatchNotStarted = _problem("MatchNotStarted", "The match starts when every seat is taken.")
NotYourTurn = _problem("NotYourTurn", "Your seat is not one the game is waiting on.")
IllegalAction = _problem("IllegalAction", "The rules do not allow that action now; nothing was applied.")
MalformedAction = _problem("MalformedAction", "The action is not one of the game's action shapes.")
MatchFinished = _problem("MatchFinished", "The match is over.")
TooManyStreams = _problem("TooManyStreams", "The token already holds as many open streams as allowed.")
IdempotencyKeyReused = _problem("IdempotencyKeyReused", "The idempotency key was first used with another request.")
UnknownBotLevel = _problem("UnknownBotLevel", "No bot level has that name (or it is not implemented yet).")
MatchNotFinished = _problem("MatchNotFinished", "Only a finished match can be replayed.")
ReplayNotFound = _problem("ReplayNotFound", "No replay has that id (or it has expired).")
InvalidEntropy = _problem("InvalidEntropy", "The seat's entropy is not 1 to 128 characters without control "
                                            "characters (docs/fairness.md).")
AlreadySeated = _problem("AlreadySeated", "The player already holds a seat of this match (not a hot-seat match).")
InvalidName = _problem("InvalidName", "The name breaks the naming rules (length, characters).")
NameTaken = _problem("NameTaken", "The name is another player's, or reads as it.")
PlayerNotFound = _problem("PlayerNotFound", "No player has that id.")
PlayerRequired = _problem("PlayerRequired", "The operation needs a player token (or an identity provider's JWT).")
PlayerTokenNotFound = _problem("PlayerTokenNotFound", "The player has no token with that id.")
TooManyPlayerTokens = _problem("TooManyPlayerTokens", "The player holds as many tokens as allowed; revoke one.")
AlreadyQueued = _problem("AlreadyQueued", "The player is already waiting for a quick match.")
NotQueued = _problem("NotQueued", "The player is not waiting for a quick match.")
RematchUnavailable = _problem("RematchUnavailable", "The match is not finished, or the caller did not play it.")


@strawberry.type(description="You do not own (enough of) what this needs; `missing` says what, and how many more.")
class NotInCollection(Problem):
    missing: CollectionItems


@strawberry.type(description="No set of this kind left to open today, and none granted.")
class NoSetLeft(Problem):
    next_at: float = strawberry.field(description="When the daily allowance comes back (ms since the epoch).")


@strawberry.type(description="The trade is no longer open.")
class TradeClosed(Problem):
    trade_status: str = strawberry.field(description="Its status: declined, cancelled, expired, completed...")


@strawberry.type(description="The accepted trade could not be made (a party no longer owned its side): nothing "
                             "moved.")
class TradeFailed(Problem):
    trade: Trade


CollectionRequired = _problem("CollectionRequired", "The match is played with owned collections and this seat "
                                                    "(a bot) owns none.")
CollectionPrivate = _problem("CollectionPrivate", "The player has not made their collection public.")
UnknownSet = _problem("UnknownSet", "No set has that kind.")
SetOpenedBefore = _problem("SetOpenedBefore", "The set is one a player opens once, and it was opened.")
InvalidHand = _problem("InvalidHand", "The hand is not one that can be saved (its name, stones, cards or Casting "
                                      "Hand).")
HandNotFound = _problem("HandNotFound", "You have no saved hand of that name (or none at all).")
TooManyHands = _problem("TooManyHands", "You keep as many saved hands as allowed; delete one.")
InvalidTrade = _problem("InvalidTrade", "The trade is not one that can be offered.")
TradeNotFound = _problem("TradeNotFound", "No trade of yours has that id (or it has expired).")
NotYourTrade = _problem("NotYourTrade", "Only the recipient accepts or declines a trade, only its offerer cancels "
                                        "it.")

BY_CODE: dict[str, type] = {
    "unknown_game": UnknownGame,
    "invalid_options": InvalidOptions,
    "match_not_found": MatchNotFound,
    "seat_taken": SeatTaken,
    "match_full": MatchFull,
    "no_such_seat": NoSuchSeat,
    "token_required": TokenRequired,
    "invalid_token": InvalidToken,
    "not_your_seat": NotYourSeat,
    "match_not_started": MatchNotStarted,
    "not_your_turn": NotYourTurn,
    "illegal_action": IllegalAction,
    "malformed_action": MalformedAction,
    "match_finished": MatchFinished,
    "idempotency_key_reused": IdempotencyKeyReused,
    "too_many_streams": TooManyStreams,
    "unknown_bot_level": UnknownBotLevel,
    "match_not_finished": MatchNotFinished,
    "replay_not_found": ReplayNotFound,
    "invalid_entropy": InvalidEntropy,
    "already_seated": AlreadySeated,
    "invalid_name": InvalidName,
    "name_taken": NameTaken,
    "player_not_found": PlayerNotFound,
    "player_required": PlayerRequired,
    "player_token_not_found": PlayerTokenNotFound,
    "too_many_player_tokens": TooManyPlayerTokens,
    "already_queued": AlreadyQueued,
    "not_queued": NotQueued,
    "rematch_unavailable": RematchUnavailable,
    "not_in_collection": NotInCollection,
    "no_set_left": NoSetLeft,
    "trade_closed": TradeClosed,
    "trade_failed": TradeFailed,
    "collection_required": CollectionRequired,
    "collection_private": CollectionPrivate,
    "unknown_set": UnknownSet,
    "set_opened_before": SetOpenedBefore,
    "invalid_hand": InvalidHand,
    "hand_not_found": HandNotFound,
    "too_many_hands": TooManyHands,
    "invalid_trade": InvalidTrade,
    "trade_not_found": TradeNotFound,
    "not_your_trade": NotYourTrade,
}
#: The details some problems carry beyond a code and a message (the store error's attribute -> the field).
_DETAILS = {
    "not_in_collection": lambda e: {"missing": collection_items(e.missing)},
    "no_set_left": lambda e: {"next_at": e.next_at},
    "trade_closed": lambda e: {"trade_status": e.status},
    "trade_failed": lambda e: {"trade": trade_type(e.trade)},
}

ALL = (VersionConflict, *BY_CODE.values())


def problem_for(error: RuleError | StoreError) -> Any:
    """The GraphQL problem object for an engine or store error."""
    if isinstance(error, VersionConflictError):
        return VersionConflict(code=ProblemCode(error.code), message=error.message,
                               current_version=error.current_version)
    if error.code in BY_CODE:
        details = _DETAILS[error.code](error) if error.code in _DETAILS else {}
        return BY_CODE[error.code](code=ProblemCode(error.code), message=error.message, **details)
    # a game's own rule codes are illegal actions, as in REST (409), the game's code kept beside
    return IllegalAction(code=ProblemCode("illegal_action"), message=error.message, rule_code=error.code)
