"""Bot algorithms, one module per level.

A bot decides from a :class:`BotInput` only: its seat's ``view`` (exactly what
``game.view(state, seat)`` shows that seat's client) and that seat's legal
actions (what the API lists for that seat's token). Nothing in this package
imports the store, the RQ jobs or a game's rules object, so a bot cannot read
another seat's hidden state or call ``game.apply`` on the real state;
``tests/workers/test_bots.py`` checks the imports.

Levels (see docs/bots.md): ``random`` (uniform over the legal actions),
``greedy`` (a one-ply heuristic per game, scored against the view) and
``strong`` (ISMCTS over determinisations built from the view by each game's
``determinise``; :mod:`.strong`). ``strong`` is the one module here that uses
a game's rules object -- only on the states it samples from the view, never on
the real state. The workers can play it; the store still refuses it when a bot
is added until ``service.store.bots.BOT_LEVELS`` lists it.

One more bot plays no seat: :data:`BOARD_LEVEL` (:mod:`.board`) plays the board
itself, the engine's ``BOARD_SEAT`` (McGonagall's colour that no player holds),
from the spectator's view. It is not a level a seat can be given.
"""

from __future__ import annotations

import random as _random
from dataclasses import dataclass, field
from typing import Any

from service.engine import BOARD_SEAT

from . import board, greedy, random, strong

#: level -> ``choose(bot_input, rng) -> action``; the same levels as service.store.bots.BOT_LEVELS.
LEVELS = {"random": random.choose, "greedy": greedy.choose, "strong": strong.choose}
#: The level that plays the board itself (``BOARD_SEAT``); never one a seat can be given.
BOARD_LEVEL = "board"
_PLAYERS = {**LEVELS, BOARD_LEVEL: board.choose}


@dataclass(frozen=True)
class BotInput:
    """Everything a bot knows when it acts."""

    game: str  # the game id
    seat: int  # BOARD_SEAT (-1) for the board itself
    view: dict[str, Any]  # game.view(state, seat); the spectator's, game.view(state, None), for the board
    legal_actions: list[dict[str, Any]] = field(default_factory=list)


def viewer(seat: int) -> int | None:
    """Whose view the bot playing ``seat`` reads: the seat's own, or the spectator's (None) for the
    board itself, which is no seat (chess hides nothing, and ``view(state, -1)`` would mean nothing)."""
    return None if seat == BOARD_SEAT else seat


def choose(level: str, bot_input: BotInput, rng: _random.Random) -> dict[str, Any]:
    """The action a bot of ``level`` (or :data:`BOARD_LEVEL`) plays; one of ``bot_input.legal_actions`` verbatim."""
    if not bot_input.legal_actions:
        raise ValueError("a bot is asked to act with no legal action")
    return _PLAYERS[level](bot_input, rng)
