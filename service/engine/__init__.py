"""The engine contract: what every game implements, its RNG and its errors."""

from .errors import IllegalAction, InvalidOptions, MalformedAction, MatchFinished, NotYourTurn, RuleError
from .game import (
    BOARD_SEAT, BOARD_SEAT_NOTE, RESULT_CAUSE, Action, Catalogue, Event, Game, State, Variant, clone, events_for, load_data,
)
from .rng import Rng

__all__ = [
    "BOARD_SEAT", "BOARD_SEAT_NOTE", "Action", "Catalogue", "Event", "Game", "IllegalAction", "InvalidOptions",
    "MalformedAction", "MatchFinished", "NotYourTurn", "RESULT_CAUSE", "Rng", "RuleError", "State", "Variant", "clone", "events_for",
    "load_data",
]
