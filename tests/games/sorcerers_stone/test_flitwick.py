"""GAME 3 - Flitwick's Challenge: The Winged Keys
(service/games/sorcerers_stone/flitwick.py), checked against the rule book
/work/shared/seeds/002_5ac5154540885c00.txt and the house rules in
/tmp/ss_docs/flitwick.md (merged into docs/rules/sorcerers-stone.md).

The individual game is driven through ``GAME``; the games-in-order opening
(reveals by Fire token, placement, the hand-over to the regular turn order)
through the board functions, by a small driver that stands in for the match.
"""

from __future__ import annotations

import json
import time

import pytest

from service.engine import IllegalAction, Rng, clone
from service.games.sorcerers_stone import GAME
from service.games.sorcerers_stone import flitwick as fw
from tests.games.contract import PROPERTY_GAMES, check_contract, random_playout
from tests.games.sorcerers_stone.helpers import board_types, check_board_schema

SPACES = fw.SIZE * fw.SIZE


# -- helpers ----------------------------------------------------------------------------


def at(*names: str) -> int:
    """A bitmask of spaces."""
    return sum(1 << fw.INDEX[n] for n in names)


def names(mask: int) -> set[str]:
    return {fw.SQUARES[i] for i in range(SPACES) if mask >> i & 1}


def within(name: str, distance: int) -> set[str]:
    row, col = divmod(fw.INDEX[name], fw.SIZE)
    return {fw.SQUARES[j] for j in range(SPACES)
            if max(abs(j // fw.SIZE - row), abs(j % fw.SIZE - col)) <= distance}


def brute_ends(start: int, steps: int, blocked: int) -> int:
    """Every simple king walk of exactly ``steps`` from ``start``, enumerated one by one."""
    ends = 0

    def walk(pos, left, visited):
        nonlocal ends
        if left == 0:
            ends |= 1 << pos
            return
        row, col = divmod(pos, fw.SIZE)
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                r, c = row + dr, col + dc
                if (dr or dc) and 0 <= r < fw.SIZE and 0 <= c < fw.SIZE and not visited >> (r * fw.SIZE + c) & 1:
                    walk(r * fw.SIZE + c, left - 1, visited | 1 << (r * fw.SIZE + c))

    walk(start, steps, blocked | 1 << start)
    return ends


def new_game(seats: int, seed: int = 1) -> dict:
    return GAME.setup(GAME.check_options("flitwick", {}, seats), seats, seed)


def act(state: dict, action: dict) -> tuple[dict, list[dict]]:
    (seat,) = GAME.to_act(state)
    return GAME.apply(state, seat, action)


def placed(seats: int, squares: list[str], seed: int = 1) -> tuple[dict, list[dict]]:
    """An individual game after seats 0, 1, ... placed their pieces on ``squares``."""
    state = new_game(seats, seed)
    events = []
    for name in squares:
        state, events = act(state, {"type": "flitwick_place", "square": name})
    return state, events


def playing_board(pieces: list[str | None], *, mover: int = 0, spin: int = 1, mode: str = "individual",
                  silver: str = "f6", removed: tuple[str, ...] = ()) -> dict:
    """A hand-built board in the ``play`` phase."""
    board = fw.new_board(Rng(7), len(pieces), mode, {})
    board["keys"] = [fw.GOLD] * SPACES
    board["keys"][fw.INDEX[silver]] = fw.SILVER
    for name in removed:
        board["keys"][fw.INDEX[name]] = None
    board["pieces"] = [None if p is None else fw.INDEX[p] for p in pieces]
    board["here"] = [s for s, p in enumerate(pieces) if p is not None]
    board["fire"] = [None] * len(pieces) if mode == "individual" else [len(pieces) - s for s in range(len(pieces))]
    board["phase"], board["mover"], board["spin"] = "play", mover, spin
    return board


def chain_board(fires: list[int | None], seed: int = 3) -> dict:
    rng = Rng(seed)
    board = fw.new_board(rng, len(fires), "chain", {})
    for seat, fire in enumerate(fires):
        fw.arrive(board, seat, rng, {"board": "flitwick", "waiting": 0, "facts": {"fire": fire}})
    return board


def silver_at(board: dict) -> int:
    return board["keys"].index(fw.SILVER)


def moves(board: dict, seat: int) -> set[str]:
    return {a["to"] for a in fw.legal_actions(board, seat) if a["type"] == "flitwick_move"}


# -- set-up and data ---------------------------------------------------------------------


def test_set_up_lays_35_gold_keys_and_the_silver_key_face_down_one_per_space():
    """Components: "35 Winged Key Tokens", "1 Special (Silver) Winged Key Token".
    SET UP: "Mix up all winged key tokens and place them face down on the board,
    one token per space." DESIGN.md: "Flitwick's board is 6 x 6"."""
    assert (fw.DATA["size"], fw.DATA["keys"]) == (6, {"gold": 35, "silver": 1})
    board = fw.new_board(Rng(5), 3, "individual", {})
    assert len(board["keys"]) == 36
    assert board["keys"].count(fw.GOLD) == 35 and board["keys"].count(fw.SILVER) == 1
    places = {silver_at(fw.new_board(Rng(seed), 2, "individual", {})) for seed in range(300)}
    assert len(places) > 30, "the keys are mixed up"
    view = fw.view(board, None)
    assert [s["square"] for s in view["squares"]] == fw.SQUARES
    assert fw.SQUARES[:7] == ["a1", "b1", "c1", "d1", "e1", "f1", "a2"]
    assert all(s["key"] == "face_down" for s in view["squares"]) and view["face_down"] == 36


def test_spinner_faces_and_space_names_are_data_and_schema_agree():
    """House rule (the scan does not list the spinner's Flitwick-side faces): 1 to 6,
    from flitwick.json. The schema's space enum is the board's own naming."""
    assert fw.SPINNER == fw.DATA["spinner"] == [1, 2, 3, 4, 5, 6]
    for kind in ("flitwick_reveal", "flitwick_place"):
        assert fw.SCHEMA["actions"][kind]["properties"]["square"]["enum"] == fw.SQUARES
    assert fw.SCHEMA["actions"]["flitwick_move"]["properties"]["to"]["enum"] == fw.SQUARES
    assert fw.SQUARES[0] == "a1" and fw.SQUARES[5] == "f1" and fw.SQUARES[35] == "f6"


# -- the individual game ----------------------------------------------------------------------


def test_individually_the_youngest_places_first_then_the_others_then_the_youngest_spins():
    """RULES FOR PLAYING THE GAMES INDIVIDUALLY, FLITWICK'S CHALLENGE: "The youngest
    player places his/her playing piece on any space on the game board. The remaining
    players place their playing pieces on any space on the game board. 3. The youngest
    player goes first. 4. Play passes to the left." Seat 0 is the youngest player;
    house rule: two pieces may not share a space."""
    state = new_game(3)
    assert GAME.to_act(state) == {0} and state["turn"] is None
    assert GAME.view(state, None)["boards"]["flitwick"]["phase"] == "place"
    first = GAME.legal_actions(state, 0)
    assert [a["square"] for a in first] == fw.SQUARES and {a["type"] for a in first} == {"flitwick_place"}
    state, _ = act(state, {"type": "flitwick_place", "square": "c3"})
    assert GAME.to_act(state) == {1}
    assert "c3" not in {a["square"] for a in GAME.legal_actions(state, 1)}
    with pytest.raises(IllegalAction):
        GAME.apply(state, 1, {"type": "flitwick_place", "square": "c3"})
    state, _ = act(state, {"type": "flitwick_place", "square": "d4"})
    state, events = act(state, {"type": "flitwick_place", "square": "a1"})
    spins = [e for e in events if e["type"] == "flitwick_spin"]
    assert state["turn"] == 0 and GAME.to_act(state) == {0} and spins[0]["seat"] == 0
    view = GAME.view(state, 2)["boards"]["flitwick"]
    assert (view["phase"], view["mover"], view["spin"]) == ("play", 0, spins[0]["spin"])
    assert [p["square"] for p in view["players"]] == ["c3", "d4", "a1"]
    assert all(s["key"] == "face_down" for s in view["squares"]), "placing turns nothing over"
    state, events = act(state, GAME.legal_actions(state, 0)[0])
    if GAME.result(state) is None:
        assert state["turn"] == 1 and [e["seat"] for e in events if e["type"] == "flitwick_spin"] == [1]


def test_a_move_is_exactly_the_spin_in_any_direction():
    """SEARCHING FOR THE SPECIAL SILVER WINGED KEY: "1. The first player spins the
    spinner and moves the number of spaces shown. 2. Players may move in any direction
    (horizontally, vertically, and/or diagonally). 3. Players must move the full number
    of spaces that they spin, and may not visit the same space twice on a single turn."
    """
    board = playing_board(["c3", None], spin=1)
    assert moves(board, 0) == within("c3", 1) - {"c3"}
    board = playing_board(["a1", None], spin=2)
    # a2, b1 and b2 are ends of two-step walks too (a1-b1-a2 ...); a1 itself is never one.
    assert moves(board, 0) == within("a1", 2) - {"a1"}
    board = playing_board(["c3", None], spin=6)
    assert moves(board, 0) == set(fw.SQUARES) - {"c3"}
    assert fw.legal_actions(board, 1) == []


def test_walks_never_revisit_a_space_nor_enter_a_piece():
    """"may not visit the same space twice on a single turn": the board's search
    agrees with an enumeration of every walk, one by one, over random positions
    with other pieces in the way (house rule: a piece cannot pass through or stop
    on a space another piece stands on)."""
    chooser = Rng(11)
    for _ in range(250):
        start = chooser.below(SPACES)
        others = [i for i in range(SPACES) if i != start]
        chooser.shuffle(others)
        blocked = sum(1 << i for i in others[:chooser.below(9)])
        steps = chooser.choice(fw.SPINNER)
        ends = fw.walk_ends(start, steps, blocked)
        assert ends == brute_ends(start, steps, blocked)
        assert not ends >> start & 1 and not ends & blocked


def test_other_pieces_block_the_way():
    """House rule: "Two pieces may not share the same square" (the rule book says so of
    McGonagall's board; Flitwick's is silent), so a piece neither stops on nor passes
    through a space another piece stands on."""
    board = playing_board(["a1", "b1", "b2"], spin=1)
    assert moves(board, 0) == {"a2"}
    board["spin"] = 2
    assert moves(board, 0) == {"a3", "b3"}
    board["spin"] = 3
    # a1-a2-a3 then a4, b3, b4; a1-a2-b3 then a3, a4, b4, c2, c3, c4.
    assert moves(board, 0) == {"a3", "a4", "b3", "b4", "c2", "c3", "c4"}


def test_a_spin_that_cannot_be_completed_without_revisiting_leaves_the_piece_where_it_is():
    """The issue's odd corner, "a spin that cannot be completed without revisiting a
    square": "Players must move the full number of spaces that they spin, and may not
    visit the same space twice". House rule: when no walk of exactly the spin exists,
    the only action is ``flitwick_stay``: the piece stays, nothing is turned over (it
    did not "finish moving"), and play passes to the left."""
    # Walled into a1 and a2, a spin of 2 would have to come back: no walk of 2 exists.
    assert names(fw.walk_ends(fw.INDEX["a1"], 1, at("a3", "b1", "b2", "b3"))) == {"a2"}
    assert fw.walk_ends(fw.INDEX["a1"], 2, at("a3", "b1", "b2", "b3")) == 0
    # Four players: three pieces hem the fourth into the corner, whatever the spin.
    state, events = placed(4, ["a1", "a2", "b1", "b2"])
    assert state["turn"] == 0
    assert GAME.legal_actions(state, 0) == [{"type": "flitwick_stay"}]
    keys_before = list(state["boards"]["flitwick"]["keys"])
    state, events = act(state, {"type": "flitwick_stay"})
    assert events[0] == {"type": "flitwick_stayed", "seat": 0, "square": "a1"}
    board = state["boards"]["flitwick"]
    assert board["pieces"][0] == fw.INDEX["a1"] and board["keys"] == keys_before
    assert state["turn"] == 1 and GAME.result(state) is None
    assert {"type": "flitwick_spin", "seat": 1, "spin": state["boards"]["flitwick"]["spin"]} in events
    # Once a neighbour has moved away, the corner piece has a way out again.
    board = state["boards"]["flitwick"]
    board["pieces"][1] = fw.INDEX["f6"]
    board["mover"], board["spin"] = 0, 2
    assert moves(board, 0) == {"a3", "b3"}


def test_stopping_on_a_gold_key_removes_it_and_an_empty_space_flips_nothing():
    """"4. When players finish moving, they flip over the token on the space they
    occupy. 5. When a player turns over a token that is a "normal" key, that player
    removes that token from the board." A space whose key was removed holds nothing
    to flip."""
    board = playing_board(["c3", "f1"], spin=1, removed=("c4",))
    out = fw.play(board, 0, {"type": "flitwick_move", "to": "d4"}, Rng(1))
    assert board["keys"][fw.INDEX["d4"]] is None and board["pieces"][0] == fw.INDEX["d4"]
    assert out.events == [{"type": "flitwick_moved", "seat": 0, "from": "c3", "to": "d4", "spin": 1, "key": "gold"}]
    assert (out.winner, out.finished, out.turn_over, board["mover"], board["spin"]) == (None, [], True, None, None)
    board["mover"], board["spin"] = 0, 1
    out = fw.play(board, 0, {"type": "flitwick_move", "to": "c4"}, Rng(1))
    assert out.events[0]["key"] is None and board["keys"].count(None) == 2
    assert fw.view(board, None)["squares"][fw.INDEX["c4"]]["key"] == "none"


def test_individually_the_first_to_find_the_silver_key_wins():
    """RULES FOR PLAYING THE GAMES INDIVIDUALLY: "5. The first player to find the
    special silver winged key wins the game." The silver key then lies face up."""
    state, _ = placed(2, ["c3", "f1"], seed=4)
    board = state["boards"]["flitwick"]
    target = GAME.legal_actions(state, 0)[0]["to"]
    board["keys"] = [fw.GOLD] * SPACES
    board["keys"][fw.INDEX[target]] = fw.SILVER
    state, events = act(state, {"type": "flitwick_move", "to": target})
    assert GAME.result(state)["winners"] == [0]
    assert {"type": "game_over", "winners": [0]} in events
    view = GAME.view(state, 1)["boards"]["flitwick"]
    assert (view["phase"], view["winner"]) == ("over", 0)
    assert view["squares"][fw.INDEX[target]]["key"] == "silver" and view["face_down"] == 35


# -- the games in order: the opening by Fire token --------------------------------------------


def test_nothing_happens_until_every_player_has_a_fire_token():
    """PLAYING THE GAME: "1. Play does not begin until all players have taken a Fire
    token from Sprout's Challenge." """
    rng = Rng(1)
    board = fw.new_board(rng, 3, "chain", {})
    for seat, fire in ((2, 1), (0, 2)):
        fw.arrive(board, seat, rng, {"facts": {"fire": fire}})
        assert fw.turn_owner(board) is None and board["phase"] == "waiting"
        assert not fw.can_play(board, seat) and fw.legal_actions(board, seat) == []
    events = fw.arrive(board, 1, rng, {"facts": {"fire": 3}})
    assert events[-1] == {"type": "flitwick_opening", "reveals": [{"seat": 1, "keys": 3}, {"seat": 0, "keys": 2},
                                                                  {"seat": 2, "keys": 1}]}
    assert fw.turn_owner(board) == 1 and board["phase"] == "reveal"


def test_the_opening_reveals_by_fire_token_then_placement_then_the_highest_fire_token_goes_first():
    """"2. The player with the highest-numbered Fire token goes first, by turning over
    the number of winged key tokens indicated on his/her Fire token. When this player is
    done, play passes to the player with the second-highest Fire token. ... Note: Players
    do NOT follow their regular turn order for this part of the game. 3. When a player
    turns over a winged key token that shows a "normal" key, that player removes that
    key from the board." TAKING TURNS: "1. Beginning with the player with the
    highest-numbered Fire token, all players who have not advanced to McGonagall's
    Challenge place their playing pieces on any space on the game board. ... 3. If no
    player advanced to McGonagall's Challenge, the player with the highest-numbered Fire
    token goes first." House rule: placement goes on in Fire token order."""
    board = chain_board([2, 4, 1, 3])
    board["keys"] = [fw.GOLD] * SPACES
    board["keys"][fw.INDEX["f6"]] = fw.SILVER
    rng = Rng(2)
    revealers = []
    for name in fw.SQUARES[:10]:
        seat = fw.turn_owner(board)
        revealers.append(seat)
        assert not fw.can_play(board, seat)
        assert {a["square"] for a in fw.legal_actions(board, seat)} == {
            fw.SQUARES[i] for i in range(SPACES) if board["keys"][i] is not None}
        assert all(fw.legal_actions(board, s) == [] for s in range(4) if s != seat)
        out = fw.play(board, seat, {"type": "flitwick_reveal", "square": name}, rng)
        assert out.events[0] == {"type": "flitwick_revealed", "seat": seat, "square": name, "key": "gold"}
        assert out.next_turn is None and not out.finished
    assert revealers == [1] * 4 + [3] * 3 + [0] * 2 + [2]
    assert board["keys"].count(None) == 10 and board["phase"] == "place"
    placers, last = [], None
    for name in ("a1", "b1", "c1", "d1"):
        seat = fw.turn_owner(board)
        placers.append(seat)
        last = fw.play(board, seat, {"type": "flitwick_place", "square": name}, rng)
    assert placers == [1, 3, 0, 2]
    assert last.next_turn == 1 and board["phase"] == "play" and fw.turn_owner(board) is None
    assert all(fw.can_play(board, s) for s in range(4))
    assert fw.begin_turn(board, 1, rng)[0]["seat"] == 1 and board["spin"] in fw.SPINNER


def test_finding_the_silver_key_in_the_opening_advances_and_the_first_to_advance_plays_next():
    """"4. When a player turns over the special winged key token, that player advances
    to McGonagall's Challenge. 5. The other players close their eyes, and the player who
    found the special winged key places it back on the board, face down." TAKING TURNS:
    "2. If one or more players advanced to McGonagall's Challenge, the first player to
    advance takes his/her turn on the McGonagall's Challenge game board. After this player
    completes his/her turn, players resume their regular turn order." House rules: the
    finder turns over no more keys; the silver key takes a random face-down place."""
    board = chain_board([1, 3, 2])
    board["keys"] = [fw.GOLD] * SPACES
    board["keys"][fw.INDEX["b1"]] = fw.SILVER
    rng = Rng(5)
    out = fw.play(board, 1, {"type": "flitwick_reveal", "square": "a1"}, rng)
    assert out.finished == []
    out = fw.play(board, 1, {"type": "flitwick_reveal", "square": "b1"}, rng)
    assert out.finished == [1] and out.events[0]["key"] == "silver"
    assert {"type": "flitwick_silver_hidden", "seat": 1} in out.events
    assert board["advanced"] == [1] and board["here"] == [0, 2] and fw.turn_owner(board) == 2
    assert board["keys"].count(fw.SILVER) == 1 and board["keys"].count(None) == 1, "b1 stays face down"
    revealers = []
    while board["phase"] == "reveal":
        seat = fw.turn_owner(board)
        revealers.append(seat)
        square = next(fw.SQUARES[i] for i, k in enumerate(board["keys"]) if k == fw.GOLD)
        fw.play(board, seat, {"type": "flitwick_reveal", "square": square}, rng)
    assert revealers == [2, 2, 0]
    assert board["phase"] == "place" and board["placing"] == [2, 0]
    fw.play(board, 2, {"type": "flitwick_place", "square": "a6"}, rng)
    out = fw.play(board, 0, {"type": "flitwick_place", "square": "b6"}, rng)
    assert out.next_turn == 1 and not fw.can_play(board, 1) and fw.can_play(board, 0)


def test_if_everyone_advances_in_the_opening_the_board_closes():
    """Two players who both find the silver key while turning over their Fire tokens'
    keys have both advanced: nobody is left to place ("all players who have not
    advanced ... place"), the board closes and the first to advance plays next."""
    board = chain_board([4, 2])
    rng = Rng(9)
    for seat in (0, 1):
        board["keys"] = [None if k is None else fw.GOLD for k in board["keys"]]
        board["keys"][fw.SQUARES.index("f6")] = fw.SILVER
        out = fw.play(board, seat, {"type": "flitwick_reveal", "square": "f6"}, rng)
        assert out.finished == [seat]
    assert (out.closed, out.next_turn, board["phase"], board["advanced"]) == (True, 0, "over", [0, 1])
    assert fw.turn_owner(board) is None


def test_finding_the_silver_key_on_a_turn_moves_the_finder_on_and_the_last_finder_closes_the_board():
    """SEARCHING ...: "6. When a player turns over the special silver winged key token,
    that player advances to McGonagall's Challenge. 7. The other players close their
    eyes, and the player who found the special silver winged key places it back on the
    board, face down." ADVANCING: "As each player finds the special silver winged key,
    he/she moves on to McGonagall's Challenge: Chess." """
    board = playing_board(["c3", "e5"], spin=1, mode="chain", silver="d4")
    out = fw.play(board, 0, {"type": "flitwick_move", "to": "d4"}, Rng(3))
    assert out.finished == [0] and not out.closed and out.winner is None
    assert board["pieces"][0] is None and board["here"] == [1] and board["keys"].count(fw.SILVER) == 1
    assert board["keys"].count(None) == 0, "the silver key's space keeps a face-down key"
    view = fw.view(board, 0)
    assert view["players"][0] == {"seat": 0, "here": False, "square": None, "fire": 2}
    assert "silver" not in json.dumps(view)
    fw.begin_turn(board, 1, Rng(4))
    board["spin"] = 1
    target = fw.SQUARES[silver_at(board)]
    board["pieces"][1] = next(i for i in fw._NEIGHBOURS[silver_at(board)])
    out = fw.play(board, 1, {"type": "flitwick_move", "to": target}, Rng(3))
    assert (out.finished, out.closed, board["phase"], board["advanced"]) == ([1], True, "over", [0, 1])


def test_the_silver_key_goes_back_to_a_uniformly_random_face_down_place():
    """House rule for "the player who found the special winged key places it back on the
    board, face down" (the issue: "its new place is hidden from every view"): the engine
    puts it at a uniformly random face-down place, its own included, never on an empty
    space (a new token there would give it away)."""
    counts = {}
    removed = tuple(fw.SQUARES[6:])
    for seed in range(1200):
        board = playing_board(["f2", "e2"], spin=1, mode="chain", silver="f1", removed=removed)
        fw.play(board, 0, {"type": "flitwick_move", "to": "f1"}, Rng(seed))
        place = fw.SQUARES[silver_at(board)]
        counts[place] = counts.get(place, 0) + 1
        assert board["keys"].count(None) == 30
    assert set(counts) == set(fw.SQUARES[:6])
    assert min(counts.values()) > 1200 / 6 * 0.7


# -- hidden information and determinisation ---------------------------------------------------------


def _states(playout):
    return [playout.initial] + [step.state_after for step in playout.steps]


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_no_view_tells_where_the_silver_key_lies(seats):
    """Hidden information: a face-down key never shows which key it is, to anyone. Moving
    the silver key to any other face-down space changes no view (every seat and the
    spectator) and no event says where it lies until it is turned over."""
    for seed in range(max(2, PROPERTY_GAMES // 40)):
        playout = random_playout(GAME, "flitwick", seats, seed)
        chooser = Rng(seed)
        for state in _states(playout)[:-1]:
            board = state["boards"]["flitwick"]
            other = clone(state)
            golds = [i for i, k in enumerate(board["keys"]) if k == fw.GOLD]
            swap = chooser.choice(golds)
            keys = other["boards"]["flitwick"]["keys"]
            keys[silver_at(board)], keys[swap] = fw.GOLD, fw.SILVER
            for seat in [None, *range(seats)]:
                assert GAME.view(state, seat) == GAME.view(other, seat)
        for step in playout.steps[:-1]:
            assert all("audience" not in e for e in step.events)
            assert "silver" not in json.dumps(step.events)
    board = chain_board([1, 2, 3, 4])
    assert "silver" not in json.dumps(fw.view(board, 0)) and "gold" not in json.dumps(fw.view(board, 0))


def test_determinise_keeps_the_view_and_spreads_the_silver_key_over_face_down_spaces():
    """``view(determinise(view(b, s), s, rng), s) == view(b, s)``, with the silver key
    at a face-down space chosen at random."""
    for seats in (2, 4):
        playout = random_playout(GAME, "flitwick", seats, 21 + seats)
        for state in _states(playout):
            board = state["boards"]["flitwick"]
            for seat in [None, *range(seats)]:
                seen = fw.view(board, seat)
                sampled = fw.determinise(seen, seat, Rng(seats))
                assert fw.view(sampled, seat) == seen
                assert sampled["keys"].count(fw.SILVER) == 1
    board = chain_board([3, 1, 2])
    places = {silver_at(fw.determinise(fw.view(board, 0), 0, Rng(seed))) for seed in range(200)}
    assert len(places) > 30
    sampled = fw.determinise(fw.view(board, 0), 0, Rng(1))
    assert fw.view(sampled, 0) == fw.view(board, 0)
    assert fw.turn_owner(sampled) == fw.turn_owner(board) == 0


# -- the contract, the schema and the property tests ---------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_contract(seats):
    check_contract(GAME, "flitwick", seats, range(3))


def test_schema_is_in_the_api_subset():
    """The GraphQL generator accepts the board's actions and view on their own."""
    types = board_types(fw)
    assert set(types.action_types) == {"flitwick_reveal", "flitwick_place", "flitwick_move", "flitwick_stay"}
    check_board_schema(fw, undescribed=("type", "seat"))


def test_walks_are_enumerated_quickly():
    """Every start, every spin, a few pieces in the way: the search stays well under a
    millisecond on average (legal_actions is called on every step of every playout)."""
    fw.walk_ends.cache_clear()
    chooser = Rng(3)
    began = time.perf_counter()
    for start in range(SPACES):
        for steps in fw.SPINNER:
            blocked = sum(1 << chooser.below(SPACES) for _ in range(3)) & ~(1 << start)
            fw.walk_ends(start, steps, blocked)
    assert (time.perf_counter() - began) / (SPACES * len(fw.SPINNER)) < 0.005


def _check_individual(playout):
    final = playout.final
    assert GAME.result(final) is not None, f"seed {playout.seed} did not end"
    (winner,) = GAME.result(final)["winners"]
    board = final["boards"]["flitwick"]
    assert board["winner"] == winner and board["keys"][board["found"]] == fw.SILVER
    down = SPACES
    for step in playout.steps:
        after = step.state_after["boards"]["flitwick"]
        before = step.state_before["boards"]["flitwick"]
        assert after["keys"].count(fw.SILVER) == 1
        now = sum(k is not None for k in after["keys"])
        assert now <= down
        down = now
        pieces = [p for p in after["pieces"] if p is not None]
        assert len(pieces) == len(set(pieces)), "two pieces share a space"
        if step.action["type"] == "flitwick_move":
            start, end = before["pieces"][step.seat], fw.INDEX[step.action["to"]]
            r0, c0, r1, c1 = *divmod(start, fw.SIZE), *divmod(end, fw.SIZE)
            assert 1 <= max(abs(r0 - r1), abs(c0 - c1)) <= before["spin"]


def test_random_individual_games_always_end_with_a_winner():
    """Property: PROPERTY_GAMES seeded random games of 2, 3 and 4 players each end
    with the first player to find the silver key as the only winner."""
    for seed in range(PROPERTY_GAMES):
        _check_individual(random_playout(GAME, "flitwick", 2 + seed % 3, seed))


def chain_playout(seats: int, seed: int) -> tuple[list[int], int]:
    """A stand-in for the match in the games in order: every seat arrives with a
    distinct Fire token, turn_owner decisions first, then regular turns to the left
    (a seat that advanced plays its turns elsewhere), ``next_turn`` honoured.
    Returns the finishing order and the number of actions."""
    rng, chooser = Rng(seed), Rng(seed ^ 0xF117)
    fires = [1, 2, 3, 4]
    chooser.shuffle(fires)
    board = fw.new_board(rng, seats, "chain", {})
    for seat in range(seats):
        fw.arrive(board, seat, rng, {"facts": {"fire": fires[seat]}})
    finished, turn, handovers = [], None, 0
    for count in range(1, 20000):
        owner = fw.turn_owner(board)
        if owner is not None:
            seat = owner
        else:
            seat = turn
            while not fw.can_play(board, seat):
                seat = (seat + 1) % seats
            fw.begin_turn(board, seat, rng)
            turn = (seat + 1) % seats
        actions = fw.legal_actions(board, seat)
        assert actions, (seed, seat, board)
        out = fw.play(board, seat, chooser.choice(actions), rng)
        assert board["keys"].count(fw.SILVER) == 1
        finished += out.finished
        if out.next_turn is not None:
            handovers += 1
            turn = out.next_turn
        if out.closed:
            assert handovers == 1 and fw.turn_owner(board) is None and board["phase"] == "over"
            return finished, count
    raise AssertionError(f"chain board {seats} seats seed {seed} did not close")


def test_random_chain_boards_always_close_with_every_seat_moved_on():
    """Property (games in order): from the opening to the last finder, random play
    always closes the board with every seat advanced once, and the match is told
    exactly once who takes the next regular turn."""
    for seed in range(PROPERTY_GAMES // 2):
        seats = 2 + seed % 3
        finished, _ = chain_playout(seats, seed)
        assert sorted(finished) == list(range(seats))
