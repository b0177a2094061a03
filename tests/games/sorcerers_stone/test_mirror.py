"""The Mirror of Erised and the Sorcerer's Stone (rule book
002_5ac5154540885c00.txt, "GAME 6 3/4"). The Mirror is played only at the end
of the games in order; the match ends on it.

House rules are in /tmp/ss_docs/mirror.md (merged into
docs/rules/sorcerers-stone.md).
"""

from __future__ import annotations

import collections

import jsonschema
import pytest

from service.engine import Rng, clone, events_for
from service.games.sorcerers_stone import GAME, mirror


def make(seats: int = 3, arrived=(0, 1, 2), seed: int = 1) -> dict:
    rng = Rng(seed)
    board = mirror.new_board(rng, seats, "chain", {})
    for seat in arrived:
        mirror.arrive(board, seat, rng, {"facts": {}})
    return board


def stone_at(board: dict) -> int:
    return board["cards"].index("stone")


def chain_at_the_mirror(seats: int, seed: int, arrived=None) -> dict:
    """A match of the games in order in which ``arrived`` (default: everyone) have
    reached the Mirror; the other boards are done with and left out."""
    state = GAME.setup(GAME.check_options("quirrell", {}, seats), seats, seed)
    rng = Rng(seed)
    board = mirror.new_board(rng, seats, "chain", state["options"])
    arrived = list(range(seats)) if arrived is None else arrived
    for seat in arrived:
        mirror.arrive(board, seat, rng, {"facts": {}})
    state.update(variant="chain", mode="chain", boards={"mirror": board}, turn=arrived[0], rng=rng.state)
    for seat, player in enumerate(state["players"]):
        player["board"] = "mirror" if seat in arrived else "snape"
    return state


def test_ten_face_down_cards_one_stone():
    """COMPONENTS: "10 Mirror of Erised Cards"; SET UP: "1. Shuffle the Mirror of
    Erised Cards and place them face down on the table, with the mirror side facing
    up." House rule: one Sorcerer's Stone, nine You-Know-Who."""
    board = make()
    assert collections.Counter(board["cards"]) == {"stone": 1, "you_know_who": 9}
    assert board["up"] == [False] * 10
    for seat in (None, 0, 1):
        assert mirror.view(board, seat)["cards"] == ["face_down"] * 10
    places = {stone_at(make(seed=s)) for s in range(40)}
    assert len(places) > 5


def test_face_down_cards_hide_the_stone_from_everyone():
    """Face-down cards show only their mirror side, to every seat and the spectator:
    the views are the same wherever the Stone lies."""
    board = make()
    other = clone(board)
    i = stone_at(board)
    j = (i + 1) % 10
    other["cards"][i], other["cards"][j] = other["cards"][j], other["cards"][i]
    for seat in (None, 0, 1, 2):
        assert mirror.view(board, seat) == mirror.view(other, seat)


def test_players_join_as_they_arrive():
    """"2. As players complete Snape's Challenge, they begin immediately on the Mirror
    of Erised, keeping their regular turn order. Players do NOT wait for all other
    players to reach the Mirror of Erised to begin." """
    board = make(arrived=[1])
    assert [mirror.can_play(board, s) for s in range(3)] == [False, True, False]
    assert mirror.legal_actions(board, 0) == []
    assert mirror.legal_actions(board, 1) == [{"type": "mirror_flip", "card": i} for i in range(10)]
    events = mirror.arrive(board, 2, Rng(1), {"facts": {}})
    assert events == [{"type": "mirror_arrived", "seat": 2}] and mirror.view(board, None)["players"] == [1, 2]


def test_a_you_know_who_card_stays_face_up_and_play_continues():
    """THE SEARCH FOR THE SORCERER'S STONE: "1. On each turn, a player flips over one
    Mirror of Erised card. If this player reveals the Sorcerer's Stone, he/she wins
    the game. If not, play continues." A flipped card stays face up and cannot be
    flipped again."""
    board = make()
    card = (stone_at(board) + 3) % 10
    outcome = mirror.play(board, 0, {"type": "mirror_flip", "card": card}, Rng(1))
    assert outcome.winner is None and not outcome.closed and outcome.turn_over
    assert outcome.events == [{"type": "mirror_flipped", "seat": 0, "card": card, "face": "you_know_who"}]
    assert mirror.view(board, None)["cards"][card] == "you_know_who"
    assert {"type": "mirror_flip", "card": card} not in mirror.legal_actions(board, 1)
    assert len(mirror.legal_actions(board, 1)) == 9


def test_the_stone_wins():
    """"4. The player who reveals the Sorcerer's Stone wins the game." """
    board = make()
    outcome = mirror.play(board, 2, {"type": "mirror_flip", "card": stone_at(board)}, Rng(1))
    assert outcome.winner == 2 and outcome.closed
    view = mirror.view(board, 0)
    assert view["winner"] == 2 and view["cards"][stone_at(board)] == "stone"


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_the_match_ends_when_the_stone_is_found(seats):
    """In the games in order, the match ends with the finder as its one winner; the
    turn goes round the seats at the Mirror in the regular order; each flip is
    public. The match view keeps to its schema."""
    validator = jsonschema.Draft202012Validator(GAME.view_schema)
    for seed in range(30):
        state = chain_at_the_mirror(seats, seed)
        chooser = Rng(seed ^ 0x5EED)
        flips, turns = 0, []
        while GAME.result(state) is None:
            (seat,) = GAME.to_act(state)
            turns.append(seat)
            for who in (None, *range(seats)):
                validator.validate(GAME.view(state, who))
            state, events = GAME.apply(state, seat, chooser.choice(GAME.legal_actions(state, seat)))
            assert events_for(events, None) == events
            flips += 1
        assert flips <= 10
        assert turns == [i % seats for i in range(len(turns))]
        board = state["boards"]["mirror"]
        (winner,) = GAME.result(state)["winners"]
        assert board["up"][stone_at(board)] and board["winner"] == winner == turns[-1]
        assert sum(board["up"]) == flips


def test_seats_not_yet_at_the_mirror_are_passed_over():
    """"2. As other players complete Snape's Challenge, they join in flipping over
    Mirror of Erised cards when it is their turn": a seat still on another board
    does not flip here."""
    state = chain_at_the_mirror(3, 5, arrived=[2])
    assert GAME.to_act(state) == {2}
    assert GAME.legal_actions(state, 0) == []


def test_determinise_keeps_the_view():
    """view(determinise(view(b, s), s, rng), s) == view(b, s): the Stone lies under a
    random face-down card."""
    board = make()
    for card in [i for i in range(10) if i != stone_at(board)][:4]:
        mirror.play(board, 0, {"type": "mirror_flip", "card": card}, Rng(1))
    seen = mirror.view(board, 1)
    places = set()
    for s in range(40):
        guess = mirror.determinise(clone(seen), 1, Rng(s))
        assert mirror.view(guess, 1) == seen
        places.add(stone_at(guess))
    assert places <= {i for i in range(10) if not board["up"][i]} and len(places) > 3


def test_view_schema():
    validator = jsonschema.Draft202012Validator(mirror.SCHEMA["view"])
    board = make()
    mirror.play(board, 0, {"type": "mirror_flip", "card": stone_at(board)}, Rng(1))
    validator.validate(mirror.view(board, None))
