"""The 90 cards of the Sorcerer's Stone, as the ``cards`` catalogue lists them for clients.

Rule book (002_5ac5154540885c00.txt), COMPONENTS: "90 Cards", in three decks ("the Hagrid's Challenge
deck, the Snape's Challenge deck, and the Mirror of Erised deck"): 40 Musical Note Cards, 26 Potions Cards
and 14 Incantations Cards, 10 Mirror of Erised Cards. Each board reads its own deck from its data file
(``hagrid.json``, ``snape.json``, ``mirror.json``); names and texts live there too.

Cards of one kind are alike, so the catalogue lists each kind once with its ``count``, under the id views
and actions carry: a Musical Note Card by its number of notes (an integer there, ``"1"`` to ``"4"`` here),
a Snape's Challenge card by name (``"6R"``, ``"another_turn"``), a Mirror of Erised card by its face
(``"stone"``, ``"you_know_who"``).
"""

from __future__ import annotations

from typing import Any

from . import hagrid, mirror, snape


def _hagrid() -> list[dict[str, Any]]:
    return [{"id": str(card["notes"]), "deck": "hagrid", "kind": "musical_note", "name": card["name"],
             "text": card["text"], "count": card["count"], "notes": card["notes"], "scale": None, "number": None}
            for card in hagrid.DATA["cards"]]


def _snape() -> list[dict[str, Any]]:
    potions = [{"id": card, "deck": "snape", "kind": "potion", "name": snape.DATA["potion_name"].format(id=card),
                "text": None, "count": snape.POTIONS.count(card), "notes": None,
                "scale": snape.DATA["potion_scales"][snape.kind_of(card)], "number": snape.number_of(card)}
               for card in snape.POTIONS]
    incantations = [{"id": card["id"], "deck": "snape", "kind": "incantation", "name": card["name"],
                     "text": card["text"], "count": card["count"], "notes": None, "scale": None, "number": None}
                    for card in snape.DATA["incantations"]]
    return potions + incantations


def _mirror() -> list[dict[str, Any]]:
    return [{"id": card["face"], "deck": "mirror", "kind": "mirror", "name": card["name"], "text": None,
             "count": card["count"], "notes": None, "scale": None, "number": None}
            for card in mirror.DATA["cards"]]


# Built once (static data), handed out as copies.
_CATALOGUE: tuple[dict[str, Any], ...] = tuple(_hagrid() + _snape() + _mirror())


def catalogue() -> list[dict[str, Any]]:
    """Every kind of card of the three decks, once, in the order the boards are played (schema.json "card").
    Public knowledge, like a printed deck list: it says nothing of where a card is in a match."""
    return [dict(entry) for entry in _CATALOGUE]
