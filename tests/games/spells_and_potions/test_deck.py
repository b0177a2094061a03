"""The cards and the deal (rule book 004_3d98a563beabace2.txt)."""

from collections import Counter

import pytest

from service.games.spells_and_potions import deck

from .helpers import new


def test_forty_element_cards():
    """004_3d98a563beabace2.txt: "Element Cards - Number cards (1 to 10 per
    element/40 cards per deck)" in "1) Fire 2) Earth 3) Air 4) Water"."""
    assert len(deck.ELEMENT_CARDS) == 40
    assert deck.ELEMENTS == ("fire", "earth", "air", "water")
    for element in deck.ELEMENTS:
        ranks = sorted(deck.rank_of(c) for c in deck.ELEMENT_CARDS if deck.element_of(c) == element)
        assert ranks == list(range(1, 11))


def test_twelve_spells_and_potions_cards():
    """004_3d98a563beabace2.txt: "Spells and Potions Cards ... (12 in a basic
    deck)": Gladder's Reward (1), Pranxtor's Fiery Reverse (2), Jaype's Trump
    Shield (2), Merlin's Power Blast (2), Merlin's New Apprentice (2), Larfor's
    Trump Choice (2), Harpier's Penalty (1)."""
    counts = Counter(deck.spell_of(c).name for c in deck.SPELL_CARDS)
    assert counts == {
        "Gladder's Reward": 1, "Pranxtor's Fiery Reverse": 2, "Jaype's Trump Shield": 2, "Merlin's Power Blast": 2,
        "Merlin's New Apprentice": 2, "Larfor's Trump Choice": 2, "Harpier's Penalty": 1,
    }
    assert len(set(deck.ELEMENT_CARDS + deck.SPELL_CARDS)) == 52
    assert "power-blast-1" in deck.SPELL_CARDS and "fire-7" in deck.ELEMENT_CARDS


def test_potion_points_of_reward_and_penalty():
    """004_3d98a563beabace2.txt: "Gladder's Reward (1) Adds 10 points to a
    trick"; "Harpier's Penalty (1) Subtracts 10 points from the value of the
    trick"."""
    assert deck.spell_of("reward-1").potion_points == 10
    assert deck.spell_of("penalty-1").potion_points == -10
    assert deck.spell_of("power-blast-1").rank_bonus == 2.5


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_deal_ten_elements_and_three_spells_to_each_hand(seats):
    """004_3d98a563beabace2.txt: "Deal the Element Cards until you run out (each
    player should have 10) and then deal Spells and Potions Cards (each player
    should have 3)"; Companions are dealt a hand too ("deals 3 to each wizard
    and 3 to the Wizard's Companion")."""
    state = new("practice-3", seats, seed=11)
    for hand in state["hands"]:
        assert sum(deck.is_element(c) for c in hand) == 10
        assert sum(deck.is_spell(c) for c in hand) == 3
    assert sorted(c for h in state["hands"] for c in h) == sorted(deck.deck(True))


@pytest.mark.parametrize("variant", ["practice-1", "practice-2"])
def test_first_practice_rounds_use_element_cards_only(variant):
    """004_3d98a563beabace2.txt: "1) Follow the Leader: Play a basic round;
    following the lead element without using trumps or Spells and Potions
    Cards. 2) Watch out for Trump: Add in the Trump element" -- Spells and
    Potions Cards come in only with round 3."""
    state = new(variant, 4, seed=3)
    assert all(len(h) == 10 and all(deck.is_element(c) for c in h) for h in state["hands"])
    assert state["trump"] == (None if variant == "practice-1" else "fire")


def test_deal_depends_only_on_the_seed():
    """Same seed, same deal (DESIGN.md: "re-applying a match's action log to its
    seed reproduces every state bit for bit"); another seed, another deal."""
    assert new("practice-3", 4, seed=5) == new("practice-3", 4, seed=5)
    assert new("practice-3", 4, seed=5)["hands"] != new("practice-3", 4, seed=6)["hands"]
