"""THE CAST and SECONDS: casting order, Leaners and second casts (manual section B, steps 1, 2 and 5)."""

import pytest

from service.engine import IllegalAction, NotYourTurn, clone
from service.games.casting_stones import GAME

from .helpers import BUNGLE, CHARM, HAND_0, POTION, SPELL, drafted, event_types, first_casts, settle


def test_the_first_caster_casts_then_the_other():
    """000: "When casting your Stones, you and your opponent take turns." The cast's faces come from the RNG:
    the action is just {"type": "cast"}."""
    state = drafted(leaner_one_in=0)
    state, events = GAME.apply(state, 0, {"type": "cast"})
    assert "-" not in state["faces"][0] and state["faces"][1] == "-----"
    assert GAME.to_act(state) == {1}
    assert events[0] == {"type": "cast", "seat": 0, "second": False, "stones": HAND_0,
                         "faces": [{"s": "symbol", "n": "number"}[f] for f in state["faces"][0]]}
    with pytest.raises(NotYourTurn):
        GAME.apply(state, 0, {"type": "cast"})


def test_the_second_caster_sees_the_first_cast():
    """000: "This allows the loser of the previous turn a chance to see what their opponent casts before they
    cast their own Stones" -- the first cast is in every view before the second caster acts."""
    state = drafted(leaner_one_in=0)
    state, _ = GAME.apply(state, 0, {"type": "cast"})
    shown = [s["face"] for s in GAME.view(state, 1)["players"][0]["hand"]]
    assert shown == [{"s": "symbol", "n": "number"}[f] for f in state["faces"][0]]


def test_the_first_caster_tips_its_leaners_before_the_other_casts():
    """000, step 5: "The winner of the previous turn must cast first on the next turn. This allows the loser of
    the previous turn a chance to see what their opponent casts before they cast their own Stones"; THE CAST:
    "You must tip all Leaners before the second cast begins." With every stone a Leaner (leaner_one_in 1),
    seat 0 (first caster) tips all five before seat 1 casts, and seat 1 then tips its own (docs: "Order of a
    turn")."""
    state = drafted(leaner_one_in=1)
    state, _ = GAME.apply(state, 0, {"type": "cast"})
    assert state["faces"] == ["lllll", "-----"]
    assert (state["ph"], GAME.to_act(state)) == ("tip", {0})
    assert GAME.legal_actions(state, 1) == []
    with pytest.raises(NotYourTurn):
        GAME.apply(state, 1, {"type": "cast"})
    order = []
    while state["turn"] == 1 and state["ph"] in ("cast", "tip"):
        seat = next(iter(GAME.to_act(state)))
        action = GAME.legal_actions(state, seat)[0]
        order.append((seat, action["type"]))
        state, _events = GAME.apply(state, seat, action)
    assert order == [(0, "tip")] * 5 + [(1, "cast")] + [(1, "tip")] * 5


def test_the_second_caster_sees_the_first_cast_settled():
    """000, step 5: the loser of the previous turn casts second to "see what their opponent casts before they cast
    their own Stones; they can adjust their attack accordingly" -- when seat 1 is to cast, seat 0's cast shows no
    standing Leaner and reads as a finished cast in seat 1's view."""
    state = drafted(leaner_one_in=1)
    state, _ = GAME.apply(state, 0, {"type": "cast"})
    for stone in HAND_0:
        state, _ = GAME.apply(state, 0, {"type": "tip", "stone": stone, "face": "number"})
    assert (state["ph"], GAME.to_act(state)) == ("cast", {1})
    seen = GAME.view(state, 1)["players"][0]
    assert {s["face"] for s in seen["hand"]} == {"number"} and seen["conjured"] == {"kind": "charm", "power": 51}


def test_a_leaner_is_tipped_to_the_face_its_caster_chooses():
    """000: "With a Leaner, you can tip the Stone whichever way you desire, toward a picture or a number as you
    require ... once you tip it, you're stuck with your choice.\""""
    state = drafted(leaner_one_in=1)
    state, _ = GAME.apply(state, 0, {"type": "cast"})
    assert GAME.legal_actions(state, 0)[:2] == [
        {"type": "tip", "stone": "harry-potter", "face": "symbol"},
        {"type": "tip", "stone": "harry-potter", "face": "number"}]
    state, events = GAME.apply(state, 0, {"type": "tip", "stone": "quills", "face": "number"})
    assert state["faces"][0] == "llnll"
    assert events == [{"type": "tipped", "seat": 0, "stone": "quills", "face": "number"}]
    with pytest.raises(IllegalAction):  # no longer a Leaner
        GAME.apply(state, 0, {"type": "tip", "stone": "quills", "face": "symbol"})


def test_tips_can_make_the_cast_you_need():
    """000: "Figure out what you need before you tip the Stone" -- tipping all five to numbers is a Charm."""
    state = drafted(leaner_one_in=1)
    state, _ = GAME.apply(state, 0, {"type": "cast"})
    for stone in HAND_0:
        state, _ = GAME.apply(state, 0, {"type": "tip", "stone": stone, "face": "number"})
    assert GAME.view(state, None)["players"][0]["conjured"] == {"kind": "charm", "power": 51}


def test_only_a_failed_first_cast_may_be_cast_again():
    """000, SECONDS: "Either player may choose to keep the combination ... However, if they failed to throw a
    Spell, Potion or Charm they may choose to cast any or all of their Casting Stones a second time." Seat 1's
    Charm gets no second cast; seat 0's Bungle does (docs: "Seconds")."""
    state, _ = first_casts(drafted(), BUNGLE, CHARM)
    assert (state["ph"], GAME.to_act(state)) == ("seconds", {0})
    state, events = GAME.apply(state, 0, {"type": "keep"})
    assert "turn_result" in event_types(events)  # seat 1 was not asked
    assert state["last"]["winner"] == 1


def test_a_good_first_cast_has_no_second_cast():
    """000, SECONDS (as above): both first casts good -> straight to the comparison."""
    state, events = first_casts(drafted(), SPELL, POTION)
    assert state["ph"] == "victory" and state["last"]["kinds"] == ["spell", "potion"]


def test_open_seconds_lets_a_good_cast_be_cast_again():
    """Game Summary: "If either you or your opponent fails to cast ... you may choose to cast any or all of your
    Stones a second time." The open_seconds option reads it loosely: every player may re-cast."""
    state, _ = first_casts(drafted(open_seconds=True), SPELL, POTION)
    assert (state["ph"], GAME.to_act(state)) == ("seconds", {0})
    state, _ = GAME.apply(state, 0, {"type": "keep"})
    assert (state["ph"], GAME.to_act(state)) == ("seconds", {1})


def test_the_first_caster_decides_seconds_first_and_the_other_waits():
    """000: "Whoever cast first in Step 1 goes first again and decides whether or not they want to make a
    second cast. If they decide to cast again, their opponent waits until they finish. The opponent may then
    make a second cast if they want one.\""""
    state, _ = first_casts(drafted(leaner_one_in=0), BUNGLE, BUNGLE, first=1)
    assert GAME.to_act(state) == {1}
    assert GAME.legal_actions(state, 0) == []
    state, _ = GAME.apply(state, 1, {"type": "recast", "stones": ["mistletoe", "parchment"]})
    assert GAME.to_act(state) == {0} and state["ph"] == "seconds"


def test_a_second_cast_keeps_the_chosen_stones_and_recasts_the_rest():
    """000: "choose the Casting Stones from your first cast that you want to keep and place them in the small
    Casting Circles ... Then take your remaining Casting Stones and cast them"."""
    state, _ = first_casts(drafted(leaner_one_in=0), BUNGLE, BUNGLE)
    state, events = GAME.apply(state, 0, {"type": "recast", "stones": ["bat-spleen", "holly"]})
    assert state["faces"][0][:3] == BUNGLE[:3]
    assert events[0]["type"] == "cast" and events[0]["second"] is True
    assert events[0]["stones"] == ["holly", "bat-spleen"]
    assert state["done"][0] == 2 and GAME.view(state, None)["players"][0]["recast"] is True


def test_recast_offers_every_non_empty_set_of_stones_in_sorted_order():
    """000: "re-casting any or all of the Stones in their Casting Hand": 31 sets of stones plus keeping."""
    state, _ = first_casts(drafted(), BUNGLE, BUNGLE)
    actions = GAME.legal_actions(state, 0)
    assert actions[0] == {"type": "keep"} and len(actions) == 32
    assert all(a["stones"] == sorted(a["stones"]) for a in actions[1:])
    with pytest.raises(IllegalAction):
        GAME.apply(state, 0, {"type": "recast", "stones": ["holly", "bat-spleen"]})   # not sorted
    with pytest.raises(IllegalAction):
        GAME.apply(state, 0, {"type": "recast", "stones": ["draco-malfoy"]})          # not seat 0's


def test_a_leaner_from_a_second_cast_is_tipped_before_the_opponent_decides():
    """000: "If they decide to cast again, their opponent waits until they finish" -- finishing includes
    tipping Leaners ("once you tip it, you're stuck with your choice")."""
    state, _ = first_casts(drafted(leaner_one_in=1), BUNGLE, BUNGLE)
    state, _ = GAME.apply(state, 0, {"type": "recast", "stones": ["holly"]})
    assert (state["ph"], GAME.to_act(state), state["faces"][0]) == ("tip", {0}, "ssnln")
    state, _ = GAME.apply(state, 0, {"type": "tip", "stone": "holly", "face": "symbol"})
    assert (state["ph"], GAME.to_act(state)) == ("seconds", {1})


def test_after_the_second_cast_a_failed_cast_is_a_bungle():
    """000: "After the Second cast, players must go with whatever combination they are left with. If they still
    haven't thrown a Spell, Potion or Charm, they are left with a Bungle and have failed their cast.\""""
    state, _ = first_casts(drafted(), BUNGLE, POTION)
    state, _ = GAME.apply(state, 0, {"type": "keep"})
    assert state["last"]["kinds"] == ["bungle", "potion"] and state["last"]["winner"] == 1


def test_the_winner_casts_first_next_turn():
    """000: "5. Whoever won the turn casts first on the following turn." Seat 1 wins a turn seat 0 began."""
    state, _ = settle(drafted(), SPELL, CHARM)
    assert state["ph"] == "victory" and GAME.to_act(state) == {1}
    state, events = GAME.apply(state, 1, {"type": "knock_stone", "stone": "quills"})
    state, events = GAME.apply(state, 0, {"type": "replace", "stone": "dittany"})
    assert (state["turn"], state["first"], GAME.to_act(state)) == (2, 1, {1})
    assert events[-1] == {"type": "turn_started", "turn": 2, "first_caster": 1}


def test_after_a_tie_the_same_player_casts_first_again():
    """000: "If the Spells are a tie, no one wins that turn and the players must cast a new Hand." Nobody won
    the right to cast first, so the turn's first caster keeps it (docs: "Ties")."""
    state, events = settle(drafted(), POTION, POTION, first=1)
    assert state["last"]["winner"] is None
    assert (state["turn"], state["first"], state["ph"], GAME.to_act(state)) == (2, 1, "cast", {1})
    assert state["faces"] == ["-----", "-----"]
    assert GAME.view(state, None)["last_turn"]["summary"].endswith("nobody won the turn.")


def test_equal_spells_are_a_tie_unequal_spells_are_won_on_their_numbers():
    """000: "If both players throw a Spell at the same time, add the numbers cast with each Spell then compare
    the totals ... If the Spells are a tie, no one wins that turn." Seat 0's Spell shows Quills 6 + Bat Spleen 2,
    seat 1's Parchment 6 + Spine of Lionfish 2: a tie. Showing Shield Slytherin 15 instead wins."""
    state, _ = settle(drafted(), SPELL, SPELL)
    assert state["last"]["powers"] == [8, 8] and state["last"]["winner"] is None
    state, _ = settle(drafted(), SPELL, "snssn")
    assert state["last"]["powers"] == [8, 17] and state["last"]["winner"] == 1


def test_bungle_against_bungle_is_nobodys_turn():
    """000 says only that "any good cast ... always beats a Bungle"; two Bungles: nobody wins (docs: "Ties")."""
    state, _ = settle(drafted(), BUNGLE, BUNGLE)
    assert state["last"]["winner"] is None and state["turn"] == 2


def test_apply_never_changes_its_input():
    """Engine contract: apply works on a copy."""
    state = drafted()
    before = clone(state)
    GAME.apply(state, 0, {"type": "cast"})
    assert state == before
