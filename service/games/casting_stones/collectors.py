"""Collectors' views of Casting Stones: the stone chart as a collector reads it, and how complete a collection is.

000, F: "You can look up a picture of each Casting Stone—along with its Name, Type and Rarity—on the chart
included on the back of these instructions. Be aware, some Stones are much harder to find than others. The
easiest to locate are listed as Common, followed by Uncommon, then Rare, Rare Foil, with black Chasers being
the hardest to find of all."

The scans hold the chart's text but not its pictures, so a stone's ``picture`` is a description built from its
chart row: its colour ("Silver: Is a Character / White: Is an Artifact / Brown: Is an Element", the Chasers
black), the label and heading it is pictured under, the stars printed beside it and its number side. Front ends
can show it as alternative text, or pick artwork of their own by ``id``.

Everything here is pure; the service reads a player's counts from Redis and passes them in.
"""

from __future__ import annotations

from typing import Any

from .cards import CARDS
from .catalogue import ARTIFACT, CHARACTER, CHASER, ELEMENT, RARITIES, STONES
from .collecting import CARD_KIND, STONE_KIND

#: The colour of each stone type (000, the starter set's "2 Silver, 4 White, 6 Brown"; A: "These black Stones
#: are called Chasers").
COLOURS = {CHARACTER: "silver", ARTIFACT: "white", ELEMENT: "brown", CHASER: "black"}
#: The stars the chart prints beside a stone of each rarity (the legend's symbols collapsed in the scan:
#: docs/rules/casting-stones.md, "Rarity").
STARS = {"common": 1, "uncommon": 2, "rare": 5, "rare_foil": 5, "chaser": 5}


def picture(stone_id: str) -> str:
    """A sentence describing the stone as the chart pictures it, built from its chart row."""
    stone = STONES[stone_id]
    article = "an" if stone.type[0] in "aeiou" else "a"
    return (f"A {COLOURS[stone.type]} stone ({article} {stone.type}): pictured on the stone chart as "
            f"\"{stone.chart_name}\" under \"{stone.group}\", {'★' * STARS[stone.rarity]} "
            f"({stone.rarity.replace('_', ' ')}); its number side reads {stone.number}.")


def chart(rarity: str | None = None) -> list[dict[str, Any]]:
    """The stone chart for collectors, in concordance order, filtered by rarity: each stone's id, number,
    name, type, colour, rarity, stars and picture description (schema.json "chart_entry")."""
    return [{"id": s.id, "n": s.n, "name": s.name, "type": s.type, "colour": COLOURS[s.type], "rarity": s.rarity,
             "stars": STARS[s.rarity], "number": s.number, "picture": picture(s.id)}
            for s in sorted(STONES.values(), key=lambda s: s.n) if rarity is None or s.rarity == rarity]


def items(owned: dict[str, dict[str, int]]) -> dict[str, list[dict[str, Any]]]:
    """Counts per kind and id as the APIs list them: ``{"stones": [{"id", "count"}], "cards": [...]}``, stones
    in concordance order and cards in catalogue order, zero counts left out (typed clients get lists, not maps).
    Ids the catalogue does not know (a card an operator took out) come last, by id."""
    order = {STONE_KIND: {s: STONES[s].n for s in STONES}, CARD_KIND: {c: i for i, c in enumerate(CARDS)}}
    listed = {}
    for kind in (STONE_KIND, CARD_KIND):
        known = order[kind]
        ids = sorted((i for i, n in owned.get(kind, {}).items() if n > 0),
                     key=lambda i: (i not in known, known.get(i, 0), i))
        listed[kind] = [{"id": i, "count": owned[kind][i]} for i in ids]
    return listed


def progress(owned: dict[str, dict[str, int]]) -> dict[str, Any]:
    """How complete a collection (counts per kind and id) is, for collectors:

    ``rarities``: per stone rarity, the different stones owned of how many (``owned``, ``total``,
    ``complete``); ``stones``: the same over the whole chart; ``cards``: the same over the cards the service
    knows; ``missing``: the stones not owned, in concordance order, and the cards not owned; ``duplicates``:
    what is owned beyond one of each (what can be traded without losing a stone of the set), as :func:`items`
    lists them. Ids the catalogue does not know are ignored."""
    stones, cards = owned.get(STONE_KIND, {}), owned.get(CARD_KIND, {})
    by_n = sorted(STONES.values(), key=lambda s: s.n)
    rarities = []
    for rarity in RARITIES:
        of_rarity = [s.id for s in by_n if s.rarity == rarity]
        have = sum(1 for s in of_rarity if stones.get(s, 0) > 0)
        rarities.append({"rarity": rarity, "owned": have, "total": len(of_rarity), "complete": have == len(of_rarity)})
    have_stones = sum(1 for s in by_n if stones.get(s.id, 0) > 0)
    have_cards = sum(1 for c in CARDS if cards.get(c, 0) > 0)
    return {
        "rarities": rarities,
        "stones": {"owned": have_stones, "total": len(by_n), "complete": have_stones == len(by_n)},
        "cards": {"owned": have_cards, "total": len(CARDS), "complete": have_cards == len(CARDS)},
        "missing": {STONE_KIND: [s.id for s in by_n if stones.get(s.id, 0) <= 0],
                    CARD_KIND: [c for c in CARDS if cards.get(c, 0) <= 0]},
        "duplicates": items({STONE_KIND: {s: n - 1 for s, n in stones.items() if s in STONES},
                             CARD_KIND: {c: n - 1 for c, n in cards.items() if c in CARDS}}),
    }


def _check() -> None:
    if set(COLOURS) != {s.type for s in STONES.values()} or set(STARS) != set(RARITIES):
        raise ValueError("collectors.py: a stone type or rarity without a colour or stars")


_check()
