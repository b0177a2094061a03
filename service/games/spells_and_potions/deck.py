"""The cards of Spells and Potions, read from ``cards.json``.

Rule book (004_3d98a563beabace2.txt), "Basic Spells and Potions Definitions":
"Element Cards - Number cards (1 to 10 per element/40 cards per deck)" in the
"Four Magical Elements" Fire, Earth, Air and Water, and "Spells and Potions
Cards - Magical cards with specific instructions for each one (12 in a basic
deck)".

Every card has a short unique id: ``fire-7`` for the 7 of Fire, and
``<spell>-<copy>`` for a Spells and Potions Card (``power-blast-2`` is the
second Merlin's Power Blast). Ids are what states, views and actions carry.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.engine import load_data

DATA = load_data(__package__, "cards.json")

#: Element ids in the rule book's order (Fire, Earth, Air, Water); also the
#: order hands are sorted in.
ELEMENTS: tuple[str, ...] = tuple(e["id"] for e in DATA["elements"])
RANKS: tuple[int, ...] = tuple(DATA["ranks"])
#: "the trump is Fire, unless the Larfor's Trump Choice card is played"
DEFAULT_TRUMP: str = DATA["default_trump"]
#: "each player should have 10 [Element Cards]" and "3 [Spells and Potions Cards]"
HAND_ELEMENTS: int = DATA["hand"]["elements"]
HAND_SPELLS: int = DATA["hand"]["spells"]


@dataclass(frozen=True)
class Spell:
    """One kind of Spells and Potions Card, as the data file describes it."""

    id: str
    name: str
    copies: int
    kind: str  # "spell" or "potion"
    effect: str  # "potion_points", "reverse", "shield", "blast", "name_leader", "choose_trump"
    text: str
    potion_points: int = 0
    rank_bonus: float = 0.0


SPELLS: tuple[Spell, ...] = tuple(
    Spell(id=s["id"], name=s["name"], copies=s["copies"], kind=s["kind"], effect=s["effect"], text=s["text"],
          potion_points=s.get("potion_points", 0), rank_bonus=s.get("rank_bonus", 0.0))
    for s in DATA["spells"]
)

ELEMENT_CARDS: tuple[str, ...] = tuple(f"{element}-{rank}" for element in ELEMENTS for rank in RANKS)
SPELL_CARDS: tuple[str, ...] = tuple(f"{s.id}-{copy}" for s in SPELLS for copy in range(1, s.copies + 1))

_SPELL_OF_CARD: dict[str, Spell] = {f"{s.id}-{copy}": s for s in SPELLS for copy in range(1, s.copies + 1)}
_ELEMENT_OF_CARD: dict[str, tuple[str, int]] = {
    f"{element}-{rank}": (element, rank) for element in ELEMENTS for rank in RANKS
}
# Hands are shown sorted: elements in the rule book's order and by rank, then
# the Spells and Potions Cards in the data file's order.
_SORT_KEY: dict[str, int] = {card: i for i, card in enumerate(ELEMENT_CARDS + SPELL_CARDS)}


def is_element(card: str) -> bool:
    return card in _ELEMENT_OF_CARD


def is_spell(card: str) -> bool:
    """A Spells and Potions Card (potions included)."""
    return card in _SPELL_OF_CARD


def element_of(card: str) -> str | None:
    """The element of an Element Card; None for a Spells and Potions Card."""
    found = _ELEMENT_OF_CARD.get(card)
    return found[0] if found else None


def rank_of(card: str) -> int:
    return _ELEMENT_OF_CARD[card][1]


def spell_of(card: str) -> Spell:
    return _SPELL_OF_CARD[card]


def effect_of(card: str) -> str | None:
    """The effect keyword of a Spells and Potions Card; None for an Element Card."""
    spell = _SPELL_OF_CARD.get(card)
    return spell.effect if spell else None


def sort_cards(cards: list[str]) -> list[str]:
    return sorted(cards, key=_SORT_KEY.__getitem__)


def deck(with_spells: bool) -> list[str]:
    """Every card in play, in canonical order: 52, or the 40 Element Cards alone."""
    return list(ELEMENT_CARDS + SPELL_CARDS) if with_spells else list(ELEMENT_CARDS)


_ELEMENT_NAMES: dict[str, str] = {e["id"]: e["name"] for e in DATA["elements"]}


def _entry(card: str) -> dict:
    """The catalogue entry of one card (schema.json "card")."""
    if is_element(card):
        element, rank = _ELEMENT_OF_CARD[card]
        name = DATA["element_card_name"].format(rank=rank, element=_ELEMENT_NAMES[element])
        return {"id": card, "name": name, "kind": "element", "element": element, "rank": rank, "text": None,
                "effect": None, "potion_points": None, "rank_bonus": None}
    spell = _SPELL_OF_CARD[card]
    return {"id": card, "name": spell.name, "kind": spell.kind, "element": None, "rank": None, "text": spell.text,
            "effect": spell.effect, "potion_points": spell.potion_points if spell.effect == "potion_points" else None,
            "rank_bonus": spell.rank_bonus or None}


# Built once (static data), handed out as copies.
_CATALOGUE: tuple[dict, ...] = tuple(_entry(card) for card in ELEMENT_CARDS + SPELL_CARDS)


def catalogue() -> list[dict]:
    """Every card of the deck, once, in deck order (the Element Cards by element and rank, then the Spells and
    Potions Cards): the ``cards`` catalogue. Public knowledge, like a printed deck list: it says nothing of
    where a card is in a match."""
    return [dict(entry) for entry in _CATALOGUE]
