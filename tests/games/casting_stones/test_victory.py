"""REWARDS (step 4), the QUICK-REFERENCE CHART and the ENDGAME."""

import pytest

from service.engine import IllegalAction
from service.games.casting_stones import GAME
from service.games.casting_stones.casts import read_cast
from service.games.casting_stones.rules import holds_run

from .helpers import BUNGLE, CHARM, POTION, SPELL, drafted, event_types, settle, with_gems

_ = None


def test_a_winning_spell_places_a_gem_on_any_empty_turret():
    """000: "SPELL beats POTION: PLACE A TURRET GEM - Place a Turret Gem on the empty Turret of your choice."
    (QUICK-REFERENCE CHART: "Place a Tower Gem on the empty Tower of your choice.")"""
    start = with_gems(drafted(), [1, _, 0, _, _, _, _, 1])
    state, _events = settle(start, SPELL, POTION)
    assert state["vic"] == {"seat": 0, "kind": "spell"}
    assert GAME.legal_actions(state, 0) == [{"type": "place", "turret": t} for t in (1, 3, 4, 5, 6)]
    with pytest.raises(IllegalAction):
        GAME.apply(state, 0, {"type": "place", "turret": 0})
    state, events = GAME.apply(state, 0, {"type": "place", "turret": 4})
    assert state["gems"][4] == 0 and state["line"] == [4, 4]
    assert events[0] == {"type": "gem_placed", "seat": 0, "turret": 4}
    assert GAME.view(state, None)["last_turn"]["action"] == {
        "type": "place", "turret": 4, "target": None, "stone": None, "take": None}


def test_a_spell_also_beats_a_bungle():
    """QUICK-REFERENCE CHART: "Spell beats potion or a bungle" -> PLACE A TURRET GEM."""
    state, _events = settle(drafted(), BUNGLE, SPELL)
    assert state["vic"] == {"seat": 1, "kind": "spell"}
    assert {a["type"] for a in GAME.legal_actions(state, 1)} == {"place"}


def test_a_spell_victory_with_no_empty_turret_is_recorded_and_passes():
    """A victory with no possible action is recorded and passes (docs: "Victories with nothing to do"); "Place
    a Turret Gem on the empty Turret" needs an empty turret. The winner still casts first next turn."""
    full = with_gems(drafted(), [0, 0, 0, 1, 1, 1, 0, 1])
    state, events = settle(full, POTION, SPELL)
    assert "victory_void" in event_types(events)
    assert state["last"]["void"] is True and state["last"]["winner"] == 1
    assert (state["ph"], state["first"], state["turn"]) == ("cast", 1, 2)
    assert "no victory action open" in GAME.view(state, None)["last_turn"]["summary"]


def test_a_spell_victory_with_every_gem_placed_passes():
    """000: each player has "six Turret Gems"; with all six on turrets there is no gem left to place."""
    state = with_gems(drafted(), [0, 0, 0, _, 0, 0, 0, _])
    state, events = settle(state, SPELL, POTION)
    assert state["line"][0] == 0 and "victory_void" in event_types(events)


def test_a_winning_potion_swaps_a_gem_with_an_adjacent_opposing_gem():
    """000: "POTION beats CHARM: SWAP ... Swap one of your in-play Turret Gems with an adjacent in-play Turret
    Gem belonging to your opponent." The ring wraps: turret 7 is next to turret 0."""
    start = with_gems(drafted(), [0, 1, _, 1, 0, _, _, 1])
    state, _events = settle(start, POTION, CHARM)
    gem_swaps = [a for a in GAME.legal_actions(state, 0) if a["type"] == "swap_gems"]
    assert gem_swaps == [{"type": "swap_gems", "turret": 0, "target": 1}, {"type": "swap_gems", "turret": 0, "target": 7},
                         {"type": "swap_gems", "turret": 4, "target": 3}]
    state, events = GAME.apply(state, 0, {"type": "swap_gems", "turret": 0, "target": 7})
    assert state["gems"] == [1, 1, _, 1, 0, _, _, 0]
    assert events[0] == {"type": "gems_swapped", "seat": 0, "turret": 0, "target": 7}


def test_a_winning_potion_may_swap_a_hand_stone_for_any_vault_stone():
    """000: "Swap one of the Casting Stones in your Casting Hand for any Casting Stone in the Vault." -- of any
    type (docs: "Swaps"): here an artifact for an element."""
    state, _events = settle(drafted(), CHARM, POTION)
    stone_swaps = [a for a in GAME.legal_actions(state, 1) if a["type"] == "swap_stone"]
    assert len(stone_swaps) == 5 * 2
    state, events = GAME.apply(state, 1, {"type": "swap_stone", "stone": "parchment", "take": "dittany"})
    assert state["hands"][1] == ["draco-malfoy", "shield-slytherin", "dittany", "mistletoe", "spine-of-lionfish"]
    assert sorted(state["vault"][0]) == ["beetles-eyes", "parchment"]
    assert events[0] == {"type": "stone_swapped", "seat": 1, "stone": "parchment", "take": "dittany"}


def test_a_potion_cannot_swap_a_gem_with_a_gem_that_is_not_adjacent():
    """000: "an adjacent in-play Turret Gem belonging to your opponent" -- not one further round the ring."""
    state, _events = settle(with_gems(drafted(), [0, _, 1, _, _, _, _, _]), POTION, BUNGLE)
    assert not [a for a in GAME.legal_actions(state, 0) if a["type"] == "swap_gems"]
    with pytest.raises(IllegalAction) as refused:
        GAME.apply(state, 0, {"type": "swap_gems", "turret": 0, "target": 2})
    assert "adjacent" in refused.value.message


def test_a_winning_charm_knocks_an_opposing_gem_back_to_its_line():
    """000: "CHARM beats SPELL: KNOCK-OUT ... Knock your opponent's Turret Gem off its Turret and back into its
    owner's line.\""""
    start = with_gems(drafted(), [1, 1, 0, _, _, _, _, _])
    state, _events = settle(start, CHARM, SPELL)
    knocks = [a for a in GAME.legal_actions(state, 0) if a["type"] == "knock_gem"]
    assert knocks == [{"type": "knock_gem", "turret": 0}, {"type": "knock_gem", "turret": 1}]
    state, events = GAME.apply(state, 0, {"type": "knock_gem", "turret": 1})
    assert state["gems"][:3] == [1, _, 0] and state["line"] == [5, 5]
    assert events[0] == {"type": "gem_knocked", "seat": 0, "turret": 1, "owner": 1}


def test_a_charm_cannot_knock_its_own_gem():
    """000: "Knock one of your opponent's in-play Turret Gems" -- only the opponent's."""
    state, _events = settle(with_gems(drafted(), [0, _, _, _, _, _, _, _]), CHARM, SPELL)
    with pytest.raises(IllegalAction):
        GAME.apply(state, 0, {"type": "knock_gem", "turret": 0})


def test_a_knocked_out_stone_is_replaced_by_its_owner_but_not_by_the_same_stone():
    """000: "Knock one of your opponent's Casting Stones into the Vault. Your opponent must choose a new Casting
    Stone from the Vault (players may not choose the Casting Stone that was just knocked into the Vault).\""""
    state, _events = settle(drafted(), SPELL, CHARM)
    state, events = GAME.apply(state, 1, {"type": "knock_stone", "stone": "shield-gryffindor"})
    assert (state["ph"], GAME.to_act(state), state["knocked"]) == ("replace", {0}, "shield-gryffindor")
    assert "shield-gryffindor" in state["vault"][0] and len(state["hands"][0]) == 4
    assert GAME.legal_actions(state, 0) == [{"type": "replace", "stone": "dittany"},
                                            {"type": "replace", "stone": "beetles-eyes"}]
    with pytest.raises(IllegalAction) as refused:
        GAME.apply(state, 0, {"type": "replace", "stone": "shield-gryffindor"})
    assert "just knocked" in refused.value.message
    state, events = GAME.apply(state, 0, {"type": "replace", "stone": "beetles-eyes"})
    assert len(state["hands"][0]) == 5 and "beetles-eyes" in state["hands"][0]
    assert sorted(state["vault"][0]) == ["dittany", "shield-gryffindor"]
    assert event_types(events)[:2] == ["stone_replaced", "turn_started"]
    assert GAME.view(state, None)["last_turn"]["replacement"] == "beetles-eyes"


def test_losing_the_character_stone_stops_spells_until_it_is_recovered():
    """000: "if you Knock their Character Stone into the Vault, they will be unable to cast any Spells until
    recovering it." The replacement may be of any type (docs: "Knock-outs"); with no character no cast reads
    as a Spell; a Potion victory's stone swap brings the character back."""
    state, _events = settle(drafted(), SPELL, CHARM)
    state, _events = GAME.apply(state, 1, {"type": "knock_stone", "stone": "harry-potter"})
    state, _events = GAME.apply(state, 0, {"type": "replace", "stone": "dittany"})
    hand = state["hands"][0]
    assert "harry-potter" not in hand
    assert all(read_cast(hand, f"{a}{b}{c}{d}{e}")[0] != "spell"
               for a in "sn" for b in "sn" for c in "sn" for d in "sn" for e in "sn")
    state, _events = settle(state, POTION, CHARM)
    assert {"type": "swap_stone", "stone": "dittany", "take": "harry-potter"} in GAME.legal_actions(state, 0)


def test_a_charm_also_knocks_out_after_beating_a_bungle():
    """QUICK-REFERENCE CHART: "Charm beats spell or a bungle" -> KNOCK-OUT."""
    state, _events = settle(drafted(), CHARM, BUNGLE)
    assert {a["type"] for a in GAME.legal_actions(state, 0)} == {"knock_stone"}


def test_the_victory_action_must_match_the_winning_cast():
    """QUICK-REFERENCE CHART: "VICTORY ACTIONS: BASIC GAME (YOU MAY ONLY CHOOSE ONE)" of the winning column."""
    state, _events = settle(drafted(), SPELL, POTION)
    with pytest.raises(IllegalAction) as refused:
        GAME.apply(state, 0, {"type": "knock_stone", "stone": "draco-malfoy"})
    assert "Spell" in refused.value.message


@pytest.mark.parametrize("gems, run", [
    ([0, 0, 0, 0, _, _, _, _], True),
    ([0, 0, _, _, _, _, 0, 0], True),     # round the ring: 6, 7, 0, 1
    ([0, 0, 0, 1, 0, _, _, _], False),
    ([0, _, 0, _, 0, _, 0, _], False),
])
def test_four_adjacent_turrets_around_the_ring_win(gems, run):
    """000: "until one of you conquers four adjacent Turrets around the Tower Mat"; DESIGN.md: "The Tower Mat has
    8 turrets in a ring. Four adjacent turrets held wins.\""""
    assert holds_run(gems, 0) is run


def test_placing_the_fourth_adjacent_gem_ends_the_match():
    """000, ENDGAME: "Once a player has taken over four adjoining Turrets on the Tower Mat, the game is at an
    end." The match result names the winner; scores are the turrets each holds; the cause, for programs, is
    four_turrets (docs: "Causes")."""
    state, _events = settle(with_gems(drafted(), [0, 0, 1, _, _, _, _, 0]), SPELL, POTION)
    state, events = GAME.apply(state, 0, {"type": "place", "turret": 5})
    assert GAME.result(state) is None                     # 5, 7, 0, 1: not adjacent
    state, _events = settle(with_gems(drafted(), [0, 0, 1, _, _, _, _, 0]), SPELL, POTION)
    state, events = GAME.apply(state, 0, {"type": "place", "turret": 6})
    assert events[-1] == {"type": "match_over", "winners": [0], "reason": "four_turrets"}
    assert GAME.result(state) == {"winners": [0], "scores": [4, 1], "cause": "four_turrets",
                                  "reason": "Seat 0 holds four adjoining turrets of the Tower Mat."}
    assert GAME.to_act(state) == set() and GAME.legal_actions(state, 0) == []
    view = GAME.view(state, 1)
    assert (view["phase"], view["winner"], view["end"]) == ("over", 0, "four_turrets")


def test_a_gem_swap_that_completes_the_opponents_run_gives_them_the_match():
    """000, ENDGAME: "Once a player has taken over four adjoining Turrets" -- whoever it is. Seat 0 swaps its gem
    on turret 3 with seat 1's on 4, so seat 1 now holds 0-3 (docs: "Swaps")."""
    state, _events = settle(with_gems(drafted(), [1, 1, 1, 0, 1, _, _, _]), POTION, CHARM)
    state, _events = GAME.apply(state, 0, {"type": "swap_gems", "turret": 3, "target": 4})
    assert GAME.result(state)["winners"] == [1]


def test_a_gem_swap_that_completes_both_runs_wins_for_the_mover():
    """Both players holding four adjacent turrets after one swap: the mover took them over by their action,
    so the mover wins (docs: "Swaps")."""
    state, _events = settle(with_gems(drafted(), [1, 1, 1, 0, 1, 0, 0, 0]), POTION, CHARM)
    state, _events = GAME.apply(state, 0, {"type": "swap_gems", "turret": 3, "target": 4})
    assert state["gems"] == [1, 1, 1, 1, 0, 0, 0, 0]
    assert GAME.result(state)["winners"] == [0]


def test_the_turn_limit_ends_the_match_with_no_winner():
    """Our cap (docs: "Turn limit"): after max_turns turns without four adjacent turrets, the match ends with
    result winners [] and cause turn_limit (docs: "Causes")."""
    state = drafted(max_turns=1)
    state, events = settle(state, POTION, POTION)
    assert GAME.result(state) == {"winners": [], "scores": [0, 0], "cause": "turn_limit", "reason": (
        "The turn limit (1 turn) was reached before anyone held four adjoining turrets; nobody wins.")}
    assert events[-1]["type"] == "match_over"
