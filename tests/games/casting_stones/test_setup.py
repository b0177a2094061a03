"""GETTING STARTED: the set-up draft of the Basic Game."""

from collections import Counter

import pytest

from service.engine import IllegalAction, NotYourTurn
from service.games.casting_stones import GAME
from service.games.casting_stones.catalogue import STONES, set_stones

from .helpers import HAND_0, HAND_1, LEFT_OVER, drafted, event_types, new_match


def test_the_youngest_seat_0_picks_first_then_the_players_alternate():
    """003: "Beginning with the youngest player, both players take turns selecting one Stone at a time until
    they each have five Stones in their Casting Hands." Seat 0 stands for the youngest (docs: "Seats")."""
    state = new_match()
    seen = []
    for a, b in zip(HAND_0, HAND_1):
        seen.append(GAME.to_act(state))
        state, _ = GAME.apply(state, 0, {"type": "pick", "stone": a})
        seen.append(GAME.to_act(state))
        state, _ = GAME.apply(state, 1, {"type": "pick", "stone": b})
    assert seen == [{0}, {1}] * 5
    assert state["hands"] == [HAND_0, HAND_1]


def test_all_stones_start_in_the_centre_and_only_they_can_be_picked():
    """000: "Place all the Casting Stones, symbol side up, in the center of the Tower Mat"."""
    state = new_match()
    view = GAME.view(state, None)
    assert sorted(s["id"] for s in view["pool"]) == sorted(set_stones("starter"))
    assert {a["stone"] for a in GAME.legal_actions(state, 0)} == set(set_stones("starter"))
    assert GAME.legal_actions(state, 1) == []
    with pytest.raises(NotYourTurn):
        GAME.apply(state, 1, {"type": "pick", "stone": "draco-malfoy"})


def test_a_hand_takes_one_character_two_artifacts_and_two_elements():
    """003: "Both players must choose one Character (Silver) Stone, 2 Artifact (White) Stones, and 2 Element
    (Brown) Stones to complete their Casting Hands." Once seat 0 holds its character, the other one is
    refused to it and offered to seat 1."""
    state = new_match()
    state, _ = GAME.apply(state, 0, {"type": "pick", "stone": "harry-potter"})
    state, _ = GAME.apply(state, 1, {"type": "pick", "stone": "holly"})
    offered = {a["stone"] for a in GAME.legal_actions(state, 0)}
    assert "draco-malfoy" not in offered
    with pytest.raises(IllegalAction) as refused:
        GAME.apply(state, 0, {"type": "pick", "stone": "draco-malfoy"})
    assert "character" in refused.value.message
    assert GAME.view(state, 0)["players"][0]["to_pick"] == {"character": 0, "artifact": 2, "element": 2}


def test_a_stone_not_in_the_centre_cannot_be_picked():
    """000: stones are picked from the centre; a stone already taken is no longer there."""
    state = new_match()
    state, _ = GAME.apply(state, 0, {"type": "pick", "stone": "holly"})
    with pytest.raises(IllegalAction):
        GAME.apply(state, 1, {"type": "pick", "stone": "holly"})
    with pytest.raises(IllegalAction):
        GAME.apply(state, 1, {"type": "pick", "stone": "fluffy"})


def test_the_two_stones_nobody_picked_go_to_the_vault():
    """003: "Take the two Casting Stones that neither player selected and place them in the Vault."
    """
    state = new_match()
    events = []
    for a, b in zip(HAND_0, HAND_1):
        state, _ = GAME.apply(state, 0, {"type": "pick", "stone": a})
        state, events = GAME.apply(state, 1, {"type": "pick", "stone": b})
    assert sorted(state["vault"][0]) == sorted(LEFT_OVER)
    assert state["pool"] == []
    assert "vaulted" in event_types(events)
    assert [s["id"] for s in GAME.view(state, None)["vault"]] == state["vault"][0]


def test_every_random_draft_ends_with_legal_hands():
    """003: every hand is "one Character (Silver) Stone, 2 Artifact (White) Stones, and 2 Element (Brown)
    Stones", whatever order the picks come in; the Vault gets the two left over."""
    from tests.games.contract import random_playout
    for seed in range(40):
        playout = random_playout(GAME, "basic", 2, seed, max_actions=10)
        state = playout.final
        for hand in state["hands"]:
            assert Counter(STONES[s].type for s in hand) == {"character": 1, "artifact": 2, "element": 2}
        assert len(state["vault"][0]) == 2


def test_the_youngest_casts_first_on_the_first_turn():
    """000: "During the first turn of a new game, the youngest player casts first, followed by the oldest"."""
    state = drafted()
    assert (state["ph"], state["turn"], state["first"]) == ("cast", 1, 0)
    assert GAME.legal_actions(state, 0) == [{"type": "cast"}]
    assert GAME.legal_actions(state, 1) == []
