"""Matches in Redis: records, the compare-and-set script, the action log, pub/sub."""

from .errors import (
    IdempotencyKeyReused, InvalidToken, MatchFull, MatchNotFound, MatchNotStarted, NoSuchSeat, NotYourSeat,
    SeatTaken, StoreError, TokenRequired, TooManyStreams, UnknownGame, VersionConflict,
)
from .errors import MatchNotFinished, ReplayNotFound, UnknownBotLevel
from .matches import Accepted, HistoryEntry, Match, MatchStore, Seat
from .tokens import bearer_token

__all__ = [
    "Accepted", "HistoryEntry", "IdempotencyKeyReused", "InvalidToken", "Match", "MatchFull", "MatchNotFound",
    "MatchNotStarted", "MatchStore", "NoSuchSeat", "NotYourSeat", "Seat", "SeatTaken", "StoreError", "TokenRequired",
    "TooManyStreams", "UnknownGame", "VersionConflict", "bearer_token",
    "MatchNotFinished", "ReplayNotFound", "UnknownBotLevel",
]
