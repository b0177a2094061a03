"""The Casting Stones data: the 125-stone catalogue, stone sets, the Tower Mat, variants.

Everything here is read from the JSON files beside this module, which are the
source of truth (how each field was read from the scans is in
``docs/rules/casting-stones.md``):

``stones.json``
    The concordance of section F ("1. Dumbledore ... 125. Fluffy", scan 003)
    joined with the stone chart on the back of the manual (scan 000): each
    stone's number-side value, rarity, chart group and type.
``sets.json``
    Named sets of stones a match is played with; the Basic Game uses the
    12-stone ``starter`` set ("12 Casting Stones (2 Silver, 4 White, 6 Brown)",
    CONTENTS OF STARTER SET).
``mat.json``
    The Tower Mat: 8 turrets in a ring, 6 Turret Gems a player, 4 in a row win.
``variants.json``
    What each variant changes (stone set, hand make-up, vaults, wild Chasers).

Stones are named everywhere (state, actions, views, events) by their ``id``,
a stable slug of the concordance name, e.g. ``"harry-potter"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.engine import load_data

#: The four stone types. "Silver: Is a Character / White: Is an Artifact /
#: Brown: Is an Element" and "These black Stones are called Chasers" (A).
CHARACTER, ARTIFACT, ELEMENT, CHASER = "character", "artifact", "element", "chaser"
STONE_TYPES = (CHARACTER, ARTIFACT, ELEMENT, CHASER)

#: "The easiest to locate are listed as Common, followed by Uncommon, then
#: Rare, Rare Foil, with black Chasers being the hardest to find of all." (F)
RARITIES = ("common", "uncommon", "rare", "rare_foil", "chaser")


@dataclass(frozen=True)
class Stone:
    n: int           # concordance number, 1..125
    id: str          # slug used in state, actions and views
    name: str        # concordance name
    type: str        # one of STONE_TYPES
    number: int      # the value cast on the number side
    rarity: str      # one of RARITIES
    group: str       # the chart heading it is listed under
    chart_name: str  # its label on the chart, as printed

    def public(self) -> dict[str, Any]:
        """What a client needs to draw the stone without loading the catalogue."""
        return {"id": self.id, "n": self.n, "name": self.name, "type": self.type, "number": self.number,
                "rarity": self.rarity}


@dataclass(frozen=True)
class VariantRules:
    id: str
    title: str
    description: str
    stone_set: str                 # key into sets.json
    hand_quota: dict[str, int]     # stones of each type a Casting Hand is drafted with
    shared_vault: bool             # Basic/Intermediate: one Vault; Advanced: one per player
    wild_chasers: bool             # Advanced: "Chasers are wild"

    @property
    def hand_size(self) -> int:
        return sum(self.hand_quota.values())


def _load() -> tuple[dict[str, Stone], dict[str, dict[str, Any]], dict[str, Any], dict[str, VariantRules]]:
    stones = {}
    for row in load_data(__package__, "stones.json")["stones"]:
        stone = Stone(**row)
        stones[stone.id] = stone
    sets = load_data(__package__, "sets.json")["sets"]
    for name, stone_set in sets.items():
        unknown = [s for s in stone_set["stones"] if s not in stones]
        if unknown:
            raise ValueError(f"stone set {name!r} names unknown stones {unknown}")
    mat = load_data(__package__, "mat.json")
    variants = {}
    for row in load_data(__package__, "variants.json")["variants"]:
        variants[row["id"]] = VariantRules(**row)
    return stones, sets, mat, variants


STONES, STONE_SETS, MAT, VARIANTS = _load()

#: The turrets round the Tower Mat; turret ``i`` is adjacent to ``i - 1`` and
#: ``i + 1`` modulo their number ("the Tower Mat has 8 turrets in a ring", DESIGN.md).
TURRET_NAMES: tuple[str, ...] = tuple(MAT["turrets"])
TURRETS = len(TURRET_NAMES)
#: "sets all six Turret Gems of that color in a line to their left" (GETTING STARTED).
GEMS_PER_PLAYER: int = MAT["gems_per_player"]
#: "until one of you conquers four adjacent Turrets" (OBJECTIVE).
RUN_TO_WIN: int = MAT["run_to_win"]


def stone(stone_id: str) -> Stone:
    return STONES[stone_id]


def set_stones(name: str) -> list[str]:
    """The stone ids of a named stone set, in concordance order."""
    return sorted(STONE_SETS[name]["stones"], key=lambda s: STONES[s].n)
