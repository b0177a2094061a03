"""Expected failures as GraphQL data.

Every machine code the engine or the store can raise has one GraphQL type
implementing ``Problem``; mutations return unions of a success type and the
problems that operation can meet. REST uses the same codes in its
``application/problem+json`` bodies.
"""

from typing import Any

import strawberry

from service.engine import RuleError
from service.store import StoreError, VersionConflict as VersionConflictError


@strawberry.interface(description="An expected failure: a stable machine `code` and a sentence for a person.")
class Problem:
    code: str
    message: str


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
}

ALL = (VersionConflict, *BY_CODE.values())


def problem_for(error: RuleError | StoreError) -> Any:
    """The GraphQL problem object for an engine or store error."""
    if isinstance(error, VersionConflictError):
        return VersionConflict(code=error.code, message=error.message, current_version=error.current_version)
    cls = BY_CODE.get(error.code, IllegalAction)  # a game's own rule codes are illegal actions
    return cls(code=error.code, message=error.message)
