"""Hidden information: what each wizard may and may not see.

004_3d98a563beabace2.txt: "It is considered rude to look at another wizard's
hand"; Companions: "Companion's hands must be placed face-up so that all
wizards can see it"; "The Wizard of the South shuffles the Element Cards and
deals 10 face-down to each wizard." DESIGN.md: view is "the only door out of a
state".
"""

import json

import pytest

from service.games.spells_and_potions import GAME
from tests.games.contract import PROPERTY_GAMES, random_playout

from .helpers import hidden_from, new, strings_in, visible_events

# Every view of every seat at every step is searched: a twentieth of
# PROPERTY_GAMES per seat count (10 at the default) keeps this to a few seconds.
GAMES = max(2, PROPERTY_GAMES // 20)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_no_view_or_visible_event_shows_another_wizards_hand(seats):
    """Over seeded random matches (Ritual and practice), no view or visible event
    of a wizard or spectator ever holds a card id that sits in another
    wizard's hand, nor the RNG state. (A ``last_trick`` from the previous duel
    names cards laid face up in that duel, checked against its public plays.)"""
    for seed in range(GAMES):
        variant = ["ritual", "practice-3", "practice-rounds"][seed % 3]
        playout = random_playout(GAME, variant, seats, seed)
        states = [playout.initial] + [s.state_after for s in playout.steps]
        laid_in_duel: dict[int, list[str]] = {}  # from public events only
        for index, state in enumerate(states):
            step = playout.steps[index - 1] if index else None
            if step is not None and step.action["type"] == "play":
                laid_in_duel.setdefault(step.state_before["duel"] + 1, []).append(step.action["card"])
            for seat in [None, *range(seats)]:
                view = GAME.view(state, seat)
                last = view["last_trick"]
                if last is not None and last["duel"] < view["duel"]:
                    # The previous duel's last trick, kept over the new deal: its cards were laid face up
                    # then; the same ids in the new hands are other, freshly dealt cards.
                    assert {c["card"] for c in last["cards"]} <= set(laid_in_duel[last["duel"]])
                    view = dict(view, last_trick=None)
                leaked = hidden_from(state, seat) & strings_in(view)
                assert not leaked, (variant, seed, index, seat, leaked)
                assert str(state["rng"]) not in json.dumps(view)
                if step is None:
                    continue
                # The events of a step may name the card it laid (now public),
                # even when the step ends a duel and that card is dealt afresh.
                secret = (hidden_from(step.state_before, seat) | hidden_from(state, seat)) - {step.action.get("card")}
                leaked = secret & strings_in(visible_events(step.events, seat))
                assert not leaked, (variant, seed, index, seat, leaked)


def test_each_wizard_sees_own_hand_and_companions_not_others():
    """Two wizards: "The Companions' hands must be placed face-up so that both
    wizards can see them" -- seat 0 sees its hand and both Companions', not
    seat 1's hand, whose size alone is shown."""
    state = new("practice-3", 2, seed=9)
    view = GAME.view(state, 0)
    by_post = {p["post"]: p for p in view["table"]}
    assert by_post["south"]["hand"] == state["hands"][2]
    assert by_post["north"]["hand"] == state["hands"][0] and by_post["east"]["hand"] == state["hands"][1]
    assert by_post["west"]["hand"] == [] and not by_post["west"]["hand_visible"]
    assert by_post["west"]["hand_size"] == 13
    spectator = {p["post"]: p for p in GAME.view(state, None)["table"]}
    assert spectator["south"]["hand"] == [] and spectator["north"]["hand"] == state["hands"][0]


def test_dealt_hands_go_only_to_their_wizard():
    """A duel's deal sends each wizard their own hand (private event) and
    everyone the Companion's face-up hand and the hand sizes (public)."""
    state = new("ritual", 3, seed=2)
    state, events = GAME.apply(state, state["arranger"], {"type": "arrange", "posts": ["east", "south", "west"]})
    hands = [e for e in events if e["type"] == "hand"]
    assert [e.get("audience") for e in hands] == [None, [0], [1], [2]]
    assert any(e["type"] == "dealt" and e["hand_sizes"] == [13, 13, 13, 13] for e in events)
    seen_by_0 = visible_events(events, 0)
    assert {e["post"] for e in seen_by_0 if e["type"] == "hand"} == {"north", "east"}


def test_before_the_arrangement_no_hand_is_shown():
    """Ritual Phase 1 comes before any deal ("Phase 3: Duels! ... deals"): the
    posts are empty and no hand is visible or held."""
    view = GAME.view(new("ritual", 4, seed=1), 0)
    assert view["phase"] == "arrange"
    assert all(not p["hand_visible"] and p["hand"] == [] and p["wizard"] is None for p in view["table"])
