"""The ``board`` bot: plays the board itself (``BOARD_SEAT``), never a seat.

In McGonagall's chess "the side that no player sits on is played by the
board itself, through the bot workers" (DESIGN.md). The bot job gives this
bot the spectator's view (chess hides nothing) and the board's legal actions
(``mcgonagall_board_move {uci}``, or ``mcgonagall_board_pass`` alone), and it
plays the rule book's house chooser (docs/rules/sorcerers-stone.md): take the
most valuable piece it can (``board.json``), else any move, the lot deciding
between equals. It reads the pieces from the view, like the other bots.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Action = dict[str, Any]
View = dict[str, Any]

VALUES = json.loads((Path(__file__).with_name("board.json")).read_text(encoding="utf-8"))["capture_values"]


def choose(bot_input, rng) -> Action:
    """The most valuable capture among the legal actions, ties and quiet moves by lot."""
    legal = bot_input.legal_actions
    if bot_input.game != "sorcerers-stone" or len(legal) == 1:
        return rng.choice(legal)
    board = bot_input.view["boards"]["mcgonagall"]
    worth = [capture_value(board, action) for action in legal]
    best = max(worth)
    return rng.choice([a for a, w in zip(legal, worth) if w == best])


def capture_value(board: View, action: Action) -> int:
    """What ``action`` takes, by ``board.json``: a Harry by its own value, any other piece by its kind;
    en passant (a pawn moving aslant onto an empty square) takes a pawn; 0 for a quiet move or a pass."""
    if action["type"] != "mcgonagall_board_move":
        return 0
    values = VALUES[board["rules"]]
    uci = action["uci"]
    pieces = {p["square"]: p for p in board["pieces"]}
    taken = pieces.get(uci[2:4])
    if taken is not None:
        return values["harry"] if taken["token"] == "harry" else values[taken["kind"]]
    mover = pieces.get(uci[:2])
    if mover is not None and mover["kind"] == "pawn" and uci[0] != uci[2]:
        return values["pawn"]
    return 0
