"""The Sorcerer's Stone board game: the match around the boards.

Read beside the rule book, /work/shared/seeds/002_5ac5154540885c00.txt, and
docs/rules/sorcerers-stone.md (every house rule, with its source).

Variants
--------
``chain`` plays the six challenges in order and then the Mirror of Erised
("Rules for playing the games in order"). The others play one challenge alone
("Rules for playing the games individually"): ``hagrid``, ``sprout``,
``flitwick``, ``mcgonagall`` (abbreviated chess), ``mcgonagall-complete``
(the complete rules of chess), ``quirrell`` and ``snape``.

Turns
-----
"Play passes to the left. This becomes the regular turn order. ... Even
though they are playing different parts of the game, they continue to take
their turns in the regular turn order unless the rules state otherwise."
The match keeps the regular turn (``turn``); on its turn a seat acts on the
board it stands on. A board may claim the next action out of order
(:func:`.board` ``turn_owner``), may pass a seat's turn (``can_play``), and a
seat may have turns to wait (``waiting``).

State
-----
``variant``, ``seats``, ``options``, ``rng``, ``turn`` (the seat whose
regular turn it is, None once over), ``players`` (per seat: ``board`` (a board
name, or None when through every board), ``waiting`` (turns to skip),
``facts`` (what boards said of the seat: ``fire``, ``captured``...)),
``boards`` (board name -> that board's state, for boards in play) and
``result``.
"""

from __future__ import annotations

from typing import Any

from service.engine import Action, Event, Game, Rng, State, Variant, load_data

from . import flitwick, hagrid, mcgonagall, mirror, quirrell, snape, sprout
from .board import Outcome

#: The boards in the order the chained game visits them.
CHAIN = (hagrid, sprout, flitwick, mcgonagall, quirrell, snape, mirror)
BOARDS = {board.NAME: board for board in CHAIN}

_VARIANTS = load_data(__package__, "variants.json")
_BY_ID = {v["id"]: v for v in _VARIANTS}


def _schema() -> dict[str, Any]:
    """The game's schema: the match's own parts plus every board's actions and view."""
    schema = load_data(__package__, "schema.json")
    boards = schema["view"]["properties"]["boards"]
    for board in CHAIN:
        for kind, action in board.SCHEMA["actions"].items():
            assert kind not in schema["actions"], f"two boards define {kind}"
            schema["actions"][kind] = action
        boards["properties"][board.NAME] = board.SCHEMA["view"]
    return schema


class SorcerersStone(Game):
    id = "sorcerers-stone"
    title = "The Sorcerer's Stone"
    min_seats = 2
    max_seats = 4
    variants = tuple(Variant(v["id"], v["title"], v["description"]) for v in _VARIANTS)
    summary = (
        "Harry's way to the Sorcerer's Stone for 2 to 4 players: get past Fluffy, escape the Devil's Snare, catch "
        "the winged key, cross McGonagall's chessboard, outrun the troll, solve Snape's potions and find the Stone "
        "in the Mirror of Erised. Played in order, or one challenge at a time."
    )
    schema = _schema()

    # -- set-up ---------------------------------------------------------------------

    def setup(self, options: dict[str, Any], seats: int, seed: int) -> State:
        rng = Rng.from_seed(seed)
        variant = _BY_ID[options["variant"]]
        mode = "chain" if variant["board"] is None else "individual"
        board_options = dict(options, chess_rules=variant.get("chess_rules", options["chess_rules"]))
        first = hagrid if mode == "chain" else BOARDS[variant["board"]]
        state: State = {
            "variant": variant["id"],
            "mode": mode,
            "seats": seats,
            "options": board_options,
            "rng": None,
            "turn": 0,
            "players": [{"board": first.NAME, "waiting": 0, "facts": {}} for _ in range(seats)],
            "boards": {},
            "result": None,
        }
        if mode == "chain":
            state["boards"] = {board.NAME: board.new_board(rng, seats, mode, board_options) for board in CHAIN}
        else:
            state["boards"] = {first.NAME: first.new_board(rng, seats, mode, board_options)}
        for seat in range(seats):
            first.arrive(state["boards"][first.NAME], seat, rng, state["players"][seat])
        self._start_turn(state, 0, rng, [])
        state["rng"] = rng.state
        return state

    # -- turns ----------------------------------------------------------------------

    def _owner(self, state: State) -> int | None:
        """A seat a board needs now, out of the regular turn order."""
        for name, board in state["boards"].items():
            owner = BOARDS[name].turn_owner(board)
            if owner is not None:
                return owner
        return None

    def to_act(self, state: State) -> set[int]:
        if state["result"] is not None:
            return set()
        owner = self._owner(state)
        if owner is not None:
            return {owner}
        return set() if state["turn"] is None else {state["turn"]}

    def _start_turn(self, state: State, seat: int, rng: Rng, events: list[Event]) -> None:
        """Give the regular turn to ``seat`` or, passing turns that cannot be played,
        to the next seat on its left that can play."""
        seats = state["seats"]
        for step in range(4 * seats * 4 + 1):
            candidate = (seat + step) % seats
            player = state["players"][candidate]
            name = player["board"]
            if name is None:
                continue
            if player["waiting"] > 0:
                player["waiting"] -= 1
                events.append({"type": "waited", "seat": candidate, "board": name, "left": player["waiting"]})
                continue
            board = state["boards"][name]
            if not BOARDS[name].can_play(board, candidate):
                continue
            state["turn"] = candidate
            events.extend(BOARDS[name].begin_turn(board, candidate, rng))
            return
        # Nobody can play: only a board's out-of-order decisions can move the match on.
        state["turn"] = None

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        if seat not in self.to_act(state):
            return []
        name = state["players"][seat]["board"]
        return BOARDS[name].legal_actions(state["boards"][name], seat)

    def play(self, state: State, seat: int, action: Action) -> list[Event]:
        rng = Rng(state["rng"])
        regular = self._owner(state) is None
        name = state["players"][seat]["board"]
        outcome: Outcome = BOARDS[name].play(state["boards"][name], seat, action, rng)
        events = list(outcome.events)
        for who, facts in outcome.facts.items():
            state["players"][who]["facts"].update(facts)
        if state["mode"] == "individual":
            if outcome.winner is not None or outcome.closed:
                self._finish(state, [] if outcome.winner is None else [outcome.winner], events)
        else:
            self._move_on(state, name, outcome, rng, events)
        if state["result"] is None and regular and outcome.turn_over and self._owner(state) is None:
            self._start_turn(state, (seat + 1) % state["seats"], rng, events)
        elif state["result"] is None and state["turn"] is None and self._owner(state) is None:
            self._start_turn(state, (seat + 1) % state["seats"], rng, events)
        state["rng"] = rng.state
        return events

    def _move_on(self, state: State, name: str, outcome: Outcome, rng: Rng, events: list[Event]) -> None:
        """The chained game: seats that completed board ``name`` go to the next one."""
        index = CHAIN.index(BOARDS[name])
        if outcome.winner is not None and name == mirror.NAME:
            self._finish(state, [outcome.winner], events)
            return
        for who in outcome.finished:
            following = CHAIN[index + 1] if index + 1 < len(CHAIN) else None
            state["players"][who]["board"] = following.NAME if following else None
            if following is not None:
                events.append({"type": "moved_on", "seat": who, "board": following.NAME})
                events.extend(following.arrive(state["boards"][following.NAME], who, rng, state["players"][who]))

    def _finish(self, state: State, winners: list[int], events: list[Event]) -> None:
        state["result"] = {"winners": winners, "scores": None,
                           "reason": "The game is won." if winners else "The game ends with no winner."}
        state["turn"] = None
        events.append({"type": "game_over", "winners": winners})

    # -- reading ------------------------------------------------------------------------

    def result(self, state: State) -> dict[str, Any] | None:
        return state["result"]

    def view(self, state: State, seat: int | None) -> dict[str, Any]:
        return {
            "variant": state["variant"],
            "seat": seat,
            "to_act": sorted(self.to_act(state)),
            "turn": state["turn"],
            "players": [
                {"seat": i, "board": p["board"], "waiting": p["waiting"], "fire": p["facts"].get("fire")}
                for i, p in enumerate(state["players"])
            ],
            "boards": {name: BOARDS[name].view(board, seat) for name, board in state["boards"].items()},
            "winners": None if state["result"] is None else list(state["result"]["winners"]),
            "options": {"chess_rules": state["options"]["chess_rules"],
                        "quirrell_path": state["options"]["quirrell_path"]},
        }


GAME = SorcerersStone()
