"""Shared helpers for the Spells and Potions tests: build matches, rig hands,
play cards without spelling out whose turn it is."""

from __future__ import annotations

import json
import re

from service.engine import events_for
from service.games.spells_and_potions import GAME
from service.games.spells_and_potions.table import POST_INDEX, POSTS

_JSON_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def new(variant: str, seats: int, seed: int = 1, **options) -> dict:
    return GAME.setup(GAME.check_options(variant, options, seats), seats, seed)


def rig(state: dict, hands: dict[str, list[str]], lead: str, *, trump: str | None = "keep") -> dict:
    """Give the four hands exactly these cards (post name -> card ids) and let
    ``lead`` lead a fresh trick. Unnamed hands are emptied."""
    state = dict(state)
    state["hands"] = [list(hands.get(p, [])) for p in POSTS]
    state["lead"] = POST_INDEX[lead]
    state["trick"], state["tricks"], state["pending"] = [], [], []
    state["phase"], state["chooser"] = "play", None
    state["points"], state["won"] = [0, 0], [0, 0]
    if trump != "keep":
        state["trump"] = trump
    return state


def acting(state: dict) -> int:
    seats = GAME.to_act(state)
    assert len(seats) == 1, seats
    return next(iter(seats))


def do(state: dict, action: dict, seat: int | None = None) -> tuple[dict, list[dict]]:
    """Apply ``action`` for the (single) seat to act, or for ``seat``."""
    return GAME.apply(state, acting(state) if seat is None else seat, action)


def play(state: dict, *cards: str) -> tuple[dict, list[dict]]:
    """Lay ``cards`` one after another from whichever hand is to play."""
    events = []
    for card in cards:
        post = GAME.view(state, None)["to_play"]
        state, new_events = do(state, {"type": "play", "card": card, "for": post})
        events += new_events
    return state, events


def strings_in(value) -> set[str]:
    """Every string anywhere inside a JSON value (keys included), exactly:
    ``fire-1`` is not found in ``fire-10``."""
    return set(_JSON_STRING.findall(json.dumps(value)))


def hidden_from(state: dict, seat: int | None) -> set[str]:
    """Card ids in the hands of wizards other than ``seat`` (Companions' hands are face up)."""
    return {card for post, owner in enumerate(state["posts"])
            if owner is not None and owner != seat for card in state["hands"][post]}


def visible_events(events: list[dict], seat: int | None) -> list[dict]:
    return events_for(events, seat)
