"""Quirrell's Challenge: The Troll (rule book 002_5ac5154540885c00.txt, GAME 5,
and "QUIRRELL'S CHALLENGE All rules are the same, except that: 1. Players place
their playing pieces on the door at the top left corner of the board. 2. The
youngest player goes first. Play passes to the left. 3. The first player to
reach the door at the end of the path wins the game.").

House rules are in /tmp/ss_docs/quirrell.md (merged into
docs/rules/sorcerers-stone.md).
"""

from __future__ import annotations

import collections

import jsonschema
import pytest

from service.engine import Rng, clone
from service.games.sorcerers_stone import GAME, quirrell
from tests.games.contract import PROPERTY_GAMES, check_contract, random_playout

SPIN = {"type": "quirrell_spin"}


class Rigged:
    """An Rng stand-in whose spins come from a list."""

    def __init__(self, *faces):
        self.faces = list(faces)

    def choice(self, items):
        face = self.faces.pop(0)
        assert face in items
        return face


def new(seats: int = 2, seed: int = 1, **options) -> dict:
    return GAME.setup(GAME.check_options("quirrell", options, seats), seats, seed)


def make(seats: int = 2, mode: str = "individual", at=None, length: int = 20) -> dict:
    rng = Rng(1)
    board = quirrell.new_board(rng, seats, mode, {"quirrell_path": length})
    for seat in range(seats):
        quirrell.arrive(board, seat, rng, {"facts": {}})
    if at is not None:
        board["at"] = list(at)
    return board


def test_pieces_start_on_the_door_and_the_youngest_goes_first():
    """Individually: "1. Players place their playing pieces on the door at the top
    left corner of the board. 2. The youngest player goes first. Play passes to the
    left." The path has quirrell_path spaces (house rule, default 20)."""
    state = new(3)
    board = state["boards"]["quirrell"]
    assert board["at"] == [0, 0, 0] and board["length"] == 20
    assert GAME.to_act(state) == {0}
    assert GAME.legal_actions(state, 0) == [SPIN] and GAME.legal_actions(state, 1) == []
    state, _ = GAME.apply(state, 0, SPIN)
    assert GAME.to_act(state) == {1}
    assert new(2, quirrell_path=8)["boards"]["quirrell"]["length"] == 8


def test_the_spinner_faces():
    """SET UP: "1. ... flip over the spinner so that the Quirrell's Challenge side is
    face up." The scan shows only "2 5 1": house rule, six equal sectors 1-5 and
    the Troll ("Spinning the troll counts as zero" in the chess rules' hand-over
    implies a troll sector among numbers)."""
    assert quirrell.SPINNER == [1, 2, 3, 4, 5, "troll"]
    rng = Rng(11)
    board = make(2)
    counts = collections.Counter()
    for _ in range(600):
        board["at"] = [0, 0]
        quirrell.play(board, 0, SPIN, rng)
        counts[board["last_spin"]["face"]] += 1
    assert set(counts) == set(quirrell.SPINNER) and min(counts.values()) > 60


def test_spin_and_move_the_number_shown():
    """MOVING ALONG THE BOARD: "1. The first player spins the spinner and moves the
    number of spaces shown." """
    board = make(2, at=[4, 0])
    outcome = quirrell.play(board, 0, SPIN, Rigged(3))
    assert board["at"] == [7, 0] and outcome.turn_over
    assert outcome.events == [{"type": "quirrell_spun", "seat": 0, "spin": 3, "from": 4, "to": 7}]
    assert quirrell.view(board, 1)["last_spin"] == {"seat": 0, "face": "3"}


def test_the_troll_sends_the_player_back_to_the_door():
    """"2. When a player spins the troll, the troll wakes up and that player moves back
    to the door at the top left corner." """
    board = make(2, at=[17, 5])
    outcome = quirrell.play(board, 0, SPIN, Rigged("troll"))
    assert board["at"] == [0, 5]
    assert outcome.events == [{"type": "quirrell_troll", "seat": 0, "from": 17, "to": 0}]
    assert quirrell.view(board, None)["last_spin"] == {"seat": 0, "face": "troll"}


def test_reaching_or_passing_the_end_door_wins_individually():
    """"3. The first player to reach the door at the end of the path wins the game."
    House rule: a spin that passes the door ends on it (no exact count)."""
    state = new(2, seed=3)
    state["boards"]["quirrell"]["at"] = [20, 0]
    state, events = GAME.apply(state, 0, SPIN)
    board = state["boards"]["quirrell"]
    if board["last_spin"]["face"] == "troll":
        assert board["at"][0] == 0 and GAME.result(state) is None
    else:
        assert board["at"][0] == 21 and GAME.result(state)["winners"] == [0]
        assert {"type": "quirrell_door", "seat": 0, "rank": 1} in events
    board = make(2, at=[19, 0])
    outcome = quirrell.play(board, 0, SPIN, Rigged(5))
    assert board["at"][0] == quirrell.end_door(board) == 21 and outcome.winner == 0 and outcome.closed


def test_in_order_players_finish_one_by_one_with_their_rank():
    """ADVANCING TO THE NEXT CHALLENGE: "1. When all players have reached the door at
    the end of the path, they move on to Snape's Challenge" -- each leaves on
    reaching the door, with its rank for Snape's Challenge ("The first player to
    finish Quirrell's Challenge takes the top three cards from the deck, the
    second player takes the next two cards..."). The board closes with the last."""
    board = make(3, mode="chain", at=[20, 19, 1])
    first = quirrell.play(board, 1, SPIN, Rigged(4))
    assert first.finished == [1] and first.facts == {1: {"quirrell_rank": 1}} and not first.closed
    assert first.winner is None and not quirrell.can_play(board, 1) and quirrell.legal_actions(board, 1) == []
    second = quirrell.play(board, 0, SPIN, Rigged(1))
    assert second.finished == [0] and second.facts == {0: {"quirrell_rank": 2}} and not second.closed
    board["at"][2] = 18
    third = quirrell.play(board, 2, SPIN, Rigged(5))
    assert third.finished == [2] and third.facts == {2: {"quirrell_rank": 3}} and third.closed
    assert [p["rank"] for p in quirrell.view(board, None)["players"]] == [2, 1, 3]


def test_in_order_players_arrive_one_by_one():
    """"2. As players complete McGonagall's Challenge, they start immediately on this
    game ... Players do not wait for all players to reach Quirrell's Challenge to
    begin." A seat not yet here has nothing to do."""
    rng = Rng(2)
    board = quirrell.new_board(rng, 3, "chain", {"quirrell_path": 20})
    quirrell.arrive(board, 2, rng, {"facts": {"captured": 1}})
    assert [quirrell.can_play(board, s) for s in range(3)] == [False, False, True]
    assert quirrell.legal_actions(board, 0) == [] and quirrell.legal_actions(board, 2) == [SPIN]
    assert quirrell.view(board, None)["players"][0]["position"] is None


def test_everything_is_public_and_determinise_reads_the_view():
    """Nothing on this board is hidden: every seat and the spectator see the same,
    and determinise gives back the same board."""
    for seed in range(4):
        playout = random_playout(GAME, "quirrell", 3, seed)
        for step in playout.steps:
            board = step.state_after["boards"]["quirrell"]
            views = [quirrell.view(board, s) for s in (None, 0, 1, 2)]
            assert all(v == views[0] for v in views)
            for seat in (None, 1):
                assert quirrell.view(quirrell.determinise(clone(views[0]), seat, Rng(seed)), seat) == views[0]
            assert quirrell.determinise(views[0], 0, Rng(1)) == board


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_contract(seats):
    check_contract(GAME, "quirrell", seats, range(3))


def test_contract_with_a_short_path():
    check_contract(GAME, "quirrell", 2, range(2), options={"quirrell_path": 8})


def test_view_schema():
    validator = jsonschema.Draft202012Validator(quirrell.SCHEMA["view"])
    board = make(2, mode="chain", at=[3, None])
    validator.validate(quirrell.view(board, None))
    quirrell.play(board, 0, SPIN, Rigged("troll"))
    validator.validate(quirrell.view(board, 0))


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_random_games_end_with_the_first_through_the_door(seats):
    """Every random game ends, won by the one player on the end door; pieces stay
    between the two doors; a troll always means the door."""
    for seed in range(seats, PROPERTY_GAMES, 3):
        options = {"quirrell_path": [20, 8, 30][seed % 3]}
        playout = random_playout(GAME, "quirrell", seats, seed, options=options)
        result = GAME.result(playout.final)
        assert result is not None and len(result["winners"]) == 1
        board = playout.final["boards"]["quirrell"]
        end = board["length"] + 1
        assert [s for s in range(seats) if board["at"][s] == end] == result["winners"]
        for step in playout.steps:
            after = step.state_after["boards"]["quirrell"]
            assert all(0 <= at <= end for at in after["at"])
            if after["last_spin"]["face"] == "troll":
                assert after["at"][step.seat] == 0


def test_random_games_in_order_take_everyone_through():
    """In order, random spinning takes every player through the end door, and the
    ranks are 1, 2, 3, ... in finishing order."""
    for seed in range(PROPERTY_GAMES // 4):
        seats = 2 + seed % 3
        rng = Rng(seed)
        board = quirrell.new_board(rng, seats, "chain", {"quirrell_path": 20})
        for seat in range(seats):
            quirrell.arrive(board, seat, rng, {"facts": {}})
        ranks, seat = {}, 0
        for _ in range(20000):
            if quirrell.can_play(board, seat):
                outcome = quirrell.play(board, seat, SPIN, rng)
                for who, facts in outcome.facts.items():
                    ranks[who] = facts["quirrell_rank"]
                if outcome.closed:
                    break
            seat = (seat + 1) % seats
        assert outcome.closed
        assert sorted(ranks.values()) == list(range(1, seats + 1))
        assert [ranks[s] for s in board["finished"]] == list(range(1, seats + 1))
