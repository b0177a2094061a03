"""Reading a cast (Spell, Potion, Charm, Bungle) and comparing two: manual section B, steps 1-3."""

import pytest

from service.engine import Rng
from service.games.casting_stones.casts import read_cast, winner_of
from service.games.casting_stones.rules import throw

from .helpers import HAND_0

# HAND_0: harry-potter 25 (character), shield-gryffindor 15, quills 6 (artifacts), holly 3, bat-spleen 2 (elements)


def test_a_spell_is_one_character_artifact_and_element_symbol_and_two_numbers():
    """000: "When a cast shows symbols on 1 Character (Silver) Stone, 1 Artifact (White) Stone and 1 Element
    (Brown) Stone, and numbers on the remaining two Casting Stones, you have conjured a Spell." Power: "add the
    numbers cast with each Spell"."""
    assert read_cast(HAND_0, "ssnsn") == ("spell", 6 + 2)
    assert read_cast(HAND_0, "snssn") == ("spell", 15 + 2)


def test_three_symbols_without_the_character_are_not_a_spell():
    """000: the Spell needs the character's symbol: "if you Knock their Character Stone into the Vault, they
    will be unable to cast any Spells until recovering it"."""
    assert read_cast(HAND_0, "nssns") == ("bungle", None)   # two artifacts and an element


def test_a_spell_needs_exactly_one_symbol_of_each_type():
    """Read strictly (docs: "What a Spell is"): "symbols on 1 Character ... 1 Artifact ... and 1 Element".
    A hand with two characters showing two character symbols and an artifact is no Spell."""
    hand = ["harry-potter", "draco-malfoy", "quills", "holly", "bat-spleen"]
    assert read_cast(hand, "sssnn") == ("bungle", None)
    assert read_cast(hand, "snsns") == ("spell", 25 + 3)


def test_chasers_are_not_wild_in_the_basic_game_but_are_in_the_advanced():
    """000: "In Advanced Games, Chasers are wild – they can become Character, Artifact or Element Stones"."""
    hand = ["sorting-hat", "shield-gryffindor", "quills", "holly", "bat-spleen"]
    assert read_cast(hand, "ssnsn") == ("bungle", None)
    assert read_cast(hand, "ssnsn", wild_chasers=True) == ("spell", 6 + 2)


def test_all_symbols_is_a_potion_all_numbers_a_charm():
    """000: "If all 5 Casting Stones land symbol-side up, you have pictured a Potion" and "If all 5 Casting
    Stones land numbered-side up, you have calculated a Charm" -- a Charm's power is the sum of all five."""
    assert read_cast(HAND_0, "sssss") == ("potion", None)
    assert read_cast(HAND_0, "nnnnn") == ("charm", 25 + 15 + 6 + 3 + 2)


def test_potions_and_charms_need_no_particular_types():
    """000: "You may throw a Potion with any combination of Casting Stones ... (i.e. a Potion could be thrown
    with only Element [Brown] Casting Stones)" and likewise a Charm "with only Artifact [White]" stones."""
    elements = ["holly", "mistletoe", "bat-spleen", "dittany", "beetles-eyes"]
    assert read_cast(elements, "sssss")[0] == "potion"
    assert read_cast(elements, "nnnnn") == ("charm", 3 + 3 + 2 + 1 + 1)


def test_an_uncast_stone_or_standing_leaner_is_not_yet_readable():
    """000: "You must tip all Leaners before the second cast begins" -- a Leaner has no face until tipped."""
    assert read_cast(HAND_0, "ssnsl") == ("pending", None)
    assert read_cast(HAND_0, "-----") == ("pending", None)


@pytest.mark.parametrize("a, b, winner", [
    ("spell", "potion", 0), ("potion", "charm", 0), ("charm", "spell", 0),
    ("potion", "spell", 1), ("charm", "potion", 1), ("spell", "charm", 1),
    ("spell", "bungle", 0), ("potion", "bungle", 0), ("charm", "bungle", 0), ("bungle", "charm", 1),
])
def test_spell_beats_potion_beats_charm_beats_spell_and_any_good_cast_beats_a_bungle(a, b, winner):
    """000: "Spell (3 Symbols + 2 Numbers) BEATS Potion (Symbols Only)", "Potion ... BEATS Charm", "Charm ...
    BEATS Spell" (003) and "any good cast (Spell, Potion or Charm) always beats a Bungle"."""
    power = {"spell": 10, "charm": 20}
    assert winner_of([a, b], [power.get(a), power.get(b)]) == winner


def test_equal_kinds_compare_totals_and_ties_win_nothing():
    """000: "If both players throw a Spell ... compare the totals ... If the Spells are a tie, no one wins";
    "If both players cast a Potion, they have a tie (2 Potions are always a tie)"; Charms: "add up the numbers
    ... If the Charms are a tie, no one wins that turn". Two Bungles: nobody wins (docs: "Ties")."""
    assert winner_of(["spell", "spell"], [8, 17]) == 1
    assert winner_of(["spell", "spell"], [17, 17]) is None
    assert winner_of(["charm", "charm"], [51, 50]) == 0
    assert winner_of(["charm", "charm"], [51, 51]) is None
    assert winner_of(["potion", "potion"], [None, None]) is None
    assert winner_of(["bungle", "bungle"], [None, None]) is None


def test_a_stone_shows_symbol_or_number_with_even_odds_and_leans_1_in_20():
    """DESIGN.md: "A cast stone shows its symbol or its number with even odds; with a small chance (option,
    default 1 in 20) it is a Leaner"."""
    faces = throw(Rng(99), 40000, 20)
    leaners = faces.count("l") / len(faces)
    assert 0.045 < leaners < 0.055
    symbols, numbers = faces.count("s"), faces.count("n")
    assert 0.48 < symbols / (symbols + numbers) < 0.52


def test_leaners_can_be_turned_off_or_made_certain():
    """DESIGN.md: the Leaner chance is a match option ("leaner_one_in"; 0: never)."""
    assert "l" not in throw(Rng(5), 5000, 0)
    assert throw(Rng(5), 50, 1) == "l" * 50


def test_the_same_rng_state_throws_the_same_faces():
    """Engine contract: same seed and actions give identical states -- the throw depends only on the RNG."""
    assert throw(Rng(7), 10, 20) == throw(Rng(7), 10, 20)
