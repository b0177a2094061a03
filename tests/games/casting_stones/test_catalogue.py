"""The stone catalogue (stones.json), the starter set, the Tower Mat and variants."""

import re
from collections import Counter
from pathlib import Path

import pytest

from service.games.casting_stones.catalogue import (
    GEMS_PER_PLAYER, RARITIES, RUN_TO_WIN, STONE_SETS, STONE_TYPES, STONES, TURRET_NAMES, TURRETS, VARIANTS,
    set_stones,
)

SEEDS = Path(__file__).resolve().parents[3].parent / "shared" / "seeds"  # CI clones the repo beside shared/
BY_NAME = {s.name: s for s in STONES.values()}


def test_there_are_125_stones_numbered_1_to_125():
    """003_82b6d6042101b6cb.txt: "This edition of the game has 70 different Casting Cards and 125 Casting
    Stones" and the concordance runs "1. Dumbledore" to "125. Fluffy"."""
    assert len(STONES) == 125
    assert sorted(s.n for s in STONES.values()) == list(range(1, 126))
    by_n = {s.n: s for s in STONES.values()}
    assert by_n[1].name == "Dumbledore" and by_n[125].name == "Fluffy"


def test_ids_are_unique_stable_slugs():
    """Stone ids are slugs of the concordance name (docs: "Stone ids")."""
    for stone in STONES.values():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", stone.id), stone.id
    assert STONES["harry-potter"].n == 11
    assert STONES["dumbledores-wand"].n == 4


def test_the_five_chasers_are_the_stones_numbered_50():
    """DESIGN.md: "Chasers (black) are the five stones numbered 50 in the chart." (000: "Sorting Hat ★★★★★ 50",
    "Cloak of Invisibility ★★★★★ 50", "Fluffy ★★★★★ 50", "Sorcerer's Stone ★★★★★ 50",
    "Nimbus Two Thousand ★★★★★ 50")."""
    chasers = {s.id for s in STONES.values() if s.type == "chaser"}
    fifty = {s.id for s in STONES.values() if s.number == 50}
    assert chasers == fifty == {"sorting-hat", "cloak-of-invisibility", "fluffy", "sorcerers-stone",
                                "nimbus-two-thousand"}
    assert all(STONES[c].rarity == "chaser" for c in chasers)


def test_every_type_and_rarity_is_present():
    """000: "Silver: Is a Character / White: Is an Artifact / Brown: Is an Element", "A fourth type of Stone
    exists. These black Stones are called Chasers"; rarities "Common, ... Uncommon, then Rare, Rare Foil"."""
    types = Counter(s.type for s in STONES.values())
    assert set(types) == set(STONE_TYPES)
    assert all(types[t] >= 5 for t in STONE_TYPES)
    assert set(Counter(s.rarity for s in STONES.values())) == set(RARITIES)


@pytest.mark.parametrize("name, kind", [
    ("Draco Malfoy", "character"), ("Eagle Owl", "character"), ("Shield Slytherin", "artifact"),
    ("Crabbe", "character"), ("Goyle", "character"),
])
def test_the_stones_the_draco_malfoy_card_names_exist(name, kind):
    """000: "you will need to have the Draco Malfoy, Eagle Owl, Shield Slytherin, Crabbe, and Goyle Casting
    Stones in your Casting Hand"."""
    assert BY_NAME[name].type == kind


@pytest.mark.parametrize("stone_id, number, chart_name", [
    ("dumbledore", 25, "Dumbledore"), ("neville-longbottom", 20, "Neville Longbottom"),
    ("bezoar", 10, "Beaver"), ("mouse", 9, "Moose"), ("flying-keys", 9, "Winged Key"),
    ("ptolemy", 15, "Potemys"), ("ronan", 15, "Roman"), ("emeric-the-evil", 15, "Emerie the Evil"),
    ("griphook", 10, "Gripbook"), ("eels-eyes", 2, "Gels Eyes"), ("weasley-sweater", 9, "Wesley Sweater"),
    ("james-potters-wand", 15, "Mobygony Wand"), ("lilys-wand", 15, "Willow Wand"), ("fungi", 1, "Fungi"),
])
def test_stones_spelt_otherwise_on_the_chart_are_reconciled_not_dropped(stone_id, number, chart_name):
    """The chart (000) prints "Beaver ★★ 10", "Moose ★ 9", "Winged Key ★ 9", "Potemys ★★ 15" ... where the
    concordance (003) has "42. Bezoar", "100. Mouse", "115. Flying Keys", "72. Ptolemy"."""
    stone = STONES[stone_id]
    assert (stone.number, stone.chart_name) == (number, chart_name)


def test_rarity_follows_the_chart_stars():
    """000 legend: "★★★★★ Chaser / ★★★★★ Rare Foil / ★★★★★ Rare / ★★★★★ Uncommon / ★ Common"; the scan
    prints one, two or five stars (docs: "Rarity")."""
    assert STONES["fungi"].rarity == "common"                # "Fungi ★ 1"
    assert STONES["put-outer"].rarity == "uncommon"          # "Put-Outer ★★ 15"
    assert STONES["mirror-of-erised"].rarity == "rare"       # "Mirror of Erised ★★★★★ 20"
    assert STONES["harry-potter"].rarity == "rare_foil"      # "Harry Potter ★★★★★ 25"
    assert {s.rarity for s in STONES.values() if s.number == 25} == {"rare_foil"}


@pytest.mark.skipif(not (SEEDS / "000_a80342418ab30e6c.txt").exists(), reason="rule-book scans not present")
def test_every_chart_row_is_one_catalogue_stone():
    """000's chart lists each stone as "<name> <stars> <number>" under its group heading: every one of its
    125 rows is exactly one catalogue stone (group, chart name, number and stars)."""
    text = (SEEDS / "000_a80342418ab30e6c.txt").read_text(encoding="utf-8")
    chart = text.split("Casting Stones™ Chart")[1].split("★★★★★ Chaser")[0]
    rows, group = [], None
    for line in filter(None, (raw.strip() for raw in chart.splitlines())):
        match = re.fullmatch(r"(.*?)\s+(★+)\s+(\d+)", line)
        if match:
            rows.append((group, match[1], len(match[2]), int(match[3])))
        else:
            group = line
    stars = {"common": 1, "uncommon": 2}
    ours = sorted((s.group, s.chart_name, stars.get(s.rarity, 5), s.number) for s in STONES.values())
    assert sorted(rows) == ours


@pytest.mark.skipif(not (SEEDS / "003_82b6d6042101b6cb.txt").exists(), reason="rule-book scans not present")
def test_every_concordance_entry_is_named_as_in_scan_003():
    """003's numbered list ("1. Dumbledore ... 125. Fluffy") is the source of the names."""
    text = (SEEDS / "003_82b6d6042101b6cb.txt").read_text(encoding="utf-8").replace("™", "").replace("’", "'")
    flat = " ".join(text.split()).replace("Self- Protection", "Self-Protection")  # a line break in the scan
    for stone in STONES.values():
        assert f"{stone.n}. {stone.name}" in flat, stone.name


def test_the_starter_set_is_2_silver_4_white_6_brown():
    """000, CONTENTS OF STARTER SET: "12 Casting Stones™ (2 Silver, 4 White, 6 Brown)"."""
    starter = set_stones("starter")
    assert len(starter) == len(set(starter)) == 12
    assert Counter(STONES[s].type for s in starter) == {"character": 2, "artifact": 4, "element": 6}


def test_the_starter_set_comes_in_equal_pairs():
    """Our choice (docs: "The starter set"): each type's values pair up, so the second picker can always
    match the first picker's numbers."""
    by_type = {}
    for s in set_stones("starter"):
        by_type.setdefault(STONES[s].type, []).append(STONES[s].number)
    for numbers in by_type.values():
        assert all(count % 2 == 0 for count in Counter(numbers).values())


@pytest.mark.parametrize("variant", sorted(v for v in VARIANTS if VARIANTS[v].stone_set))
def test_every_stone_set_can_fill_both_hands(variant):
    """003: "Both players must choose one Character (Silver) Stone, 2 Artifact (White) Stones, and 2 Element
    (Brown) Stones" -- a variant's set must hold at least twice each quota, with some left for the Vault.
    (Every variant that drafts from a stone set; in the Advanced Game each player brings their own stones.)"""
    rules = VARIANTS[variant]
    counts = Counter(STONES[s].type for s in STONE_SETS[rules.stone_set]["stones"])
    assert all(counts[t] >= 2 * n for t, n in rules.hand_quota.items())
    assert sum(counts.values()) > 2 * rules.hand_size


def test_the_tower_mat_has_8_turrets_6_gems_and_4_to_win():
    """DESIGN.md: "The Tower Mat has 8 turrets in a ring. Four adjacent turrets held wins." and 000: "sets all
    six Turret Gems of that color in a line to their left"."""
    assert TURRETS == 8 and GEMS_PER_PLAYER == 6 and RUN_TO_WIN == 4
    assert len(set(TURRET_NAMES)) == 8
    assert TURRET_NAMES.index("Slytherin") - TURRET_NAMES.index("Gryffindor") == 4
