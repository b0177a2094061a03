"""COLLECTING CASTING STONES: the catalogue query, themed hands and the Starter/Refill pack generator."""

from collections import Counter

import jsonschema
import pytest

from service.engine import Rng
from service.games.casting_stones import GAME
from service.games.casting_stones.catalogue import RARITIES, STONE_TYPES, STONES, stones
from service.games.casting_stones.collecting import (
    PACKS, REFILL, STARTER, bring_problem, generated_collection, open_pack, open_packs, themed_hands,
)

GAME_CARDS = ["double-potion", "charms", "draco-malfoy"]
STONE_ENTRY = jsonschema.Draft202012Validator(GAME.schema["stone"])


def test_the_catalogue_query_filters_by_type_and_rarity():
    """The issue: the catalogue is "filterable by type and rarity"; 000: "You can look up a picture of each Casting
    Stone—along with its Name, Type and Rarity". Entries come in concordance order ("1. Dumbledore ... 125.
    Fluffy") and match schema.json's "stone"."""
    everything = stones()
    assert [s["n"] for s in everything] == list(range(1, 126))
    for entry in everything:
        STONE_ENTRY.validate(entry)
    assert {s["id"] for s in stones(type="chaser")} == {"sorting-hat", "cloak-of-invisibility", "nimbus-two-thousand",
                                                        "sorcerers-stone", "fluffy"}
    assert all(s["rarity"] == "rare_foil" for s in stones(rarity="rare_foil")) and len(stones(rarity="rare_foil")) == 16
    assert stones(type="character", rarity="chaser") == []
    assert sum(len(stones(type=t)) for t in STONE_TYPES) == sum(len(stones(rarity=r)) for r in RARITIES) == 125
    assert stones(type="dragon") == []


def test_the_catalogue_entry_schema_is_the_views_stone():
    """One "Stone" type for the API: schema.json's "stone" (titled Stone) is the very schema of the stones in views,
    so GraphQL and OpenAPI generate one type."""
    assert GAME.schema["stone"]["title"] == "Stone"
    assert GAME.schema["stone"]["properties"] == GAME.view_schema["properties"]["pool"]["items"]["properties"]
    assert GAME.schema["stone"]["required"] == GAME.view_schema["properties"]["vault"]["items"]["required"]


def test_the_themed_hands_are_the_manuals_themes_and_valid_collections():
    """000, GAME HINTS & STRATEGIES: "try designing your Hand around a theme. Perhaps you'll be interested in the
    Harry Potter Hand, or the Voldemort Hand, or maybe even give Hermione or Ron Weasley a try"."""
    offers = themed_hands()
    titles = [o["title"] for o in offers]
    for theme in ("Harry Potter Hand", "Voldemort Hand", "Hermione Granger Hand", "Ron Weasley Hand"):
        assert theme in titles
    for offer in offers:
        assert bring_problem(offer["action"], stones=10, cards=3, hand=5) is None, offer["id"]
        title_stone = offer["id"]
        assert title_stone in offer["action"]["hand"]          # the theme's own character is cast
    draco = next(o for o in offers if o["id"] == "draco-malfoy")
    assert draco["action"]["hand"] == ["crabbe", "draco-malfoy", "eagle-owl", "goyle", "shield-slytherin"]
    assert "draco-malfoy" in draco["action"]["cards"]


def test_a_starter_pack_holds_2_silver_4_white_6_brown_and_the_two_starter_cards():
    """000: "12 Casting Stones™ (2 Silver, 4 White, 6 Brown)", "2 Casting Cards (1 Double Potion, 1 Charms)"."""
    for seed in range(20):
        pack = open_pack(Rng(seed), STARTER)
        assert Counter(STONES[s].type for s in pack["stones"]) == {"character": 2, "artifact": 4, "element": 6}
        assert len(set(pack["stones"])) == 12
        assert pack["cards"] == ["double-potion", "charms"]


def test_a_refill_pack_holds_4_stones_and_a_card_not_from_the_starter_set():
    """000: ""Refill Sets" contain 4 Casting Stones and 1 Casting Card you can use for Advanced Gameplay"."""
    pack = open_pack(Rng(3), REFILL, ["double-potion", "charms"])
    assert len(set(pack["stones"])) == 4 and pack["cards"] == ["draco-malfoy"]
    assert open_pack(Rng(3), REFILL, ["double-potion", "charms", "draco-malfoy"])["cards"] == []


def test_packs_are_weighted_by_rarity_and_seeded():
    """000: "The easiest to locate are listed as Common, followed by Uncommon, then Rare, Rare Foil, with black
    Chasers being the hardest to find of all." Per stone, commons come out most often and Chasers least; the same
    seed opens the same pack."""
    drawn = Counter()
    rng = Rng(2024)
    for _ in range(1500):
        drawn.update(STONES[s].rarity for s in open_pack(rng, REFILL, list(GAME_CARDS))["stones"])
    per_stone = {r: drawn[r] / sum(1 for s in STONES.values() if s.rarity == r) for r in RARITIES}
    ranked = [per_stone[r] for r in ("common", "uncommon", "rare", "rare_foil", "chaser")]
    assert ranked == sorted(ranked, reverse=True) and len(set(ranked)) == 5
    assert per_stone["chaser"] > 0
    weights = PACKS["rarity_weights"]
    assert per_stone["common"] / per_stone["rare"] == pytest.approx(weights["common"] / weights["rare"], rel=0.5)
    assert open_pack(Rng(5), REFILL) == open_pack(Rng(5), REFILL)


@pytest.mark.parametrize("seed", range(0, 400, 37))
def test_a_generated_collection_is_a_valid_spell_ready_collection(seed):
    """000: "Both you and your opponent will need to buy at least one Refill Set apiece to play the Advanced Game"
    -- a Starter and Refills give 10 different stones and 3 cards; the hand can make a Spell (one of each type, a
    Chaser standing in: "Chasers are wild")."""
    action = generated_collection(seed)
    assert bring_problem(action, stones=10, cards=3, hand=5) is None
    types = {STONES[s].type for s in action["hand"]}
    assert len(types & {"character", "artifact", "element"}) + ("chaser" in types) >= 3
    assert generated_collection(seed) == action


def test_opening_a_starter_and_refills_from_a_seed():
    """000: "Refill Sets are how you build your collection" -- the pack query opens a Starter then Refills; each
    Refill's card is one the collection lacks while there is one."""
    opened = open_packs(11, starters=1, refills=2)
    assert [p["kind"] for p in opened] == ["starter", "refill", "refill"]
    assert [len(p["stones"]) for p in opened] == [12, 4, 4]
    assert opened[1]["cards"] == ["draco-malfoy"] and opened[2]["cards"] == []
    assert open_packs(11, starters=1, refills=2) == opened and open_packs(12, 1, 2) != opened
