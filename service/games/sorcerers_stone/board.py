"""What every board of the Sorcerer's Stone game provides to the match around it.

Each challenge is one module in this package (:mod:`.hagrid`, :mod:`.sprout`,
:mod:`.flitwick`, :mod:`.mcgonagall`, :mod:`.quirrell`, :mod:`.snape`,
:mod:`.mirror`) holding one board's rules as plain functions over that board's
part of the State, a JSON dict the functions change in place. The match
(:mod:`.game`) owns the regular turn order, who is on which board, waiting
turns and the hand-over from one board to the next; a board never looks at
another board.

The functions of a board module
-------------------------------
``NAME``
    The board's key: ``"hagrid"``, ``"sprout"``, ... (also the prefix of its
    action types, e.g. ``hagrid_move``, and of its schema titles).
``SCHEMA``
    ``{"actions": {type: schema}, "view": schema}``, loaded from the board's
    ``<name>.schema.json``, in the subset service/engine/game.py describes.
``new_board(rng, seats, mode, options) -> board``
    The board before anyone arrives: tokens laid face down, decks shuffled.
    ``mode`` is ``"chain"`` (the games in order) or ``"individual"`` (this
    challenge alone: "Rules for playing the games individually").
``arrive(board, seat, rng, player) -> list[Event]``
    ``seat`` reaches this board. Individually, every seat arrives at set-up in
    seat order (seat 0 is "the youngest player"). ``player`` is the match's
    record of that seat (read only): what earlier boards said of it, such as
    its Fire token (``player["facts"]["fire"]``).
``turn_owner(board) -> int | None``
    A seat this board needs to act *now*, outside the regular turn order (a
    follow-up decision, Flitwick's opening reveals by Fire token), else None.
    ``BOARD_SEAT`` (-1): the board itself must act first, as the tail of the
    regular turn under way (McGonagall's colour that no player holds).
``can_play(board, seat) -> bool``
    Whether ``seat`` has anything to do here on its regular turn; False
    passes its turn (Snape's Challenge before everyone has arrived).
``begin_turn(board, seat, rng) -> list[Event]``
    Called when ``seat``'s regular turn on this board starts (Hagrid: pick a
    card). Not called for ``turn_owner`` decisions.
``legal_actions(board, seat) -> list[Action]``
    Never empty while the match gives ``seat`` the turn on this board
    (``seat`` may be ``BOARD_SEAT`` on a board that names it as its owner).
``play(board, seat, action, rng) -> Outcome``
    Carry out one legal action.
``view(board, seat | None) -> dict``
    What ``seat`` (None: a spectator) sees of this board.
``determinise(board_view, seat, rng) -> board``
    A board whose ``view(board, seat)`` equals ``board_view``, every part
    hidden from ``seat`` sampled with ``rng`` (for the ``strong`` bots).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from service.engine import Event


@dataclass
class Outcome:
    """What one action on a board means to the match around it."""

    events: list[Event] = field(default_factory=list)
    #: False: the turn does not pass yet: the same seat must decide again (a follow-up choice), or
    #: the board itself (``BOARD_SEAT`` as ``turn_owner``) answers first, and its action ends the turn.
    turn_over: bool = True
    #: Seats that completed this board with this action, in finishing order (they move on).
    finished: list[int] = field(default_factory=list)
    #: Facts the next boards need, per seat: ``{seat: {"fire": 3}}``, ``{seat: {"captured": 2}}``.
    #: The match keeps and shows ``fire``, ``captured``, ``checkmated`` (complete chess: the
    #: seat's team checkmated), ``quirrell_rank`` and ``wrong_claim`` (game.FACTS).
    facts: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: The regular turn goes next to this seat instead of the one on the left
    #: (Flitwick: "the player with the highest-numbered Fire token goes first").
    next_turn: int | None = None
    #: Turns each seat must now sit out, added to the match's waiting turns
    #: (Snape: "LOSE YOUR TURN--The player loses a turn"): ``{seat: 1}``.
    wait: dict[int, int] = field(default_factory=dict)
    #: Individually: the seat that won this challenge's own game.
    winner: int | None = None
    #: Individually: every seat that won, when several win together (a chess team); else use ``winner``.
    winners: list[int] = field(default_factory=list)
    #: Why the board's game ended, in a sentence a player understands (shown as the match's result reason).
    reason: str | None = None
    #: The same for programs: the match result's snake_case ``cause`` (every value is listed in
    #: docs/rules/sorcerers-stone.md). Set by every board whose own game can end the match.
    cause: str | None = None
    #: The board is over for everyone (every seat still here is done with it).
    closed: bool = False

    @property
    def won(self) -> list[int]:
        """The seats that won with this action (``winners``, else ``[winner]``), sorted; empty if none."""
        return sorted(self.winners or ([] if self.winner is None else [self.winner]))
