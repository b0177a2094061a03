"""Section C, the Intermediate Game: THE LIBRARY and the Double Potion and Charms cards."""

import json

import pytest

from service.engine import IllegalAction, MalformedAction, NotYourTurn
from service.games.casting_stones import GAME

from .helpers import BUNGLE, CHARM, HAND_0, HAND_1, POTION, SPELL, event_types, intermediate, settle, with_gems

_ = None


def _drafted_intermediate(seed=1234):
    state = GAME.setup(GAME.check_options("intermediate", {}, 2), 2, seed)
    for a, b in zip(HAND_0, HAND_1):
        state, _events = GAME.apply(state, 0, {"type": "pick", "stone": a})
        state, events = GAME.apply(state, 1, {"type": "pick", "stone": b})
    return state, events


def _win(state, seat):
    """Take the last victory action open to ``seat`` (the turn's winner) and any replacement it calls for."""
    assert GAME.to_act(state) == {seat} and state["ph"] == "victory"
    state, events = GAME.apply(state, seat, GAME.legal_actions(state, seat)[-1])
    if state["ph"] == "replace":
        state, events = GAME.apply(state, 1 - seat, GAME.legal_actions(state, 1 - seat)[0])
    return state, events


def test_the_cards_lie_face_down_after_the_draft_and_the_youngest_takes_one():
    """000, THE LIBRARY: "after you and your opponent have chosen your Casting Stones, divide the Casting Cards.
    Place the Cards face-down on the table and have the youngest player select one." Nobody can tell which
    card is which: views and events show only how many lie face-down."""
    state, events = _drafted_intermediate()
    assert (state["ph"], GAME.to_act(state)) == ("library", {0})
    assert GAME.legal_actions(state, 0) == [{"type": "take_card", "slot": 0}, {"type": "take_card", "slot": 1}]
    assert GAME.legal_actions(state, 1) == []
    for seat in (None, 0, 1):
        view = GAME.view(state, seat)
        assert view["face_down_cards"] == 2
        assert "double-potion" not in json.dumps(view) and "charms" not in json.dumps(view)
    assert "double-potion" not in json.dumps(events) and "charms" not in json.dumps(events)
    with pytest.raises(NotYourTurn):
        GAME.apply(state, 1, {"type": "take_card", "slot": 0})
    with pytest.raises(IllegalAction):
        GAME.apply(state, 0, {"type": "take_card", "slot": 2})


def test_the_face_down_order_is_drawn_from_the_seed():
    """000: the cards are placed "face-down on the table" -- the youngest chooses blind. The order comes from
    the match's seeded RNG: the same seed deals the same, and both orders happen."""
    orders = {tuple(_drafted_intermediate(seed)[0]["deck"]) for seed in range(20)}
    assert orders == {("double-potion", "charms"), ("charms", "double-potion")}
    assert _drafted_intermediate(7)[0]["deck"] == _drafted_intermediate(7)[0]["deck"]


def test_the_oldest_takes_the_remaining_card_and_both_go_face_up():
    """000: "The oldest player takes the remaining Card. Both players place them face-up in front of them. This
    is called the Library." Both Libraries are in every view; then the youngest casts first."""
    state, _events = _drafted_intermediate()
    taken = state["deck"][1]
    state, events = GAME.apply(state, 0, {"type": "take_card", "slot": 1})
    other = ({"double-potion", "charms"} - {taken}).pop()
    assert state["lib"] == [[taken], [other]]
    library_event = next(e for e in events if e["type"] == "library_dealt")
    assert library_event["libraries"] == [[taken], [other]] and "audience" not in library_event
    for seat in (None, 0, 1):
        players = GAME.view(state, seat)["players"]
        assert [[c["id"] for c in p["library"]] for p in players] == [[taken], [other]]
    assert (state["ph"], state["turn"], GAME.to_act(state)) == ("cast", 1, {0})


def test_double_potion_works_after_two_potions_in_a_row_even_when_the_second_turn_is_lost():
    """000, CASTING CARDS (INTERMEDIATE): "The Double Potion Card requires that you cast a Potion two turns in a
    row ... With these Cards it doesn't matter if you win the turns or not" and "a Double Potion allows you to
    Swap two of your Turret Gems or Casting Stones". Seat 0 wins turn 1 with a Potion, loses turn 2 with a
    Potion to a Spell; after seat 1's victory action, seat 0 swaps twice."""
    state = intermediate()
    state, _events = settle(state, POTION, CHARM)               # turn 1: Potion beats Charm
    state, _events = GAME.apply(state, 0, {"type": "swap_stone", "stone": "bat-spleen", "take": "dittany"})
    assert state["lib"][0] == ["double-potion"] and state["turn"] == 2
    state = with_gems(state, [_, _, _, 0, _, _, _, _])
    state, events = settle(state, POTION, SPELL)                # turn 2: Spell beats Potion
    assert {"type": "card_used", "seat": 0, "card": "double-potion", "bonus": True, "counter_spell": False} in events
    assert (state["ph"], GAME.to_act(state)) == ("victory", {1})  # the winner's victory action comes first
    state, events = GAME.apply(state, 1, {"type": "place", "turret": 4})
    assert (state["ph"], GAME.to_act(state)) == ("bonus", {0})
    view = GAME.view(state, None)
    assert view["bonus"] == {"seat": 0, "card": "double-potion", "name": "Double Potion", "effect": "swap", "left": 2}
    offered = GAME.legal_actions(state, 0)
    assert {a["type"] for a in offered} == {"swap_gems", "swap_stone"}
    assert {"type": "swap_gems", "turret": 3, "target": 4} in offered         # next to the gem just placed
    state, _events = GAME.apply(state, 0, {"type": "swap_gems", "turret": 3, "target": 4})
    assert state["gems"][3:5] == [1, 0] and GAME.view(state, None)["bonus"]["left"] == 1
    state, _events = GAME.apply(state, 0, {"type": "swap_stone", "stone": "holly", "take": "beetles-eyes"})
    assert (state["ph"], state["turn"], state["first"]) == ("cast", 3, 1)     # the turn's winner casts first
    assert state["hands"][0] == ["harry-potter", "shield-gryffindor", "quills", "beetles-eyes", "dittany"]
    assert [b["type"] for b in GAME.view(state, None)["last_turn"]["bonus_actions"]] == ["swap_gems", "swap_stone"]


def test_the_bonus_adds_to_the_winners_own_victory_action():
    """The issue: "The bonus adds to the normal victory action." 000: "you will gain the benefits listed on
    those Cards". Two winning Potions in a row: seat 0 swaps once for the win, then twice for the card."""
    state = intermediate()
    state, _events = settle(with_gems(state, [0, 1, _, _, _, _, _, _]), POTION, CHARM)
    state, _events = _win(state, 0)
    state, _events = settle(state, POTION, BUNGLE)
    assert (state["ph"], GAME.to_act(state)) == ("victory", {0})
    state, _events = GAME.apply(state, 0, {"type": "swap_stone", "stone": "holly", "take": "dittany"})
    assert (state["ph"], GAME.to_act(state)) == ("bonus", {0})
    assert GAME.view(state, 1)["bonus"]["left"] == 2


def test_charms_knocks_out_two_after_two_charms_in_a_row():
    """000: "the Charms requires that you cast a Charm two turns in a row" and "a Charms allows you to
    Knock-out two of your opponent's Turret Gems or Casting Stones". Each stone knocked out is replaced from
    the Vault by its owner before the next knock-out ("Your opponent must choose a new Casting Stone")."""
    state = intermediate()
    state, _events = settle(state, SPELL, CHARM)                # turn 1: seat 1's Charm beats the Spell
    state, _events = _win(state, 1)
    state, events = settle(state, POTION, CHARM, first=1)       # turn 2: seat 0's Potion beats the Charm
    assert "card_used" in event_types(events)
    state, _events = _win(state, 0)
    assert (state["ph"], GAME.to_act(state), GAME.view(state, None)["bonus"]["effect"]) == ("bonus", {1}, "knock")
    assert {"knock_gem", "knock_stone"} >= {a["type"] for a in GAME.legal_actions(state, 1)}
    state, _events = GAME.apply(state, 1, {"type": "knock_stone", "stone": "harry-potter"})
    assert (state["ph"], GAME.to_act(state)) == ("replace", {0})
    vault = list(state["vault"][0])
    state, _events = GAME.apply(state, 0, {"type": "replace", "stone": vault[0]})
    assert (state["ph"], GAME.to_act(state), GAME.view(state, None)["bonus"]["left"]) == ("bonus", {1}, 1)
    state, _events = GAME.apply(state, 1, {"type": "knock_stone", "stone": "quills"})
    state, _events = GAME.apply(state, 0, GAME.legal_actions(state, 0)[0])
    assert state["ph"] == "cast" and state["down"][1] == ["charms"]
    assert "harry-potter" not in state["hands"][0] and "quills" not in state["hands"][0]


def test_a_tied_turn_is_a_turn_of_its_own_for_two_in_a_row():
    """000: "2 Potions are always a tie; no one wins that turn and the players must cast a new Hand" -- a tie is
    "that turn", and the new Hand is the next turn (docs: "Two turns in a row"). A Potion in a tied turn and a
    Potion in the next turn are two in a row, and a card that needs no win works in a tie too."""
    state = intermediate()
    state, _events = settle(state, POTION, POTION)              # turn 1: tie
    assert state["last"]["winner"] is None and state["turn"] == 2
    state, events = settle(state, POTION, POTION)               # turn 2: tie again, seat 0's second Potion
    assert {"type": "card_used", "seat": 0, "card": "double-potion", "bonus": True, "counter_spell": False} in events
    assert (state["ph"], GAME.to_act(state)) == ("bonus", {0})


def test_a_bungle_or_another_cast_breaks_the_run():
    """000: "as long as you successfully cast two Potions or two Charms in a row" -- the cast that counts is the
    one compared at the end of the turn; a Potion, a Bungle, a Potion is not two in a row."""
    state = intermediate()
    state, _events = settle(state, POTION, CHARM)
    state, _events = _win(state, 0)
    state, _events = settle(state, BUNGLE, CHARM)
    state, _events = _win(state, 1)
    state, events = settle(state, POTION, SPELL, first=1)
    assert "card_used" not in event_types(events) and state["lib"][0] == ["double-potion"]


def test_a_card_is_used_once_then_stays_face_down():
    """000, THE LIBRARY: "they may only be used once per game. After you have successfully used a Card, turn it
    face-down, placing it out of play. Face-down Cards remain out of play until the end of the game." (003). A
    third Potion in a row brings no second bonus."""
    state = intermediate()
    state, _events = settle(state, POTION, POTION)
    state, _events = settle(state, POTION, POTION)
    state, _events = GAME.apply(state, 0, {"type": "swap_stone", "stone": "holly", "take": "dittany"})
    state, _events = GAME.apply(state, 0, {"type": "swap_stone", "stone": "dittany", "take": "holly"})
    assert state["ph"] == "cast"
    assert state["lib"][0] == [] and state["down"][0] == ["double-potion"]
    view = GAME.view(state, 1)["players"][0]
    assert view["library"] == [] and [c["id"] for c in view["used_cards"]] == ["double-potion"]
    state, events = settle(state, POTION, POTION)
    assert "card_used" not in event_types(events) and state["ph"] == "cast"


def test_a_bonus_is_not_declined_but_its_owner_chooses_what_it_moves():
    """000, CASTING CARDS (INTERMEDIATE): "as long as you successfully cast two Potions or two Charms in a row, you
    will gain the benefits listed on those Cards" -- the bonus is gained, not offered: there is no pass; the card
    leaves its owner the choice of what to swap, so they choose among the swaps (docs: "Bonuses")."""
    state = intermediate()
    state, _events = settle(state, POTION, POTION)
    state, _events = settle(state, POTION, POTION)
    assert (state["ph"], GAME.to_act(state)) == ("bonus", {0})
    offered = GAME.legal_actions(state, 0)
    assert len(offered) > 1 and {a["type"] for a in offered} == {"swap_stone"}
    assert "pass" not in GAME.action_schemas
    with pytest.raises(MalformedAction):
        GAME.apply(state, 0, {"type": "pass"})
    state, _events = GAME.apply(state, 0, {"type": "swap_stone", "stone": "holly", "take": "dittany"})
    assert (state["ph"], GAME.to_act(state), GAME.view(state, None)["bonus"]["left"]) == ("bonus", {0}, 1)
    state, _events = GAME.apply(state, 0, {"type": "swap_stone", "stone": "quills", "take": "beetles-eyes"})
    assert state["ph"] == "cast" and state["down"][0] == ["double-potion"]
    assert [a["type"] for a in GAME.view(state, None)["last_turn"]["bonus_actions"]] == ["swap_stone", "swap_stone"]



def test_both_players_cards_can_work_in_one_turn_winner_first():
    """000: "Only the Charm and Double Potion Cards allow you their bonus even if you fail to win the turn."
    Seat 0 (Double Potion) and seat 1 (Charms) each cast their kind twice in a row: seat 0 wins with its
    Potion, takes its victory action and its bonus, then seat 1, who lost, knocks out two (docs: "Bonuses")."""
    state = intermediate()
    state, _events = settle(state, POTION, CHARM)
    state, _events = _win(state, 0)
    state, events = settle(state, POTION, CHARM)
    used = [(e["seat"], e["card"]) for e in events if e["type"] == "card_used"]
    assert used == [(0, "double-potion"), (1, "charms")]
    state, _events = _win(state, 0)
    owners = []
    while state["ph"] in ("bonus", "replace"):
        seat = next(iter(GAME.to_act(state)))
        if state["ph"] == "bonus":
            owners.append(seat)
        state, _events = GAME.apply(state, seat, GAME.legal_actions(state, seat)[0])
    assert owners == [0, 0, 1, 1]
    assert state["down"] == [["double-potion"], ["charms"]]


def test_no_card_swaps_or_knock_outs_in_the_intermediate_game():
    """000, QUICK-REFERENCE CHART: "ADDITIONAL VICTORY ACTIONS: ADVANCED GAME ... Swap your in-play Casting Card
    ... Knock your opponent's in-play Casting Card into the Vault" -- not in the Intermediate Game."""
    state = intermediate()
    potion, _events = settle(state, POTION, CHARM)
    assert {a["type"] for a in GAME.legal_actions(potion, 0)} <= {"swap_gems", "swap_stone"}
    charm, _events = settle(state, SPELL, CHARM)
    assert {a["type"] for a in GAME.legal_actions(charm, 1)} <= {"knock_gem", "knock_stone"}
    with pytest.raises(IllegalAction):
        GAME.apply(charm, 1, {"type": "knock_card", "card": "double-potion"})


def test_a_refused_bonus_action_is_explained_with_the_card():
    """A bonus step allows only its card's primitive: a Double Potion swaps, it does not place or knock out
    (000: "a Double Potion allows you to Swap two of your Turret Gems™ or Casting Stones")."""
    state = intermediate()
    state, _events = settle(state, POTION, POTION)
    state, _events = settle(state, POTION, POTION)
    with pytest.raises(IllegalAction) as refused:
        GAME.apply(state, 0, {"type": "knock_stone", "stone": "draco-malfoy"})
    assert "Double Potion card lets you swap" in refused.value.message and "pass" not in refused.value.message
    with pytest.raises(NotYourTurn):
        GAME.apply(state, 1, {"type": "swap_stone", "stone": "draco-malfoy", "take": "dittany"})
