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

The match keeps the regular turn (``turn``): on its turn a seat acts on the
board it stands on (``begin_turn`` is called as the turn starts, event
``turn_began``), and when that turn is over the turn passes to the left.
Boards may first need decisions out of the regular order (``turn_owner``:
arrival decisions, Flitwick's opening reveals by Fire token, Snape's set-up
and give-aways); those come before the next regular turn begins, which
meanwhile is ``due``. When two boards ask at once, the later board in the
chain asks first (a player who has just arrived settles in first).

The board itself can be an actor too (``BOARD_SEAT``, service/engine/game.py):
in McGonagall's chess the colour no player holds answers each player's move.
The player's move then reports ``turn_over`` False and the board names
``BOARD_SEAT`` as its ``turn_owner``: the match waits on the board alone, before
any other decision, and the board's answer ends the player's regular turn,
which then passes to the left of that player as if both were one action.

Passing the turn skips, in this order:

* a seat through every board (never in practice: the Mirror ends the match);
* a seat *held* at the door of its board (below): its turns do not count;
* a seat with turns to wait (``waiting``): the turn is one of them (one
  fewer to wait, event ``waited``);
* a seat whose board says it has nothing to do now (``can_play``: Snape's
  Challenge before everyone is there, a Fire token holder waiting for the
  others, a Harry out of the chess game).

"Wait N turns" means: sit out the seat's own next N regular turns. A board
may say who has the next regular turn (``Outcome.next_turn``: Flitwick's
first turn), and the match itself does so where the rule book names who
goes first on a new board (after complete chess, on Snape's); event
``goes_first``. A board may make a seat lose turns (``Outcome.wait``:
Snape's LOSE YOUR TURN).

Hand-overs (the games in order)
-------------------------------
Seats a board reports ``finished`` move to the next board at once, in that
order, and ``arrive`` there (event ``moved_on``); a board reporting
``closed`` sends on anyone still on it. What a board said of a seat
(``Outcome.facts``: ``fire``, ``captured``, ``checkmated``,
``quirrell_rank``, ``wrong_claim``) is kept in ``players[seat]["facts"]``
for the boards after it and shown to all. The exceptions:

* McGonagall -> Quirrell: a seat whose Harry was captured (fact
  ``captured``) arrives *held*: "The last player captured must wait 1 turn
  after the last player to finish McGonagall's Challenge starts this game.
  The second to last player captured must wait 2 turns, and the third to last
  player captured must wait 3 turns." The hold ends once nobody is left
  before Quirrell's Challenge and every seat there that is not held has
  begun a turn on it (event ``wait_begins``); then the seat waits
  ``1 + the number captured after it`` turns of its own.
* Complete chess: "The team that checkmates the other team's king goes
  first. When neither player from a team was captured ... those players spin
  the spinner. The player with the highest spin goes first. Spinning the
  troll counts as zero." (:meth:`SorcerersStone._first_after_chess`).
* Quirrell -> Snape: "The player who finished first in Quirrell's
  Challenge goes first" (fact ``quirrell_rank``) once all are there.
* Snape -> Mirror: a wrong claimant (fact ``wrong_claim``) is held like a
  captured player and then waits 2 turns: "must wait 2 turns after the last
  player begins flipping over Mirror of Erised cards to begin this game".
* The Mirror's winner wins the match.

A match never stalls: when a full round passes with no seat able to play and
no board asking for a decision, every hold ends at once; should nobody still
be able to play, the match ends with no winner (a safety net the tests show
is never reached). Individually the same machinery drives one board, every
seat arriving at set-up in seat order; the board's winner (or its
``closed`` with no winner) ends the match.

State
-----
``variant``, ``mode``, ``seats``, ``options`` (``chess_rules``,
``quirrell_path``, ``sprout_late_arrivals``), ``rng``, ``turn`` (the seat whose regular turn is under
way, else None), ``due`` (the seat whose regular turn comes next when
``turn`` is None), ``players`` (per seat: ``board`` (a board name, or None
when through every board), ``waiting`` (turns to sit out), ``held`` (waiting
does not count yet), ``started`` (has begun a regular turn on its board),
``facts``), ``boards`` (board name -> that board's state) and ``result``.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Sequence

from service.engine import BOARD_SEAT, Action, Catalogue, Event, Game, Rng, State, Variant, clone, load_data

from . import cards, flitwick, hagrid, mcgonagall, mirror, quirrell, snape, sprout
from .board import Outcome

#: The boards in the order the chained game visits them.
CHAIN = (hagrid, sprout, flitwick, mcgonagall, quirrell, snape, mirror)
BOARDS = {board.NAME: board for board in CHAIN}

_VARIANTS = load_data(__package__, "variants.json")
_BY_ID = {v["id"]: v for v in _VARIANTS}
_RULES = load_data(__package__, "chain.json")

#: The facts boards report that the match keeps and shows (see schema.json, SorcerersStoneFacts).
FACTS = ("fire", "captured", "checkmated", "quirrell_rank", "wrong_claim")


def _schema(chain: Sequence[ModuleType]) -> dict[str, Any]:
    """The game's schema: the match's own parts plus every board's actions, view and events."""
    schema = load_data(__package__, "schema.json")
    boards = schema["view"]["properties"]["boards"]
    for board in chain:
        for kind, action in board.SCHEMA["actions"].items():
            assert kind not in schema["actions"], f"two boards define {kind}"
            schema["actions"][kind] = action
        for kind, event in board.SCHEMA.get("events", {}).items():
            assert kind not in schema["events"], f"two boards define the event {kind}"
            schema["events"][kind] = event
        boards["properties"][board.NAME] = board.SCHEMA["view"]
    return schema


class SorcerersStone(Game):
    id = "sorcerers-stone"
    title = "The Sorcerer's Stone"
    rules_version = load_data(__package__, "rules_version.json")["version"]
    min_seats = 2
    max_seats = 4
    variants = tuple(Variant(v["id"], v["title"], v["description"]) for v in _VARIANTS)
    summary = (
        "Harry's way to the Sorcerer's Stone for 2 to 4 players: get past Fluffy, escape the Devil's Snare, catch "
        "the winged key, cross McGonagall's chessboard, outrun the troll, solve Snape's potions and find the Stone "
        "in the Mirror of Erised. Played in order, or one challenge at a time."
    )
    #: The 90 cards of Hagrid's, Snape's and the Mirror of Erised's decks (:mod:`.cards`).
    catalogues = (Catalogue("cards", load_data(__package__, "schema.json")["card"], ("id", "deck"), cards.catalogue),)

    def __init__(self, chain: Sequence[ModuleType] = CHAIN):
        """``chain``: the board modules in order (the tests pass stand-ins with the same names)."""
        self.chain = tuple(chain)
        self.boards = {board.NAME: board for board in self.chain}
        names = [board.NAME for board in self.chain]
        #: The board after each board in the chain (None after the last).
        self._following = {name: names[i + 1] if i + 1 < len(names) else None for i, name in enumerate(names)}
        self.schema = _schema(self.chain)

    # -- set-up ---------------------------------------------------------------------

    def setup(self, options: dict[str, Any], seats: int, seed: int) -> State:
        rng = Rng.from_seed(seed)
        variant = _BY_ID[options["variant"]]
        mode = "chain" if variant["board"] is None else "individual"
        # Stored options from before sprout_late_arrivals existed replay under the reading of that time.
        board_options = {"chess_rules": variant.get("chess_rules", options["chess_rules"]),
                         "quirrell_path": options["quirrell_path"],
                         "sprout_late_arrivals": options.get("sprout_late_arrivals", sprout.BEFORE_THE_OPTION)}
        names = [board.NAME for board in self.chain] if mode == "chain" else [variant["board"]]
        state: State = {
            "variant": variant["id"],
            "mode": mode,
            "seats": seats,
            "options": board_options,
            "rng": None,
            "turn": None,
            "due": 0,
            "players": [{"board": names[0], "waiting": 0, "held": False, "started": False, "facts": {}}
                        for _ in range(seats)],
            "boards": {name: self.boards[name].new_board(rng, seats, mode, board_options) for name in names},
            "result": None,
        }
        events: list[Event] = []
        for seat in range(seats):
            # Individually "the youngest player" (seat 0) comes first; in order, every Harry starts
            # "on the door next to Start" of Hagrid's Challenge.
            events.extend(self._board(names[0]).arrive(state["boards"][names[0]], seat, rng, state["players"][seat]))
        self._advance(state, rng, events)
        state["rng"] = rng.state
        return state

    def _board(self, name: str) -> ModuleType:
        return self.boards[name]

    # -- who acts ---------------------------------------------------------------------

    def _owner(self, state: State) -> tuple[int, str] | None:
        """A seat a board needs now, out of the regular turn order, and that board.

        The board itself (``BOARD_SEAT``) first: its answer is the tail of the
        regular turn under way. Then later boards first: a seat that has just
        arrived settles its arrival (a bishop to replace) before an earlier
        board's decisions go on."""
        found = None
        boards = self.boards  # what self._board reads: this runs several times per action
        for name, board in reversed(state["boards"].items()):
            owner = boards[name].turn_owner(board)
            if owner == BOARD_SEAT:
                return owner, name
            if owner is not None and found is None:
                found = owner, name
        return found

    def to_act(self, state: State) -> set[int]:
        if state["result"] is not None:
            return set()
        owner = self._owner(state)
        if owner is not None:
            return {owner[0]}
        return set() if state["turn"] is None else {state["turn"]}

    def _acting_board(self, state: State, seat: int) -> str | None:
        owner = self._owner(state)
        if owner is not None:
            return owner[1] if owner[0] == seat else None
        if state["turn"] == seat:
            return state["players"][seat]["board"]
        return None

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        if state["result"] is not None:
            return []
        name = self._acting_board(state, seat)
        if name is None:
            return []
        return self._board(name).legal_actions(state["boards"][name], seat)

    # -- playing ------------------------------------------------------------------------

    def copy_for_play(self, state: State, seat: int, action: Action) -> State:
        """Copy-on-write (see :meth:`Game.copy_for_play`): the match's own parts are copied, and of the
        boards only those :meth:`play` can change: the acting board (its ``play``), the one after it (a seat
        finishing it arrives there) and every board a seat stands on (a turn begins there); the others
        are shared with ``state``, which keeps them unchanged."""
        boards = state["boards"]
        if len(boards) == 1:
            copied = {name: self._copy_board(name, data) for name, data in boards.items()}
        else:
            name = self._acting_board(state, seat)
            touched = {name, self._following.get(name), *(p["board"] for p in state["players"])}
            copied = {board: self._copy_board(board, data) if board in touched else data
                      for board, data in boards.items()}
        new = dict(state)
        new["players"] = clone(state["players"])
        new["boards"] = copied
        new["result"] = clone(state["result"])
        return new

    def _copy_board(self, name: str, board: dict) -> dict:
        """A copy of board ``name`` that its functions may change: the board module's own ``copy``
        (which may share what they never change), else a deep copy."""
        copy = getattr(self._board(name), "copy", None)
        return clone(board) if copy is None else copy(board)

    def is_legal(self, state: State, seat: int, action: Action) -> bool:
        """``action in self.legal_actions(state, seat)`` (:meth:`Game.is_legal`), asking the acting
        board's own ``is_legal`` when it has one (McGonagall's: a move is looked up among the moves
        rather than the list of actions rebuilt)."""
        if state["result"] is not None:
            return False
        name = self._acting_board(state, seat)
        if name is None:
            return False
        board = self._board(name)
        check = getattr(board, "is_legal", None)
        if check is None:
            return action in board.legal_actions(state["boards"][name], seat)
        return check(state["boards"][name], seat, action)

    def play(self, state: State, seat: int, action: Action) -> list[Event]:
        rng = Rng(state["rng"])
        # The board's answer belongs to the regular turn it answers (``turn``, the seat that moved).
        turn = state["turn"]
        regular = seat == BOARD_SEAT or self._owner(state) is None
        name = self._acting_board(state, seat)
        outcome: Outcome = self._board(name).play(state["boards"][name], seat, action, rng)
        events = list(outcome.events)
        for who, facts in outcome.facts.items():
            state["players"][int(who)]["facts"].update(facts)
        for who, turns in outcome.wait.items():
            state["players"][int(who)]["waiting"] += turns
        if outcome.next_turn is not None:
            state["due"] = outcome.next_turn
            events.append({"type": "goes_first", "seat": outcome.next_turn, "board": name})
        if state["mode"] == "individual":
            if outcome.won or outcome.closed:
                self._finish(state, outcome.won, events, reason=outcome.reason, cause=outcome.cause)
        else:
            self._hand_over(state, name, outcome, rng, events)
        if state["result"] is None:
            if regular and outcome.turn_over:
                state["turn"] = None
                if outcome.next_turn is None and state["due"] is None:
                    state["due"] = (turn + 1) % state["seats"]
            self._advance(state, rng, events)
        state["rng"] = rng.state
        return events

    def _advance(self, state: State, rng: Rng, events: list[Event]) -> None:
        """Start the next regular turn once no board claims a decision out of order.

        "Play passes to the left": from ``due``, the first seat that may play.
        A full round in which nobody can play ends every hold; a second one ends
        the match with no winner (never reached; see the module docstring)."""
        self._release(state, events, force=False)
        if state["turn"] is not None or self._owner(state) is not None:
            return
        start = state["due"] if state["due"] is not None else 0
        for force in (False, True):
            if force:
                if not any(p["held"] for p in state["players"]):
                    break
                self._release(state, events, force=True)
            if self._start_turn(state, start, rng, events):
                return
        self._finish(state, [], events, reason="Nobody can play on: the match ends with no winner.",
                     cause="stalled")

    def _start_turn(self, state: State, start: int, rng: Rng, events: list[Event]) -> bool:
        """Pass the turn round the table from ``start`` to the first seat that can play."""
        seats = state["seats"]
        seat, idle = start, 0
        while idle < seats:
            player = state["players"][seat]
            name = player["board"]
            if name is None or player["held"]:
                idle += 1
            elif player["waiting"] > 0:
                # The seat sits out this turn of its own: one fewer to wait.
                player["waiting"] -= 1
                events.append({"type": "waited", "seat": seat, "board": name, "left": player["waiting"]})
                idle = 0
            elif not self._board(name).can_play(state["boards"][name], seat):
                idle += 1
            else:
                state["turn"], state["due"] = seat, None
                player["started"] = True
                events.append({"type": "turn_began", "seat": seat, "board": name})
                events.extend(self._board(name).begin_turn(state["boards"][name], seat, rng))
                self._release(state, events, force=False)
                return True
            seat = (seat + 1) % seats
        return False

    # -- the games in order ---------------------------------------------------------------

    def _hand_over(self, state: State, name: str, outcome: Outcome, rng: Rng, events: list[Event]) -> None:
        """The chained game: seats that completed board ``name`` go to the next one."""
        if name == "mirror" and outcome.won:
            # "If this player reveals the Sorcerer's Stone, he/she wins the game."
            self._finish(state, outcome.won, events, reason="The Sorcerer's Stone was found in the Mirror of Erised.",
                         cause="sorcerers_stone")
            return
        moving = list(outcome.finished)
        if outcome.closed:
            moving += [s for s, p in enumerate(state["players"]) if p["board"] == name and s not in moving]
        moving = [s for s in moving if state["players"][s]["board"] == name]
        index = [board.NAME for board in self.chain].index(name)
        following = self.chain[index + 1].NAME if index + 1 < len(self.chain) else None
        for who in moving:
            self._arrive(state, who, following, rng, events)
        if name == "mcgonagall" and state["options"]["chess_rules"] == "complete":
            self._first_after_chess(state, moving, rng, events)
        if following == "snape" and moving and all(p["board"] == "snape" for p in state["players"]):
            # "The player who finished first in Quirrell's Challenge goes first."
            first = [s for s, p in enumerate(state["players"]) if p["facts"].get("quirrell_rank") == 1]
            if first:
                state["due"] = first[0]
                events.append({"type": "goes_first", "seat": first[0], "board": "snape"})
        if following is None and outcome.closed and name == "mirror":
            self._finish(state, [], events, reason="The Mirror of Erised is over with no winner.",
                         cause="mirror_empty")

    def _arrive(self, state: State, seat: int, name: str | None, rng: Rng, events: list[Event]) -> None:
        player = state["players"][seat]
        player.update(board=name, started=False, held=False)
        if name is None:
            return
        facts = player["facts"]
        if name == "quirrell" and facts.get("captured") is not None:
            # "Players whose playing pieces were captured in McGonagall's Challenge must wait before beginning play."
            player["held"] = True
        if name == "mirror" and facts.get("wrong_claim"):
            # "Players who play incorrect smallest and/or roundest cards in Snape's Challenge must wait 2 turns
            # after the last player begins flipping over Mirror of Erised cards to begin this game."
            player["held"] = True
        self._count_waits(state)
        events.append({"type": "moved_on", "seat": seat, "board": name, "held": player["held"],
                       "waiting": player["waiting"]})
        events.extend(self._board(name).arrive(state["boards"][name], seat, rng, player))

    def _count_waits(self, state: State) -> None:
        """The waits of the seats held at a door, as far as they are known yet.

        Captured: "The last player captured must wait 1 turn ... The second to
        last player captured must wait 2 turns, and the third to last player
        captured must wait 3 turns": ``1 + the number captured after it``.
        Wrong claim: "must wait 2 turns"."""
        captured = [p["facts"]["captured"] for p in state["players"] if p["facts"].get("captured") is not None]
        for player in state["players"]:
            if not player["held"]:
                continue
            if player["board"] == "quirrell":
                rank = player["facts"]["captured"]
                player["waiting"] = _RULES["captured_wait"] + sum(1 for c in captured if c > rank)
            elif player["board"] == "mirror":
                player["waiting"] = _RULES["wrong_claim_wait"]

    def _release(self, state: State, events: list[Event], *, force: bool) -> None:
        """End the holds whose moment has come: nobody is left on an earlier board
        and every seat on this one that is not held has begun a turn here."""
        order = [board.NAME for board in self.chain]
        released = []
        for seat, player in enumerate(state["players"]):
            if not player["held"]:
                continue
            here = order.index(player["board"])
            behind = any(p["board"] is not None and order.index(p["board"]) < here for p in state["players"])
            unstarted = any(p["board"] == player["board"] and not p["held"] and not p["started"]
                            for p in state["players"])
            if force or not (behind or unstarted):
                released.append(seat)
        if released:
            self._count_waits(state)
        for seat in released:
            player = state["players"][seat]
            player["held"] = False
            events.append({"type": "wait_begins", "seat": seat, "board": player["board"], "waiting": player["waiting"]})

    def _first_after_chess(self, state: State, moving: list[int], rng: Rng, events: list[Event]) -> None:
        """Complete chess: who begins Quirrell's Challenge when the chess game is over.

        "The team that checkmates the other team's king goes first. When neither
        player from a team was captured in McGonagall's Challenge, those players
        spin the spinner. The player with the highest spin goes first. Spinning
        the troll counts as zero." The fact ``checkmated`` marks the players
        of the team that checkmated. House rules: when no uncaptured player of
        the checkmating team is left (no player sat on it, or all were
        captured), or the game ended without a checkmate (a draw, the board's
        move cap), the uncaptured players go first the same way; tied spins
        spin again (the Quirrell's Challenge spinner, :data:`.quirrell.SPINNER`).
        A later chess game (a latecomer's, after the first game ended) does not
        reorder a Quirrell's Challenge already under way."""
        players = state["players"]
        free = [s for s in moving if players[s]["facts"].get("captured") is None]
        if not free or any(p["board"] == "quirrell" and p["started"] and s not in moving
                           for s, p in enumerate(players)):
            return
        winners = [s for s in free if players[s]["facts"].get("checkmated")]
        candidates = winners or free
        while len(candidates) > 1:
            faces = [rng.choice(quirrell.SPINNER) for _ in candidates]
            values = [0 if face == quirrell.TROLL else face for face in faces]
            events.append({"type": "spin_off",
                           "spins": [{"seat": s, "spin": str(f)} for s, f in zip(candidates, faces)]})
            best = max(values)
            candidates = [s for s, v in zip(candidates, values) if v == best]
        state["due"] = candidates[0]
        events.append({"type": "goes_first", "seat": candidates[0], "board": "quirrell"})

    def _finish(self, state: State, winners: list[int], events: list[Event], *, reason: str | None,
                cause: str | None) -> None:
        """``cause``: the result's code for programs; every value is listed in docs/rules/sorcerers-stone.md."""
        state["result"] = {"winners": winners, "scores": None,
                           "reason": reason or ("The game is won." if winners else "The game ends with no winner."),
                           "cause": cause}
        state["turn"], state["due"] = None, None
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
            "due": state["due"],
            "players": [
                {"seat": i, "board": p["board"], "waiting": p["waiting"], "held": p["held"], "started": p["started"],
                 "facts": {name: p["facts"].get(name) for name in FACTS}}
                for i, p in enumerate(state["players"])
            ],
            "boards": {name: self._board(name).view(board, seat) for name, board in state["boards"].items()},
            "winners": None if state["result"] is None else list(state["result"]["winners"]),
            "reason": None if state["result"] is None else state["result"]["reason"],
            "cause": None if state["result"] is None else state["result"].get("cause"),
            # A match stored before sprout_late_arrivals existed was played under the reading of that time.
            "options": {"sprout_late_arrivals": sprout.BEFORE_THE_OPTION, **state["options"]},
        }

    def determinise(self, view: dict[str, Any], seat: int, rng: Rng) -> State:
        """A full match consistent with ``seat``'s view: the match's own parts
        (who is where, turns, waits, facts: all public) from the view, each
        board rebuilt by its own ``determinise``."""
        variant = _BY_ID[view["variant"]]
        players = [{"board": p["board"], "waiting": p["waiting"], "held": p["held"], "started": p["started"],
                    "facts": {k: v for k, v in p["facts"].items() if v is not None}} for p in view["players"]]
        result = None
        if view["winners"] is not None:
            result = {"winners": list(view["winners"]), "scores": None, "reason": view["reason"],
                      "cause": view["cause"]}
        return {
            "variant": view["variant"],
            "mode": "chain" if variant["board"] is None else "individual",
            "seats": len(view["players"]),
            "options": clone(view["options"]),
            "rng": rng.next64(),
            "turn": view["turn"],
            "due": view["due"],
            "players": players,
            "boards": {name: self._board(name).determinise(board_view, seat, rng)
                       for name, board_view in view["boards"].items()},
            "result": result,
        }


GAME = SorcerersStone()
