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
    What each variant changes (stone set, hand make-up, vaults, wild Chasers,
    the Library of Casting Cards, collections brought by the players).

The Casting Cards are in ``cards.json`` and :mod:`.cards`; themed hands and
the Starter/Refill pack generator of the Advanced Game in :mod:`.collections`.

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

    def __post_init__(self) -> None:
        # Both dicts are built once (views ask for them on every step) and handed out as copies.
        public = {"id": self.id, "n": self.n, "name": self.name, "type": self.type, "number": self.number,
                  "rarity": self.rarity}
        object.__setattr__(self, "_public", public)
        object.__setattr__(self, "_entry", dict(public, group=self.group, chart_name=self.chart_name))

    def public(self) -> dict[str, Any]:
        """What a client needs to draw the stone without loading the catalogue."""
        return self._public.copy()

    def entry(self) -> dict[str, Any]:
        """The whole catalogue entry (schema.json "stone"): public fields plus the chart's group and label."""
        return self._entry.copy()


@dataclass(frozen=True)
class VariantRules:
    id: str
    title: str
    description: str
    stone_set: str | None          # key into sets.json: the stones drafted at set-up (None: players bring theirs)
    hand_quota: dict[str, int]     # stones of each type a Casting Hand is drafted with
    shared_vault: bool             # Basic/Intermediate: one Vault; Advanced: one per player
    wild_chasers: bool             # Advanced: "Chasers are wild"
    hand_size: int = 5             # "These 5 Stones form your Casting Hand" (GAME SUMMARY)
    library: tuple[str, ...] = ()  # Intermediate: the cards dealt face-down after the draft (THE LIBRARY)
    collection_size: int = 0       # Advanced: stones each player brings ("10 Casting Stones"); 0: a draft
    counter_spells: bool = False   # Advanced: "COUNTER SPELLS on Casting Cards play just like SPELLS"
    card_actions: bool = False     # Advanced: victory actions also swap and knock Casting Cards

    @property
    def brings_collections(self) -> bool:
        return self.collection_size > 0


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
        rules = VariantRules(**dict(row, library=tuple(row.get("library", ()))))
        if rules.stone_set is not None:
            if rules.stone_set not in sets:
                raise ValueError(f"variant {rules.id!r} names unknown stone set {rules.stone_set!r}")
            if sum(rules.hand_quota.values()) != rules.hand_size:
                raise ValueError(f"variant {rules.id!r}: the draft quota does not make a {rules.hand_size}-stone hand")
        variants[rules.id] = rules
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


def stones(type: str | None = None, rarity: str | None = None) -> list[dict[str, Any]]:  # noqa: A002 (API names)
    """The catalogue entries (schema.json "stone"), in concordance order, filtered by type and/or rarity.

    A pure function for the catalogue endpoints: ``stones(type="chaser")``, ``stones(rarity="common")``.
    An unknown type or rarity matches nothing (the API validates them against the enums).
    """
    return [s.entry() for s in sorted(STONES.values(), key=lambda s: s.n)
            if (type is None or s.type == type) and (rarity is None or s.rarity == rarity)]


def turret_index(name: str) -> int:
    """The index round the ring of the turret called ``name`` (mat.json), e.g. Slytherin -> 4."""
    return TURRET_NAMES.index(name)
