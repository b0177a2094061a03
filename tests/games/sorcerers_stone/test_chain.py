"""The games in order: the match around the boards (service/games/sorcerers_stone/game.py).

"To play them in order, hook the boards together and follow the rules below."
These tests drive the match over stand-in boards (:func:`stand_in`) that keep
the same names and hand-over habits as the real ones but do exactly what a
test scripts, so each rule of "the games in order" is checked on its own:
the regular turn order across boards, every hand-over and each exception the
rule book makes (Flitwick's opening by Fire token, the waits of captured
players and wrong claimants, who goes first after chess and in Snape's
Challenge). tests/games/sorcerers_stone/test_match.py plays the real boards.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from service.engine import Rng, clone
from service.games.sorcerers_stone.board import Outcome
from service.games.sorcerers_stone.game import SorcerersStone
from tests.games.contract import PROPERTY_GAMES, check_contract, random_playout

NAMES = ("hagrid", "sprout", "flitwick", "mcgonagall", "quirrell", "snape", "mirror")


def stand_in(name: str, *, together: bool = False, gate: bool = False, opening: bool = False,
             arrival_decision: bool = False, wins: bool = False, facts=None) -> SimpleNamespace:
    """A board module for the match to drive, with the real board's name.

    Its state: ``here`` (arrived, in order), ``gone`` (completed it), ``owners``
    (seats it needs out of turn, first first), ``blocked`` (seats that cannot
    play), ``plan`` (the next ``<name>_done`` outcomes, as dicts), ``log``.

    * ``together``: seats done wait at the end until all are done, then all move
      on in the order they got done (Sprout's Fire tokens, Quirrell's path);
    * ``gate``: nobody plays until every seat is here (Snape's Challenge);
    * ``opening``: once all are here, each seat decides out of turn, highest
      Fire token first, and the last decision names the next regular turn
      (Flitwick's opening reveals);
    * ``arrival_decision``: an arriving seat decides out of turn (Sprout's area,
      McGonagall's bishop);
    * ``wins``: ``<name>_done`` wins the match (the Mirror);
    * ``facts(board, seat, rng)``: the facts a seat's ``done`` reports.
    """
    title = "Fake" + name.capitalize()

    def new_board(rng, seats, mode, options):
        return {"seats": seats, "mode": mode, "here": [], "done": [], "gone": [], "owners": [], "blocked": [],
                "plan": [], "log": [], "opening": []}

    def arrive(board, seat, rng, player):
        board["here"].append(seat)
        board["log"].append(["arrive", seat])
        if arrival_decision:
            board["owners"].append(seat)
        if opening and len(board["here"]) == board["seats"]:
            fire = {s: board_fire(board, s) for s in board["here"]}
            board["owners"] += sorted(board["here"], key=lambda s: -fire[s])
            board["opening"] = list(board["owners"])
        return [{"type": f"{name}_arrived", "seat": seat}]

    def board_fire(board, seat):
        return board.setdefault("fire", {}).get(str(seat), 0)

    def turn_owner(board):
        return board["owners"][0] if board["owners"] else None

    def can_play(board, seat):
        if gate and len(board["here"]) + len(board["gone"]) < board["seats"]:
            return False
        return seat in board["here"] and seat not in board["done"] and seat not in board["blocked"]

    def begin_turn(board, seat, rng):
        board["log"].append(["begin", seat])
        return [{"type": f"{name}_began", "seat": seat}]

    def legal_actions(board, seat):
        if board["owners"] and board["owners"][0] == seat:
            return [{"type": f"{name}_decide"}]
        return [{"type": f"{name}_go"}, {"type": f"{name}_done"}]

    def play(board, seat, action, rng):
        kind = action["type"][len(name) + 1:]
        board["log"].append([kind, seat])
        if kind == "decide":
            board["owners"].pop(0)
            if board["plan"]:
                return _outcome(board, board["plan"].pop(0))
            if opening and board["opening"] and not board["owners"]:
                return Outcome(next_turn=board["opening"][0])
            return Outcome()
        if kind == "go":
            return Outcome()
        if board["plan"]:
            return _outcome(board, board["plan"].pop(0))
        found = facts(board, seat, rng) if facts else {}
        if wins:
            return Outcome(winner=seat)
        board["done"].append(seat)
        if together:
            if len(board["done"]) < board["seats"]:
                return Outcome(facts={seat: found} if found else {})
            return _outcome(board, {"finished": list(board["done"]), "facts": {seat: found} if found else {}})
        return _outcome(board, {"finished": [seat], "facts": {seat: found} if found else {}})

    def _outcome(board, spec):
        finished = spec.get("finished", [])
        board["gone"] += finished
        board["here"] = [s for s in board["here"] if s not in finished]
        return Outcome(finished=finished, facts={int(k): v for k, v in spec.get("facts", {}).items()},
                       next_turn=spec.get("next_turn"), wait={int(k): v for k, v in spec.get("wait", {}).items()},
                       closed=len(board["gone"]) == board["seats"] or spec.get("closed", False),
                       winner=spec.get("winner"), turn_over=spec.get("turn_over", True))

    def view(board, seat):
        return clone(board)

    def determinise(board_view, seat, rng):
        return clone(board_view)

    plain = {"type": "object", "properties": {"type": {"const": ""}}, "required": ["type"],
             "additionalProperties": False}
    actions = {}
    for kind in ("go", "done", "decide"):
        schema = clone(plain)
        schema["title"] = f"{title}{kind.capitalize()}"
        schema["properties"]["type"]["const"] = f"{name}_{kind}"
        actions[f"{name}_{kind}"] = schema
    return SimpleNamespace(NAME=name, SCHEMA={"actions": actions, "view": {"type": "object", "title": title}},
                           new_board=new_board, arrive=arrive, turn_owner=turn_owner, can_play=can_play,
                           begin_turn=begin_turn, legal_actions=legal_actions, play=play, view=view,
                           determinise=determinise)


def _fire(board, seat, rng):
    """Sprout: "When a player is surrounded, that player picks up the Fire token with the number 1 on it" ..."""
    return {"fire": len(board["done"]) + 1}


def chain(**overrides) -> SorcerersStone:
    """The match over stand-ins that behave like the real boards at their hand-overs."""
    boards = {
        "hagrid": stand_in("hagrid"),
        "sprout": stand_in("sprout", together=True, arrival_decision=True, facts=_fire),
        "flitwick": stand_in("flitwick", gate=True, opening=True),
        "mcgonagall": stand_in("mcgonagall", arrival_decision=True),
        "quirrell": stand_in("quirrell", together=True, facts=lambda b, s, r: {"quirrell_rank": len(b["done"]) + 1}),
        "snape": stand_in("snape", gate=True),
        "mirror": stand_in("mirror", wins=True),
    }
    boards.update(overrides)
    return SorcerersStone([boards[name] for name in NAMES])


GAME = chain()


def new(seats: int = 4, game: SorcerersStone = GAME, **options) -> dict:
    return game.setup(game.check_options("chain", options, seats), seats, 7)


def acting(state, game=GAME) -> int:
    seats = game.to_act(state)
    assert len(seats) == 1, seats
    return next(iter(seats))


def do(state, kind: str, seat: int | None = None, game=GAME):
    """``seat`` (default: the one to act) does ``<its board>_<kind>``."""
    seat = acting(state, game) if seat is None else seat
    actions = game.legal_actions(state, seat)
    match = [a for a in actions if a["type"].endswith("_" + kind)]
    assert match, (seat, kind, actions)
    return game.apply(state, seat, match[0])


def place(state, boards: dict[int, str], due: int = 0, game=GAME):
    """Put seats on boards (as if they had arrived and begun there), then start the
    regular turn of ``due`` (or the first seat on its left that can play)."""
    state = clone(state)
    order = {name: i for i, name in enumerate(NAMES)}
    for name, board in state["boards"].items():
        board["here"] = [s for s in range(state["seats"]) if boards.get(s, "hagrid") == name]
        board["gone"] = [s for s in range(state["seats"]) if order[boards.get(s, "hagrid")] > order[name]]
        board["log"] = []
    for seat in range(state["seats"]):
        state["players"][seat]["board"] = boards.get(seat, "hagrid")
        state["players"][seat]["started"] = True
    state["turn"], state["due"] = None, due
    game._advance(state, Rng(state["rng"]), [])
    return state


def turns(state, count: int, game=GAME) -> tuple[dict, list[tuple[int, str]]]:
    """Let ``count`` regular turns go by with ``<board>_go``; return (seat, board) of each."""
    seen = []
    for _ in range(count):
        seat = acting(state, game)
        seen.append((seat, state["players"][seat]["board"]))
        state, _ = do(state, "go", seat, game)
    return state, seen


# -- the regular turn order ------------------------------------------------------------------


def test_regular_turn_order_goes_on_across_boards():
    """"Play passes to the left. This becomes the regular turn order." ... "At some
    points during the game, players may be playing on different game boards. Even
    though they are playing different parts of the game, they continue to take their
    turns in the regular turn order unless the rules state otherwise." """
    state = new(4)
    assert acting(state) == 0  # "The youngest player goes first"
    state = place(state, {0: "hagrid", 1: "sprout", 2: "hagrid", 3: "sprout"})
    state, seen = turns(state, 6)
    assert seen == [(0, "hagrid"), (1, "sprout"), (2, "hagrid"), (3, "sprout"), (0, "hagrid"), (1, "sprout")]
    # begin_turn is called on the board each seat stands on, at the start of its turn.
    assert ["begin", 1] in state["boards"]["sprout"]["log"] and ["begin", 1] not in state["boards"]["hagrid"]["log"]


def test_a_seat_that_cannot_play_passes_its_turn():
    """Snape's Challenge: "Play does not start until all players have reached Snape's
    Challenge": a seat there passes its turn while the others play on."""
    state = place(new(3), {0: "snape", 1: "quirrell", 2: "quirrell"})
    state, seen = turns(state, 4)
    assert [s for s, _ in seen] == [1, 2, 1, 2]


def test_a_follow_up_decision_keeps_the_turn():
    """Outcome.turn_over False: the same seat decides again before its turn passes."""
    state = new(2)
    state["boards"]["hagrid"]["plan"] = [{"turn_over": False}]
    state, _ = do(state, "done")
    assert acting(state) == 0
    state, _ = do(state, "go")
    assert acting(state) == 1


# -- Hagrid -> Sprout --------------------------------------------------------------------------


def test_each_player_through_the_trapdoor_moves_on_to_sprout():
    """Hagrid: "As each player reaches the trapdoor, he/she moves on to Sprout's
    Challenge: The Devil's Snare. The rest of the players continue to play Hagrid's
    Challenge." Sprout: "As players complete Hagrid's Challenge, they move immediately
    to this game. Players wait for their turn in the regular turn order, but do not
    wait for all players to reach Sprout's Challenge to begin." The arriving player
    places his/her piece at once (a decision out of turn), then the turn passes left."""
    state = new(3)
    state, events = do(state, "done")  # seat 0 reaches the trapdoor
    assert state["players"][0]["board"] == "sprout"
    assert {"type": "moved_on", "seat": 0, "board": "sprout", "held": False, "waiting": 0} in events
    assert GAME.to_act(state) == {0}  # the arrival decision: which area
    assert GAME.legal_actions(state, 0) == [{"type": "sprout_decide"}]
    state, _ = do(state, "decide")
    state, seen = turns(state, 4)
    assert seen == [(1, "hagrid"), (2, "hagrid"), (0, "sprout"), (1, "hagrid")]


# -- Sprout -> Flitwick ---------------------------------------------------------------------------


def test_flitwick_opens_by_fire_token_then_the_regular_order_resumes():
    """Sprout: "When all players have a Fire token, they move on to Flitwick's
    Challenge". Flitwick: "Play does not begin until all players have taken a Fire
    token from Sprout's Challenge. The player with the highest-numbered Fire token
    goes first ... Note: Players do NOT follow their regular turn order for this part
    of the game." ... "If no player advanced to McGonagall's Challenge, the player with
    the highest-numbered Fire token goes first. After this player moves, players
    resume their regular turn order." """
    state = place(new(3), {0: "sprout", 1: "sprout", 2: "sprout"})
    state["boards"]["flitwick"]["fire"] = {"0": 2, "1": 3, "2": 1}
    state, _ = do(state, "done", 0)  # surrounded first: Fire 1
    assert state["players"][0]["board"] == "sprout"  # waits for the others on Sprout's board
    assert state["players"][0]["facts"] == {"fire": 1}
    state, _ = do(state, "done", 1)
    state, events = do(state, "done", 2)  # the last: all move on, in the order they got their tokens
    assert [e["seat"] for e in events if e["type"] == "moved_on"] == [0, 1, 2]
    assert [p["board"] for p in state["players"]] == ["flitwick"] * 3
    # The opening, by Fire token (the stand-in's tokens), out of the regular order.
    order = []
    for _ in range(3):
        order.append(acting(state))
        state, _ = do(state, "decide")
    assert order == [1, 0, 2]
    # The board named who goes first (Outcome.next_turn): seat 1, then to its left.
    state, seen = turns(state, 4)
    assert [s for s, _ in seen] == [1, 2, 0, 1]


def test_next_turn_from_an_out_of_turn_decision_wins_over_the_turn_to_the_left():
    """Flitwick: "If one or more players advanced to McGonagall's Challenge, the first
    player to advance takes his/her turn on the McGonagall's Challenge game board.
    After this player completes his/her turn, players resume their regular turn
    order." The board names that seat in Outcome.next_turn."""
    state = place(new(4), {0: "flitwick", 1: "flitwick", 2: "mcgonagall", 3: "flitwick"})
    state["boards"]["flitwick"]["owners"] = [0]
    state["boards"]["flitwick"]["plan"] = [{"next_turn": 2}]
    state["turn"], state["due"] = None, 1
    state, _ = do(state, "decide", 0)
    state, seen = turns(state, 3)
    assert seen == [(2, "mcgonagall"), (3, "flitwick"), (0, "flitwick")]


# -- Flitwick -> McGonagall -------------------------------------------------------------------------


def test_the_finder_of_the_silver_key_chooses_a_bishop_at_once():
    """Flitwick: "As each player finds the special silver winged key, he/she moves on
    to McGonagall's Challenge: Chess." McGonagall: "The first player to complete
    Flitwick's Challenge removes the black bishop of his/her choice from the board and
    replaces it with his/her playing piece" and "Players start immediately on this
    game, keeping their regular turn order." Later boards' decisions come first."""
    state = place(new(3), {0: "flitwick", 1: "flitwick", 2: "flitwick"})
    state["boards"]["flitwick"]["plan"] = [{"finished": [0]}]
    state, _ = do(state, "done", 0)
    assert state["players"][0]["board"] == "mcgonagall"
    state["boards"]["flitwick"]["owners"] = [1]  # were a decision on Flitwick's board owed too ...
    assert GAME.to_act(state) == {0}  # ... the bishop would still be chosen first
    state, _ = do(state, "decide", 0)
    assert GAME.to_act(state) == {1}
    state, _ = do(state, "decide", 1)
    state, seen = turns(state, 3)
    assert seen == [(1, "flitwick"), (2, "flitwick"), (0, "mcgonagall")]


# -- McGonagall -> Quirrell ---------------------------------------------------------------------------


def captured_chain():
    """Four players in chess (abbreviated rules): 0, 1 and 2 get captured in that
    order while 3 is still on Flitwick's board; 3 then crosses the chessboard."""
    state = place(new(4), {0: "mcgonagall", 1: "mcgonagall", 2: "mcgonagall", 3: "flitwick"})
    plan = [{"finished": [1], "facts": {"1": {"captured": 1}}},
            {"finished": [0], "facts": {"0": {"captured": 2}}},
            {"finished": [2], "facts": {"2": {"captured": 3}}}]
    state["boards"]["mcgonagall"]["plan"] = plan
    return state


def test_captured_players_wait_after_the_last_finisher_starts_quirrell():
    """Quirrell: "Players whose playing pieces were captured in McGonagall's Challenge
    must wait before beginning play. The last player captured must wait 1 turn after
    the last player to finish McGonagall's Challenge starts this game. The second to
    last player captured must wait 2 turns, and the third to last player captured must
    wait 3 turns." A turn of waiting is one of the player's own regular turns; the
    count begins once the last player to finish chess has begun a turn on Quirrell's
    board, and the turns before that do not count."""
    state = captured_chain()
    state, _ = do(state, "done", 0)       # seat 0's move captures seat 1's Harry
    assert state["players"][1] | {"facts": None} == {"board": "quirrell", "waiting": 1, "held": True,
                                                     "started": False, "facts": None}
    state, _ = do(state, "go", 2)          # seat 1 is skipped: held
    state, _ = do(state, "go", 3)
    state, _ = do(state, "done", 0)       # seat 0 captured (the plan's second capture)
    assert [p["waiting"] for p in state["players"][:2]] == [1, 2]  # so far: 0 last (1), 1 second to last (2)
    state, _ = do(state, "done", 2)        # seat 2 captured
    assert [p["waiting"] for p in state["players"][:3]] == [2, 3, 1]
    assert [p["held"] for p in state["players"][:3]] == [True] * 3
    state, events = do(state, "done", 3)  # seat 3 finds the key and arrives in chess
    assert state["players"][3]["board"] == "mcgonagall"
    state, _ = do(state, "decide", 3)     # chooses a bishop
    # Only seat 3 plays while the others are held (their turns do not count).
    state, seen = turns(state, 2)
    assert seen == [(3, "mcgonagall"), (3, "mcgonagall")]
    assert [p["waiting"] for p in state["players"][:3]] == [2, 3, 1]
    state, events = do(state, "done", 3)  # seat 3 moves Harry off the far edge: the last to finish
    assert state["players"][3]["board"] == "quirrell"
    # Seats 0, 1 and 2 are held: their turns are passed over uncounted; seat 3
    # begins Quirrell's Challenge at once, and from then on the waiting counts.
    assert [e["type"] for e in events if e["type"] in ("waited", "wait_begins")] == ["wait_begins"] * 3
    assert acting(state) == 3 and state["players"][3]["started"]
    assert not any(p["held"] for p in state["players"])
    assert [p["waiting"] for p in state["players"]] == [2, 3, 1, 0]
    state, seen = turns(state, 6)
    # Round 1: seats 0 (2 -> 1), 1 (3 -> 2), 2 (1 -> 0) sit out; 3 plays.
    # Round 2: seat 2 plays; 0 and 1 still sit out. Round 3: 0 plays; then 2, 3.
    assert seen == [(3, "quirrell"), (3, "quirrell"), (2, "quirrell"), (3, "quirrell"), (0, "quirrell"),
                    (2, "quirrell")]
    state, seen = turns(state, 4)
    assert [s for s, _ in seen] == [3, 0, 1, 2]


def test_waiting_turns_are_shown_and_announced():
    """The waits are part of every view, and each turn sat out is an event."""
    state = place(new(2), {0: "quirrell", 1: "mcgonagall"})
    state["players"][0].update(waiting=2)
    state["turn"] = 1
    state, events = do(state, "go", 1)
    assert {"type": "waited", "seat": 0, "board": "quirrell", "left": 1} in events
    view = GAME.view(state, 1)
    assert view["players"][0]["waiting"] == 1 and view["players"][0]["board"] == "quirrell"


def test_when_everyone_was_captured_the_waits_count_once_chess_is_empty():
    """House rule: if nobody finishes McGonagall's Challenge (every Harry captured),
    the waits count from the moment the chessboard is empty."""
    state = place(new(2), {0: "mcgonagall", 1: "mcgonagall"})
    state["boards"]["mcgonagall"]["plan"] = [{"finished": [1], "facts": {"1": {"captured": 1}}},
                                             {"finished": [0], "facts": {"0": {"captured": 2}}}]
    state, _ = do(state, "done", 0)
    state, events = do(state, "done", 0)
    # Seat 0, captured last, waits 1 turn; seat 1 waits 2: seat 1 sits out, seat 0
    # sits out, seat 1 sits out, then seat 0 begins.
    waited = [e["seat"] for e in events if e["type"] == "waited"]
    assert waited == [1, 0, 1]
    assert [(p["held"], p["waiting"]) for p in state["players"]] == [(False, 0), (False, 0)]
    assert acting(state) == 0


def test_complete_chess_the_checkmating_team_goes_first():
    """Rules for playing chess: "When playing a complete game of Chess, play does not
    begin on Quirrell's Challenge until the game is over. ... The team that checkmates
    the other team's king goes first." """
    state = place(new(3, chess_rules="complete"), {0: "mcgonagall", 1: "mcgonagall", 2: "mcgonagall"})
    state["boards"]["mcgonagall"]["plan"] = [
        {"finished": [0, 1, 2], "facts": {"0": {"checkmated": False}, "1": {"checkmated": False},
                                          "2": {"checkmated": True}}}]
    state, events = do(state, "done", 0)
    assert {"type": "goes_first", "seat": 2, "board": "quirrell"} in events
    state, seen = turns(state, 3)
    assert [s for s, _ in seen] == [2, 0, 1]


def test_complete_chess_two_uncaptured_winners_spin():
    """"When neither player from a team was captured in McGonagall's Challenge, those
    players spin the spinner. The player with the highest spin goes first. Spinning
    the troll counts as zero." Captured players wait as in the abbreviated game."""
    state = place(new(4, chess_rules="complete"), {s: "mcgonagall" for s in range(4)})
    state["boards"]["mcgonagall"]["plan"] = [
        {"finished": [3], "facts": {"3": {"captured": 1}}},
        {"finished": [0, 1, 2], "facts": {"0": {"checkmated": True}, "1": {"checkmated": False},
                                          "2": {"checkmated": True}}}]
    state, _ = do(state, "done", 0)
    assert state["players"][3]["held"]
    state, events = do(state, "done", 1)
    spins = [e for e in events if e["type"] == "spin_off"]
    assert spins and {s["seat"] for s in spins[0]["spins"]} == {0, 2}
    first = next(e["seat"] for e in events if e["type"] == "goes_first")
    last = spins[-1]["spins"]
    value = {s["seat"]: 0 if s["spin"] == "troll" else int(s["spin"]) for s in last}
    assert value[first] == max(value.values()) and list(value.values()).count(max(value.values())) == 1
    # The regular order goes on to the left of the first player. Seat 3 (the last
    # captured: waits 1) is held until 0, 1 and 2 have all begun Quirrell's
    # Challenge, then sits out one turn of its own.
    expected = {0: [0, 1, 2, 0, 1, 2, 3], 2: [2, 0, 1, 2, 0, 1, 2, 3]}[first]
    state, seen = turns(state, len(expected))
    assert [s for s, _ in seen] == expected


def test_complete_chess_house_rule_when_the_winning_team_has_nobody_left():
    """House rule: if no uncaptured player is on the checkmating team (the board's
    own side mated, or its players were captured), the other team's uncaptured
    players go first the same way."""
    state = place(new(2, chess_rules="complete"), {0: "mcgonagall", 1: "mcgonagall"})
    state["boards"]["mcgonagall"]["plan"] = [
        {"finished": [0, 1], "facts": {"0": {"checkmated": False}, "1": {"checkmated": False}}}]
    state, events = do(state, "done", 0)
    assert any(e["type"] == "spin_off" for e in events)
    assert acting(state) == next(e["seat"] for e in events if e["type"] == "goes_first")


# -- Quirrell -> Snape ---------------------------------------------------------------------------------


def test_snape_begins_when_all_are_there_with_the_first_from_quirrell():
    """Quirrell: "When all players have reached the door at the end of the path, they
    move on to Snape's Challenge". Snape: "Play does not start until all players have
    reached Snape's Challenge." ... "The player who finished first in Quirrell's
    Challenge goes first." """
    state = place(new(3), {0: "quirrell", 1: "quirrell", 2: "quirrell"})
    state, _ = do(state, "done", 0)
    state, seen = turns(state, 2)
    assert [s for s, _ in seen] == [1, 2]
    state, _ = do(state, "done", 1)       # seat 0 waits at the end of the path, seat 1 too
    state, _ = do(state, "go", 2)
    state, events = do(state, "done", 2)  # all there: rank 1 (seat 0) begins Snape's Challenge
    assert [p["facts"]["quirrell_rank"] for p in state["players"]] == [1, 2, 3]
    assert [p["board"] for p in state["players"]] == ["snape"] * 3
    assert {"type": "goes_first", "seat": 0, "board": "snape"} in events
    state, seen = turns(state, 3)
    assert seen == [(0, "snape"), (1, "snape"), (2, "snape")]


# -- Snape -> the Mirror of Erised -----------------------------------------------------------------------


def test_wrong_claimants_wait_two_turns_after_the_last_begins_the_mirror():
    """Snape: "If Player 1 did not have the lowest-numbered S and lowest-number R cards,
    then he/she does not continue to play Snape's Challenge, and must wait to move on
    to the Mirror of Erised". Mirror: "As players complete Snape's Challenge, they
    begin immediately on the Mirror of Erised, keeping their regular turn order." ...
    "Players who play incorrect smallest and/or roundest cards in Snape's Challenge
    must wait 2 turns after the last player begins flipping over Mirror of Erised
    cards to begin this game." """
    state = place(new(3), {0: "snape", 1: "snape", 2: "snape"})
    state["boards"]["snape"]["plan"] = [{"finished": [0], "facts": {"0": {"wrong_claim": True}}},
                                        {"finished": [1]}, {"finished": [2]}]
    state, _ = do(state, "done", 0)  # seat 0's claim is wrong
    assert state["players"][0] | {"facts": None} == {"board": "mirror", "waiting": 2, "held": True,
                                                     "started": False, "facts": None}
    state, _ = do(state, "done", 1)  # seat 1 completes Snape's Challenge
    state, seen = turns(state, 2)
    assert seen == [(2, "snape"), (1, "mirror")]
    state, _ = do(state, "done", 2)  # seat 2, the last, completes it
    assert state["players"][0]["held"]
    state, seen = turns(state, 1)    # seat 0 held (turn not counted), seat 1 flips
    assert seen == [(1, "mirror")]
    state, seen = turns(state, 1)    # seat 2 begins flipping: the last player
    assert seen == [(2, "mirror")]
    assert not state["players"][0]["held"]
    state, seen = turns(state, 4)    # seat 0 sits out two turns of its own
    assert [s for s, _ in seen] == [1, 2, 1, 2]
    state, seen = turns(state, 1)
    assert seen == [(0, "mirror")]


def test_the_first_to_reveal_the_stone_wins_the_match():
    """Mirror: "If this player reveals the Sorcerer's Stone, he/she wins the game." """
    state = place(new(3), {0: "snape", 1: "mirror", 2: "snape"})
    state["turn"] = 1
    state, events = do(state, "done", 1)
    assert GAME.result(state)["winners"] == [1]
    assert events[-1] == {"type": "game_over", "winners": [1]}
    assert GAME.to_act(state) == set() and GAME.view(state, 0)["winners"] == [1]


# -- waiting, stalls ---------------------------------------------------------------------------------------


def test_a_board_may_make_a_seat_lose_turns():
    """Snape: "LOSE YOUR TURN--The player loses a turn." (Outcome.wait)"""
    state = place(new(3), {0: "snape", 1: "snape", 2: "snape"})
    state["boards"]["snape"]["plan"] = [{"wait": {"1": 1}}]
    state, events = do(state, "done", 0)
    assert state["players"][1]["waiting"] == 0 and {"type": "waited", "seat": 1, "board": "snape", "left": 0} in events
    state, seen = turns(state, 3)
    assert [s for s, _ in seen] == [2, 0, 1]


def test_a_round_where_nobody_can_play_ends_the_holds_then_the_match():
    """No stalls: when a full round passes and nobody can play, every hold ends; if
    still nobody can play the match ends with no winner (a safety net)."""
    state = place(new(2), {0: "quirrell", 1: "quirrell"})
    state["players"][0].update(held=True, waiting=1, facts={"captured": 1})
    state["players"][1]["started"] = False
    state["boards"]["quirrell"]["blocked"] = [1]
    state["turn"], state["due"] = None, 0
    events = []
    GAME._advance(state, Rng(1), events)
    assert [e["type"] for e in events] == ["wait_begins", "waited", "turn_began", "quirrell_began"]
    assert state["turn"] == 0
    state["boards"]["quirrell"]["blocked"] = [0, 1]
    state, events = do(state, "go", 0)
    assert GAME.result(state) == {"winners": [], "scores": None,
                                  "reason": "Nobody can play on: the match ends with no winner.", "cause": "stalled"}


# -- the view and determinise --------------------------------------------------------------------------------


def test_the_view_shows_where_everyone_is():
    """Issue #5: "a player's view shows which board each player is on and what that
    player may see"."""
    state = place(new(3), {0: "hagrid", 1: "sprout", 2: "flitwick"})
    state["players"][1]["facts"] = {"fire": 2}
    view = GAME.view(state, 1)
    assert [p["board"] for p in view["players"]] == ["hagrid", "sprout", "flitwick"]
    assert view["players"][1]["facts"] == {"fire": 2, "captured": None, "checkmated": None, "quirrell_rank": None,
                                           "wrong_claim": None}
    assert set(view["boards"]) == set(NAMES)


def test_determinise_keeps_the_match_and_rebuilds_each_board():
    state = captured_chain()
    state, _ = do(state, "done", 0)
    view = GAME.view(state, 2)
    rebuilt = GAME.determinise(view, 2, Rng(5))
    assert GAME.view(rebuilt, 2) == view
    assert rebuilt["players"] == state["players"]


# -- contract and random chains over the stand-ins ---------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_contract_over_stand_ins(seats):
    check_contract(GAME, "chain", seats, range(3))


def test_random_chains_over_stand_ins_always_end_with_a_winner():
    """The match machinery alone: random choices among go/done/decide always reach a
    winner, with seats captured and wrong claims at random (stand-in facts)."""
    def captured(board, seat, rng):
        if rng.chance(2, 3):
            return {}
        board.setdefault("captured", []).append(seat)
        return {"captured": len(board["captured"])}
    game = chain(
        mcgonagall=stand_in("mcgonagall", arrival_decision=True, facts=captured),
        snape=stand_in("snape", gate=True, facts=lambda b, s, r: {"wrong_claim": True} if r.chance(1, 3) else {}),
    )
    for seed in range(max(PROPERTY_GAMES // 4, 10)):
        seats = 2 + seed % 3
        playout = random_playout(game, "chain", seats, seed, max_actions=20000)
        result = game.result(playout.final)
        assert result is not None and len(result["winners"]) == 1, seed
