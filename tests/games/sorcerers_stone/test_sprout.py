"""GAME 2 - Sprout's Challenge: The Devil's Snare
(service/games/sorcerers_stone/sprout.py), checked against the rule book
/work/shared/seeds/002_5ac5154540885c00.txt, DESIGN.md and the house rules in
/tmp/ss_docs/sprout.md (merged into docs/rules/sorcerers-stone.md).

The individual game is driven through ``GAME``; the games in order through a
match whose Hagrid's Challenge is a stand-in (each seat goes through the
trapdoor after a set number of its turns), so that seats reach the Devil's
Snare when a test wants them to; the odd corners on hand-built boards.
"""

from __future__ import annotations

import json
from collections import Counter
from types import SimpleNamespace

import jsonschema
import pytest

from service.engine import Rng, clone, events_for
from service.games.sorcerers_stone import GAME, SorcerersStone
from service.games.sorcerers_stone import sprout as sp
from service.games.sorcerers_stone.board import Outcome
from tests.games.contract import PROPERTY_GAMES, check_contract, random_playout
from tests.games.sorcerers_stone.helpers import check_board_schema

SHAPE = {shape: space for space, shape in enumerate(sp.RING)}


# -- helpers ----------------------------------------------------------------------------


def new_game(seats: int, seed: int = 1) -> dict:
    return GAME.setup(GAME.check_options("sprout", {}, seats), seats, seed)


def act(state: dict, action: dict, game=GAME) -> tuple[dict, list[dict]]:
    (seat,) = game.to_act(state)
    return game.apply(state, seat, action)


def entered(seats: int, areas: list[int], seed: int = 1) -> tuple[dict, list[dict]]:
    """An individual game after seats 0, 1, ... entered ``areas``."""
    state = new_game(seats, seed)
    events = []
    for area in areas:
        state, events = act(state, {"type": "sprout_enter", "area": area})
    return state, events


def board(seats: int, mode: str = "individual", *, players: dict[int, int] | None = None,
          hands: dict[int, list[str]] | None = None, pile: list[str] | None = None,
          filled: dict[int, list[int]] | None = None) -> dict:
    """A hand-built board: ``players`` seat -> area (those seats have arrived and
    entered, in seat order), ``hands`` seat -> shapes, ``filled`` area -> spaces
    holding a token, ``pile`` the draw pile (top last; default: every token
    not elsewhere)."""
    b = sp.new_board(Rng(5), seats, mode, {})
    for seat, area in sorted((players or {}).items()):
        b["arrived"].append(seat)
        b["areas"][area]["player"] = seat
    for seat, shapes in (hands or {}).items():
        b["hands"][seat] = sp._sorted(shapes)
    for area, spaces in (filled or {}).items():
        for space in spaces:
            b["areas"][area]["filled"][space] = True
    if pile is None:
        left = Counter(sp.TOKENS)
        left.subtract(shape for hand in b["hands"] for shape in hand)
        left.subtract(sp.RING[space] for spaces in (filled or {}).values() for space in spaces)
        pile = sorted(left.elements())
    b["pile"] = list(pile)
    return b


def all_spaces_but(*spaces: int) -> list[int]:
    return [space for space in range(sp.SPACES) if space not in spaces]


def place(area: int, shape: str) -> dict:
    return {"type": "sprout_place", "area": area, "space": SHAPE[shape]}


def conserved(b: dict) -> bool:
    """Every one of the 40 tokens is in the pile, a hand or on a space."""
    where = Counter(b["pile"])
    for hand in b["hands"]:
        where.update(hand)
    for area in b["areas"]:
        where.update(sp.RING[space] for space, filled in enumerate(area["filled"]) if filled)
    return where == Counter(sp.TOKENS)


# -- a match with a stand-in Hagrid's Challenge ---------------------------------------------------


def _hagrid_new(rng, seats, mode, options):
    return {"turns": [rng.choice([0, 0, 1, 3, 8, 20, 40, 80]) for _ in range(seats)], "here": []}


def _hagrid_play(b, seat, action, rng):
    if action["type"] == "hagrid_go":
        b["here"].remove(seat)
        return Outcome(events=[{"type": "hagrid_through", "seat": seat}], finished=[seat])
    b["turns"][seat] -= 1
    return Outcome(events=[{"type": "hagrid_stayed", "seat": seat}])


def _action_schema(kind: str, title: str) -> dict:
    return {"type": "object", "title": title, "description": "stand-in",
            "properties": {"type": {"const": kind}}, "required": ["type"], "additionalProperties": False}


#: Hagrid's Challenge stand-in: a seat goes through the trapdoor (``hagrid_go``)
#: once it has played its share of turns (``turns``) on the board.
STAND_IN_HAGRID = SimpleNamespace(
    NAME="hagrid",
    SCHEMA={"actions": {"hagrid_stay": _action_schema("hagrid_stay", "HagridStay"),
                        "hagrid_go": _action_schema("hagrid_go", "HagridGo")},
            "view": {"type": "object", "title": "HagridStandIn", "description": "stand-in",
                     "properties": {"turns": {"type": "array", "items": {"type": "integer"}},
                                    "here": {"type": "array", "items": {"type": "integer"}}},
                     "required": ["turns", "here"], "additionalProperties": False}},
    new_board=_hagrid_new,
    arrive=lambda b, seat, rng, player: b["here"].append(seat) or [],
    turn_owner=lambda b: None,
    can_play=lambda b, seat: seat in b["here"],
    begin_turn=lambda b, seat, rng: [],
    legal_actions=lambda b, seat: ([{"type": "hagrid_go"}] if b["turns"][seat] <= 0 else [{"type": "hagrid_stay"}])
    if seat in b["here"] else [],
    play=_hagrid_play,
    view=lambda b, seat: clone(b),
    determinise=lambda view, seat, rng: clone(view),
)

#: The games in order, cut after the Devil's Snare: once it closes everyone is
#: through every board and the match ends with no winner.
CHAIN = SorcerersStone(chain=(STAND_IN_HAGRID, sp))


def chain_game(seats: int, turns: list[int] | None = None, seed: int = 1) -> dict:
    """A chained match; ``turns``: how many of its turns each seat spends on Hagrid's board."""
    state = CHAIN.setup(CHAIN.check_options("chain", {}, seats), seats, seed)
    if turns is not None:
        state["boards"]["hagrid"]["turns"] = list(turns)
    return state


def sprout_of(state: dict) -> dict:
    return state["boards"]["sprout"]


def fire_facts(state: dict) -> list[int | None]:
    return [p["facts"].get("fire") for p in state["players"]]


def play_until(state: dict, stop, game=CHAIN, chooser: Rng | None = None, limit: int = 3000) -> dict:
    """Play first legal actions (or random ones with ``chooser``) until ``stop(state)``."""
    for _ in range(limit):
        if stop(state) or game.result(state) is not None:
            return state
        (seat,) = game.to_act(state)
        actions = game.legal_actions(state, seat)
        action = chooser.choice(actions) if chooser else actions[0]
        state, _ = game.apply(state, seat, action)
    raise AssertionError("the stop condition was never reached")


# -- the components -----------------------------------------------------------------------


def test_components_forty_tokens_ten_shapes_four_fire_tokens():
    """"40 Devil's Snare Tokens, 4 Fire Tokens"; "Each of the four areas on the
    board has an identical Devil's Snare path around it"; DESIGN.md: "four
    areas each have a ring of 10 shaped spaces (40 tokens, 10 shapes)"."""
    assert len(sp.TOKENS) == 40 and Counter(sp.TOKENS) == {shape: 4 for shape in sp.RING}
    assert len(sp.RING) == len(set(sp.RING)) == 10 and sp.AREAS == 4
    assert sp.FIRE == [1, 2, 3, 4]
    b = sp.new_board(Rng(1), 3, "individual", {})
    assert sorted(b["pile"]) == sorted(sp.TOKENS) and b["pile"] != sp.TOKENS  # mixed up
    assert all(area == {"player": None, "filled": [False] * 10} for area in b["areas"])
    assert sp.view(b, None)["fire_left"] == [1, 2, 3, 4]  # "Place the four Fire tokens, face up"


# -- set-up, individually -------------------------------------------------------------------


def test_individual_each_player_places_a_piece_and_takes_two_tokens():
    """Individually: "1. To start, each player places his/her playing piece in
    the center of one of the four areas on the board. 2. Each player takes two
    tokens." Seats decide in seat order, seat 0 (the youngest) first; one
    piece per area."""
    state = new_game(3)
    assert GAME.to_act(state) == {0} and state["turn"] is None
    assert GAME.legal_actions(state, 0) == [{"type": "sprout_enter", "area": a} for a in range(4)]
    state, events = act(state, {"type": "sprout_enter", "area": 2})
    assert GAME.to_act(state) == {1}
    assert GAME.legal_actions(state, 1) == [{"type": "sprout_enter", "area": a} for a in (0, 1, 3)]
    picked = [e for e in events_for(events, 1) if e["type"].startswith("sprout_picked")]
    assert picked == [{"type": "sprout_picked", "seat": 0, "count": 2, "pile_size": 38}]
    state, _ = act(state, {"type": "sprout_enter", "area": 0})
    state, events = act(state, {"type": "sprout_enter", "area": 3})
    b = sprout_of(state)
    assert [sp.area_of(b, s) for s in range(3)] == [2, 0, 3]
    # The last piece placed, the youngest player begins: "On each turn, a player picks a token from the draw pile."
    assert state["turn"] == 0 and b["turn"] == 0 and b["phase"] == "place"
    assert [len(h) for h in b["hands"]] == [3, 2, 2] and len(b["pile"]) == 40 - 7
    assert {"type": "sprout_drew", "seat": 0, "pile_size": 33, "hand_size": 3} in events


# -- placing tokens ----------------------------------------------------------------------------


def test_a_token_goes_on_an_empty_matching_space_of_any_area():
    """"players place one of their tokens on a matching space on the board that
    does not already have a token on it. The token must match the space on the
    board. Players may place a token in any of the four areas." """
    b = board(2, players={0: 0, 1: 1}, hands={0: ["heart", "heart"], 1: ["moon"]}, filled={2: [SHAPE["heart"]]})
    b["turn"], b["phase"] = 0, "place"
    # Area 2's heart space is taken; the other three areas are empty.
    assert sp.legal_actions(b, 0) == [place(a, "heart") for a in (0, 1, 3)]


def test_once_an_area_holds_a_token_only_next_to_one():
    """"Once a token has been placed in an area, players may only place tokens
    next to a token already placed in that area." The ring closes: its first
    and last spaces are next to each other."""
    star, moon, triangle, hexagon = (SHAPE[s] for s in ("star", "moon", "triangle", "hexagon"))
    assert (star, moon, hexagon) == (0, 1, 9)
    b = board(2, players={0: 0, 1: 1}, hands={0: ["moon", "triangle", "hexagon"]},
              filled={0: [star], 1: [star], 2: [star], 3: [star]})
    b["turn"], b["phase"] = 0, "place"
    assert sp.legal_actions(b, 0) == [{"type": "sprout_place", "area": a, "space": s}
                                      for a in range(4) for s in (moon, hexagon)]
    # An arc from the star to the triangle: now the heart (space 3) and the hexagon (9) fit, not the moon.
    b["areas"][0]["filled"][moon] = b["areas"][0]["filled"][triangle] = True
    b["hands"][0] = ["heart", "circle"]
    assert sp.placements(b, 0) == [(0, SHAPE["heart"])]


def test_one_token_per_turn_and_placing_is_compulsory():
    """"After picking a token, players place one of their tokens ... Players may
    only place one token per turn." House rule: a player who can place must
    (no pass is offered); the placement ends the turn."""
    state, _ = entered(2, [0, 1])
    actions = GAME.legal_actions(state, 0)
    assert actions and all(a["type"] == "sprout_place" for a in actions)
    state, events = act(state, actions[0])
    assert state["turn"] == 1 and sprout_of(state)["turn"] == 1
    assert sum(1 for e in events if e["type"] == "sprout_placed") == 1
    assert sum(sum(a["filled"]) for a in sprout_of(state)["areas"]) == 1


def test_a_player_who_can_place_nothing_passes():
    """House rule (the book does not say): a player none of whose tokens fits
    anywhere passes (``sprout_pass``)."""
    b = board(2, players={0: 0, 1: 1}, hands={0: ["triangle"], 1: ["moon"]},
              filled={a: [SHAPE["star"]] for a in range(4)})
    b["turn"], b["phase"] = 0, "place"
    assert sp.legal_actions(b, 0) == [{"type": "sprout_pass"}]
    outcome = sp.play(b, 0, {"type": "sprout_pass"}, Rng(1))
    assert outcome.turn_over and b["turn"] is None and b["hands"][0] == ["triangle"]


# -- an empty draw pile -------------------------------------------------------------------------


def test_empty_pile_take_a_token_from_another_player():
    """"When there are no more face-down tokens in the draw pile, players take one
    token from any other player on each turn." Any other player holding a
    token (surrounded or not); the token is drawn at random (they lie face
    down); the taker then places as usual. Only the taker and the owner learn
    which token it was."""
    b = board(3, players={0: 0, 1: 1, 2: 2}, hands={0: [], 1: ["moon", "heart"], 2: []}, pile=[])
    b["hands"][2] = []
    b["surrounded"], b["fire"] = [1], [None, 1, None]
    assert sp.begin_turn(b, 0, Rng(1)) == [] and b["phase"] == "steal"
    assert sp.legal_actions(b, 0) == [{"type": "sprout_steal", "victim": 1}]
    taken = set()
    for seed in range(20):
        trial = clone(b)
        outcome = sp.play(trial, 0, {"type": "sprout_steal", "victim": 1}, Rng(seed))
        assert not outcome.turn_over and trial["phase"] == "place"
        (shape,) = trial["hands"][0]
        taken.add(shape)
        assert sorted(trial["hands"][1] + [shape]) == sorted(["moon", "heart"])
        assert events_for(outcome.events, None) == [{"type": "sprout_took", "seat": 0, "victim": 1}]
        assert events_for(outcome.events, 2) == events_for(outcome.events, None)
        for seat in (0, 1):
            assert {"type": "sprout_took_token", "seat": 0, "victim": 1, "shape": shape} in events_for(outcome.events,
                                                                                                         seat)
        assert sp.legal_actions(trial, 0)[0]["type"] == "sprout_place"
    assert taken == {"moon", "heart"}


def test_empty_pile_and_nobody_else_holds_tokens():
    """House rule: with the pile empty and no other player holding a token,
    the player places one of his/her own; with none that fits, the turn is
    passed (``can_play`` is False)."""
    b = board(2, players={0: 0, 1: 1}, hands={0: ["moon"], 1: []}, pile=[], filled={0: [0]})
    assert sp.can_play(b, 0) and sp.can_play(b, 1)  # seat 1 may take seat 0's token
    sp.begin_turn(b, 0, Rng(1))
    assert b["phase"] == "place" and sp.legal_actions(b, 0)[0] == place(0, "moon")
    b["hands"][0] = ["triangle"]  # fits nowhere: area 0 holds only the star
    b["areas"][1]["filled"] = b["areas"][2]["filled"] = b["areas"][3]["filled"] = [True] * 10
    assert not sp.can_play(b, 0) and sp.can_play(b, 1)


# -- surrounding players -----------------------------------------------------------------------


def test_surrounded_players_take_fire_tokens_in_order_and_play_on():
    """"1. When a player is surrounded, that player picks up the Fire token with
    the number 1 on it. 2. On their turns, players who have taken a Fire token
    continue to place Devil's Snare tokens. 3. The second player to be
    surrounded picks the Fire token with the number 2 on it." """
    b = board(4, players={0: 0, 1: 1, 2: 2, 3: 3}, hands={0: ["star", "moon"], 1: ["moon"], 2: [], 3: []},
              filled={1: all_spaces_but(0), 2: all_spaces_but(1)})
    b["turn"], b["phase"] = 0, "place"
    outcome = sp.play(b, 0, place(1, "star"), Rng(1))
    assert {"type": "sprout_surrounded", "seat": 1, "area": 1} in outcome.events
    assert outcome.facts == {1: {"fire": 1}} and b["fire"] == [None, 1, None, None]
    assert not outcome.closed and not b["over"]
    # The surrounded seat plays on, and surrounds the next player.
    assert sp.can_play(b, 1)
    sp.begin_turn(b, 1, Rng(1))
    outcome = sp.play(b, 1, place(2, "moon"), Rng(1))
    assert outcome.facts == {2: {"fire": 2}} and b["fire"] == [None, 1, 2, None]
    assert sp.view(b, None)["fire_left"] == [3, 4] and b["surrounded"] == [1, 2]


def test_play_stops_and_the_remaining_player_takes_fire_token_4():
    """"4. The third player to be surrounded picks the Fire token with number 3
    on it. 5. Play stops, and the remaining player picks the Fire token with the
    number 4 on it." Individually: "3. The player with the largest number on
    his/her Fire token wins the game." """
    b = board(4, players={0: 0, 1: 1, 2: 2, 3: 3}, hands={0: ["star"]}, filled={3: all_spaces_but(0)})
    b["surrounded"], b["fire"] = [1, 2], [None, 1, 2, None]
    b["turn"], b["phase"] = 0, "place"
    outcome = sp.play(b, 0, place(3, "star"), Rng(1))
    assert b["fire"] == [4, 1, 2, 3] and outcome.facts == {3: {"fire": 3}, 0: {"fire": 4}}
    assert outcome.closed and outcome.winner == 0 and b["over"]
    assert outcome.finished == [0, 3, 2, 1]  # highest Fire token first
    assert sp.can_play(b, 1) is False and sp.legal_actions(b, 0) == []


@pytest.mark.parametrize("seats, expected", [(2, [1, 4]), (3, [1, 2, 4])])
def test_with_fewer_players_the_remaining_player_still_takes_4(seats, expected):
    """House rule for 2 and 3 players ("Play stops, and the remaining player
    picks the Fire token with the number 4 on it" is written for four): play
    stops when one player is left, who takes the highest Fire token left,
    always the 4 (the 3, or the 2 and 3, stay on the table)."""
    for seed in range(6):
        playout = random_playout(GAME, "sprout", seats, seed)
        b = sprout_of(playout.final)
        assert sorted(b["fire"]) == expected
        assert GAME.result(playout.final)["winners"] == [b["fire"].index(4)]
        assert sorted(fire_facts(playout.final)) == expected


def test_a_ring_around_an_empty_area_closes_it():
    """House rule: the book only speaks of surrounding players; a ring completed
    around an area without a piece closes it (no Fire token is taken) and no
    player may place a piece there while an open area is left."""
    b = board(3, "chain", players={0: 0, 1: 1}, hands={0: ["star"]}, filled={3: all_spaces_but(0)})
    b["turn"], b["phase"] = 0, "place"
    outcome = sp.play(b, 0, place(3, "star"), Rng(1))
    assert {"type": "sprout_area_closed", "area": 3} in outcome.events
    assert outcome.facts == {} and b["fire"] == [None, None, None]
    sp.arrive(b, 2, Rng(1), {"facts": {}})
    assert sp.turn_owner(b) == 2 and sp.entry_areas(b) == [2]


# -- the games in order: arriving late --------------------------------------------------------


def test_players_arrive_as_they_finish_hagrid_and_do_not_wait_for_the_others():
    """"As players complete Hagrid's Challenge, they move immediately to this game.
    Players wait for their turn in the regular turn order, but do not wait for
    all players to reach Sprout's Challenge to begin. The first player to reach
    the trapdoor places his/her playing piece in the center of one of the four
    areas on the board and picks two Devil's Snare tokens." """
    state = chain_game(3, turns=[5, 0, 5])
    state, _ = act(state, {"type": "hagrid_stay"}, CHAIN)       # seat 0
    state, events = act(state, {"type": "hagrid_go"}, CHAIN)    # seat 1 through the trapdoor
    assert {"type": "sprout_arrived", "seat": 1} in events
    assert CHAIN.to_act(state) == {1} and state["turn"] is None  # it places its piece at once
    assert CHAIN.legal_actions(state, 1) == [{"type": "sprout_enter", "area": a} for a in range(4)]
    state, _ = act(state, {"type": "sprout_enter", "area": 3}, CHAIN)
    assert len(sprout_of(state)["hands"][1]) == 2
    assert state["turn"] == 2 and state["players"][2]["board"] == "hagrid"
    state, _ = act(state, {"type": "hagrid_stay"}, CHAIN)       # seat 2
    state, _ = act(state, {"type": "hagrid_stay"}, CHAIN)       # seat 0
    # Seat 1's own turn on the Devil's Snare: it picks a token and places one, alone on the board.
    assert state["turn"] == 1 and sprout_of(state)["turn"] == 1 and len(sprout_of(state)["hands"][1]) == 3
    assert all(a["type"] == "sprout_place" for a in CHAIN.legal_actions(state, 1))


def test_play_does_not_stop_while_players_are_still_on_hagrid():
    """"Play stops, and the remaining player picks the Fire token with the number
    4" -- house rule: only once every player has placed a piece. A player
    surrounded while the others are still on Hagrid's board takes the 1 and
    plays on; nobody takes the 4 yet."""
    b = board(2, "chain", players={0: 0}, hands={0: ["star"]}, filled={0: all_spaces_but(0)})
    b["turn"], b["phase"] = 0, "place"
    outcome = sp.play(b, 0, place(0, "star"), Rng(1))
    assert b["fire"] == [1, None] and not outcome.closed and sp.can_play(b, 0)


def test_two_areas_surrounded_before_the_last_two_players_arrive():
    """The odd corner: "It is possible that areas will be surrounded while some
    players are still playing Hagrid's Challenge. After completing Hagrid's
    Challenge, players still place their playing pieces in the center of an
    area, pick two tokens, and begin play on their turn. If more than one area
    is surrounded before players place their playing pieces, the last player to
    finish Hagrid's Challenge picks the Fire token with the number 1 on it. The
    next to last player to finish Hagrid's Challenge picks the Fire token with
    the number 2 on it, and so on."

    Seats 0 and 1 close both empty areas while seats 2 and 3 are on Hagrid's
    board; seat 2 then finds no open area, is surrounded on arrival and takes
    the 1; seat 3, the last to finish, takes the 1 from it and seat 2 the 2.
    Both still pick two tokens and play. Seats 0 and 1 play on for the 3 and 4."""
    b = board(4, "chain", players={0: 0, 1: 1}, hands={0: ["star"], 1: ["moon"]},
              filled={2: all_spaces_but(0), 3: all_spaces_but(1)})
    b["turn"], b["phase"] = 0, "place"
    sp.play(b, 0, place(2, "star"), Rng(1))
    b["turn"], b["phase"] = 1, "place"
    outcome = sp.play(b, 1, place(3, "moon"), Rng(1))
    assert {"type": "sprout_area_closed", "area": 3} in outcome.events and b["fire"] == [None] * 4
    sp.arrive(b, 2, Rng(1), {"facts": {}})
    assert sp.legal_actions(b, 2) == [{"type": "sprout_enter", "area": 2}, {"type": "sprout_enter", "area": 3}]
    outcome = sp.play(b, 2, {"type": "sprout_enter", "area": 2}, Rng(1))
    assert {"type": "sprout_entered", "seat": 2, "area": 2, "surrounded": True} in outcome.events
    assert outcome.facts == {2: {"fire": 1}} and len(b["hands"][2]) == 2 and not outcome.closed
    sp.arrive(b, 3, Rng(1), {"facts": {}})
    assert sp.legal_actions(b, 3) == [{"type": "sprout_enter", "area": 3}]
    outcome = sp.play(b, 3, {"type": "sprout_enter", "area": 3}, Rng(1))
    assert outcome.facts == {3: {"fire": 1}, 2: {"fire": 2}} and b["fire"] == [None, None, 2, 1]
    assert b["surrounded"] == [3, 2] and not outcome.closed and sp.can_play(b, 3)
    # Seats 0 and 1 play on: the next surrounded takes the 3, the remaining player the 4.
    b["areas"][1]["filled"] = [True] * 9 + [False]
    b["hands"][3] = ["hexagon"]
    b["turn"], b["phase"] = 3, "place"
    outcome = sp.play(b, 3, place(1, "hexagon"), Rng(1))
    assert b["fire"] == [4, 3, 2, 1] and outcome.facts == {1: {"fire": 3}, 0: {"fire": 4}}
    assert outcome.closed and outcome.finished == [0, 1, 2, 3] and outcome.winner is None


def test_rule_6_taken_literally_is_an_option():
    """SURROUNDING PLAYERS "6. ... If more than one area is surrounded before
    players place their playing pieces, the last player to finish Hagrid's
    Challenge picks the Fire token with the number 1 on it. The next to last
    player to finish Hagrid's Challenge picks the Fire token with the number 2 on
    it, and so on." Option ``sprout_late_arrivals``: by default (``no_open_area``)
    a seat that still finds an open area plays for its Fire token; with
    ``more_than_one_surrounded`` (the words taken literally) every seat placing its
    piece while more than one ring is complete is surrounded on arrival, the last
    to finish Hagrid's Challenge in front: here seat 2 takes the 1, seat 1 the 2,
    and seat 0, the remaining player, the 4."""
    def latecomers(option):
        # Seat 0 in area 0; the empty areas 2 and 3 are closed; area 1 is still open.
        b = board(3, "chain", players={0: 0}, filled={2: all_spaces_but(), 3: all_spaces_but()})
        if option is not None:
            b["late_arrivals"] = option
        sp.arrive(b, 1, Rng(1), {"facts": {}})
        assert sp.entry_areas(b) == [1]
        first = sp.play(b, 1, {"type": "sprout_enter", "area": 1}, Rng(1))
        sp.arrive(b, 2, Rng(1), {"facts": {}})
        assert sp.entry_areas(b) == [2, 3]  # no open area left: a closed one
        second = sp.play(b, 2, {"type": "sprout_enter", "area": 2}, Rng(1))
        return b, first, second

    for option in (None, "no_open_area"):
        b, first, _ = latecomers(option)
        assert {"type": "sprout_entered", "seat": 1, "area": 1, "surrounded": False} in first.events
        assert b["fire"] == [None, None, 1] and b["surrounded"] == [2] and not b["over"]
    b, first, second = latecomers("more_than_one_surrounded")
    assert {"type": "sprout_entered", "seat": 1, "area": 1, "surrounded": True} in first.events
    assert first.facts == {1: {"fire": 1}} and len(b["hands"][1]) == 2  # it still picks two tokens
    assert b["fire"] == [4, 2, 1] and b["surrounded"] == [2, 1]
    assert second.facts == {2: {"fire": 1}, 1: {"fire": 2}, 0: {"fire": 4}}
    assert second.closed and second.finished == [0, 1, 2]


def test_the_late_arrivals_option_reaches_sprout_and_every_view():
    """The match option ``sprout_late_arrivals`` (default ``no_open_area``) is the
    board's, and shown in the match's options and the board's view; a match stored
    before the option existed is read with the reading of that time."""
    state = CHAIN.setup(CHAIN.check_options("chain", {"sprout_late_arrivals": "more_than_one_surrounded"}, 2), 2, 1)
    assert sprout_of(state)["late_arrivals"] == "more_than_one_surrounded"
    view = CHAIN.view(state, 0)
    assert view["options"]["sprout_late_arrivals"] == "more_than_one_surrounded"
    assert view["boards"]["sprout"]["late_arrivals"] == "more_than_one_surrounded"
    assert CHAIN.check_options("chain", {}, 2)["sprout_late_arrivals"] == "no_open_area"
    old = clone(state)
    del old["options"]["sprout_late_arrivals"], sprout_of(old)["late_arrivals"]
    assert CHAIN.view(old, 0)["options"]["sprout_late_arrivals"] == "no_open_area"
    assert sp.view(sprout_of(old), 0)["late_arrivals"] == "no_open_area"
    options = CHAIN.check_options("chain", {}, 2)
    del options["sprout_late_arrivals"]
    assert sprout_of(CHAIN.setup(options, 2, 1))["late_arrivals"] == "no_open_area"


def test_two_players_surrounded_before_the_others_arrive():
    """The issue's corner "two players surrounded before others arrive", read
    with "When a player is surrounded, that player picks up the Fire token with
    the number 1 on it ... The second player to be surrounded picks ... 2": seats
    0 and 1 keep the 1 and the 2; seats 2 and 3 find open areas, play, and take
    the 3 and the 4."""
    state = chain_game(4, turns=[0, 0, 200, 200])
    state = play_until(state, lambda s: sprout_of(s)["turn"] == 0)
    assert [sp.area_of(sprout_of(state), s) for s in range(4)] == [0, 1, None, None]
    # Rearranged: areas 0 and 1 lack only their star, which seats 0 and 1 hold.
    b = sprout_of(state)
    rest = board(4, "chain", players={0: 0, 1: 1}, hands={0: ["star"], 1: ["star"]},
                 filled={0: all_spaces_but(0), 1: all_spaces_but(0)})
    b.update(areas=rest["areas"], hands=rest["hands"], pile=rest["pile"])
    state, events = act(state, place(1, "star"), CHAIN)
    assert fire_facts(state) == [None, 1, None, None] and state["turn"] == 1
    state, events = act(state, place(0, "star"), CHAIN)
    assert fire_facts(state) == [2, 1, None, None]
    assert [p["board"] for p in state["players"]] == ["sprout", "sprout", "hagrid", "hagrid"]
    # The others arrive: open areas are left for them, and they play on.
    state["boards"]["hagrid"]["turns"] = [0, 0, 0, 0]
    state, events = act(state, {"type": "hagrid_go"}, CHAIN)
    assert CHAIN.legal_actions(state, 2) == [{"type": "sprout_enter", "area": a} for a in (2, 3)]
    state = play_until(state, lambda s: CHAIN.result(s) is not None, chooser=Rng(11))
    assert fire_facts(state)[:2] == [2, 1] and sorted(fire_facts(state)[2:]) == [3, 4]


def test_surrounded_on_arrival_the_fire_tokens_taken_move_up():
    """House rule joining "When a player is surrounded, that player picks up the
    Fire token with the number 1" to "the last player to finish Hagrid's
    Challenge picks the Fire token with the number 1": a seat that finds no
    open area goes in front of those already surrounded, who hand their Fire
    tokens up one each (reported again in ``facts``)."""
    b = board(3, "chain", players={0: 0, 1: 1}, filled={0: all_spaces_but(), 2: all_spaces_but(), 3: all_spaces_but()})
    b["surrounded"], b["fire"] = [0], [1, None, None]
    sp.arrive(b, 2, Rng(1), {"facts": {}})
    assert sp.entry_areas(b) == [2, 3]
    outcome = sp.play(b, 2, {"type": "sprout_enter", "area": 3}, Rng(1))
    # Everyone has placed a piece and seat 1 is the only one not surrounded: it takes the 4.
    assert b["fire"] == [2, 4, 1] and outcome.facts == {2: {"fire": 1}, 0: {"fire": 2}, 1: {"fire": 4}}
    assert outcome.closed and outcome.finished == [1, 0, 2]


def test_the_last_arrival_in_an_open_area_is_the_remaining_player():
    """"Play stops, and the remaining player picks the Fire token with the number
    4": when the last seat to arrive finds an open area while every other player
    is surrounded, it is the remaining player at once."""
    b = board(3, "chain", players={0: 0, 1: 1}, filled={0: all_spaces_but(), 1: all_spaces_but()})
    b["surrounded"], b["fire"] = [0, 1], [1, 2, None]
    sp.arrive(b, 2, Rng(1), {"facts": {}})
    assert sp.entry_areas(b) == [2, 3]
    outcome = sp.play(b, 2, {"type": "sprout_enter", "area": 2}, Rng(1))
    assert outcome.facts == {2: {"fire": 4}} and outcome.closed and outcome.finished == [2, 1, 0]


def test_a_latecomer_picks_what_is_left_of_the_pile():
    """"pick two Devil's Snare tokens": house rule, with fewer than two in the
    draw pile the arriving player picks what is left (and takes tokens from
    the others on its turns)."""
    b = board(3, "chain", players={0: 0, 1: 1}, hands={0: ["moon"], 1: ["heart"]}, pile=["star"])
    sp.arrive(b, 2, Rng(1), {"facts": {}})
    outcome = sp.play(b, 2, {"type": "sprout_enter", "area": 2}, Rng(1))
    assert b["hands"][2] == ["star"] and b["pile"] == []
    assert {"type": "sprout_picked", "seat": 2, "count": 1, "pile_size": 0} in outcome.events
    sp.begin_turn(b, 2, Rng(1))
    assert sp.legal_actions(b, 2) == [{"type": "sprout_steal", "victim": 0}, {"type": "sprout_steal", "victim": 1}]


def test_everyone_moves_on_when_all_players_have_a_fire_token():
    """"When all players have a Fire token, they move on to Flitwick's Challenge"
    -- all at once, highest Fire token first (``finished``), each seat's
    ``fire`` fact kept by the match."""
    state = chain_game(3, turns=[0, 2, 30], seed=4)
    state = play_until(state, lambda s: CHAIN.result(s) is not None, chooser=Rng(2))
    fires = fire_facts(state)
    assert sorted(fires) in ([1, 2, 3], [1, 2, 4]) and all(p["board"] is None for p in state["players"])
    assert sprout_of(state)["over"]


def test_a_seat_whose_turn_here_has_not_begun_may_only_pass():
    """House rule (a guard: the match starts a seat's turn on this board with
    ``begin_turn``): a seat given the turn here before it began may only pass."""
    b = board(2, "chain", players={0: 0}, hands={0: ["star", "moon"]})
    assert sp.legal_actions(b, 0) == [{"type": "sprout_pass"}]
    assert sp.legal_actions(b, 1) == []


# -- hidden information -------------------------------------------------------------------------


def _strings(value) -> set:
    return set(json.dumps(value).split('"'))


@pytest.mark.parametrize("seats", [2, 4])
def test_nobody_sees_the_pile_or_another_players_tokens(seats):
    """"lay them, face down, on the table to create a draw pile"; "Players place
    their Devil's Snare tokens face down on the table in front of them." A view
    shows the viewer's own tokens, only the number of the others' and of the
    pile; the spectator sees no token in front of anyone. Events naming a token
    drawn, picked or taken are for the seats that saw it."""
    for seed in range(max(2, PROPERTY_GAMES // 40)):
        playout = random_playout(GAME, "sprout", seats, seed)
        for step in playout.steps:
            state = step.state_after
            b = sprout_of(state)
            for seat in [None, *range(seats)]:
                view = GAME.view(state, seat)["boards"]["sprout"]
                assert "pile" not in view
                for player in view["players"]:
                    mine = player["seat"] == seat
                    assert player["hand"] == (b["hands"][player["seat"]] if mine else [])
                    assert player["hand_size"] == len(b["hands"][player["seat"]])
                for event in events_for(step.events, seat):
                    if "shape" in event and event["type"] != "sprout_placed" or "shapes" in event:
                        assert seat in (event["seat"], event.get("victim")), event
            for event in step.events:
                if "shape" in event and event["type"] != "sprout_placed" or "shapes" in event:
                    assert event["audience"] == [event["seat"]] + ([event["victim"]] if "victim" in event else [])


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_determinise_keeps_the_view(seats):
    """``view(determinise(view(b, s), s), s) == view(b, s)``, the hidden tokens
    dealt from those the seat cannot see, every count kept."""
    rng = Rng(99)
    for seed in range(3):
        playout = random_playout(GAME, "sprout", seats, seed)
        for step in playout.steps[::3]:
            b = sprout_of(step.state_after)
            for seat in [None, *range(seats)]:
                seen = sp.view(b, seat)
                sample = sp.determinise(json.loads(json.dumps(seen)), seat, rng)
                assert sp.view(sample, seat) == seen and conserved(sample)
            whole = GAME.view(step.state_after, 1)
            assert GAME.view(GAME.determinise(whole, 1, rng), 1) == whole


def test_determinise_samples_the_hidden_tokens():
    """The other hands and the pile are sampled, not copied."""
    state, _ = entered(4, [0, 1, 2, 3])
    b = sprout_of(state)
    samples = {json.dumps(sp.determinise(sp.view(b, 0), 0, Rng(seed))["hands"][1]) for seed in range(10)}
    assert len(samples) > 1


# -- the engine contract, schema and property tests ---------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_contract(seats):
    check_contract(GAME, "sprout", seats, range(3))


def test_contract_of_the_chain_with_late_arrivals():
    """The games in order with a stand-in Hagrid's Challenge: arrivals at any time."""
    for seats in (2, 4):
        check_contract(CHAIN, "chain", seats, range(2), view_every=3)


def test_schema_titles_and_descriptions():
    """Every object has a Sprout... title and ``additionalProperties: false``;
    every field is described; the view schema validates views."""
    check_board_schema(sp)
    assert set(sp.SCHEMA["actions"]) == {"sprout_enter", "sprout_steal", "sprout_place", "sprout_pass"}
    assert sp.SCHEMA["view"]["properties"]["ring"]["items"]["enum"] == sp.RING
    state, _ = entered(3, [0, 1, 2])
    for seat in (None, 0, 1):
        jsonschema.validate(sp.view(sprout_of(state), seat), sp.SCHEMA["view"])


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_random_individual_games_end_with_the_largest_fire_token_winning(seats):
    """Property: every seeded random game ends, well within its bound (no cap
    is needed, see the module docstring), and "The player with the largest
    number on his/her Fire token wins the game": the remaining player, with
    the 4; the others hold the lowest tokens in the order they were surrounded."""
    for seed in range(max(10, PROPERTY_GAMES // 4)):
        playout = random_playout(GAME, "sprout", seats, seed, max_actions=2000)
        result = GAME.result(playout.final)
        b = sprout_of(playout.final)
        assert result is not None and b["over"], (seats, seed)
        assert result["winners"] == [b["fire"].index(4)]
        assert [b["fire"][s] for s in b["surrounded"]] == list(range(1, seats))
        assert fire_facts(playout.final) == b["fire"] and conserved(b)
        # The bound of the module docstring: the set-up decisions; at most one turn per token
        # picked from the pile; with the pile empty, at most a round of turns (a take and a
        # placement or pass each) per token placed.
        assert len(playout.steps) <= seats + 40 + seats * 40 * 2, len(playout.steps)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_random_chained_games_give_every_seat_a_fire_token(seats):
    """Property, the games in order with arrivals at random times (some after
    every area is surrounded): the board always closes with every seat holding
    a different Fire token, all of them moving on; the seats surrounded on
    arrival hold the lowest tokens, the last to arrive the 1 ("the last player
    to finish Hagrid's Challenge picks the Fire token with the number 1 on it.
    The next to last ... 2"); a seat holds the 4 exactly when it was not
    surrounded."""
    late_seen = 0
    for seed in range(max(10, PROPERTY_GAMES // 4)):
        playout = random_playout(CHAIN, "chain", seats, seed, max_actions=4000)
        final = playout.final
        b = sprout_of(final)
        assert CHAIN.result(final) is not None and b["over"], (seats, seed)
        fires = fire_facts(final)
        assert fires == b["fire"] and len(set(fires)) == seats and set(fires) <= {1, 2, 3, 4}
        assert all(p["board"] is None for p in final["players"])
        unsurrounded = [s for s in range(seats) if s not in b["surrounded"]]
        assert len(unsurrounded) <= 1 and [fires[s] for s in unsurrounded] in ([], [4])
        late = [e["seat"] for step in playout.steps for e in step.events
                if e["type"] == "sprout_entered" and e["surrounded"]]
        assert b["surrounded"][:len(late)] == late[::-1]
        late_seen += len(late) > (1 if seats > 2 else 0)
        assert conserved(b)
    # Two seats can be surrounded on arrival only with three or four players.
    assert late_seen, "some games should have seats surrounded on arrival"
