"""Casting Cards as data: the card format, loading and checking card files, and when a card works.

Manual sections C (CASTING CARDS (INTERMEDIATE), THE LIBRARY) and D (CASTING
CARDS (ADVANCED)). A card is a JSON object (``card.schema.json``, explained in
docs/rules/casting-stones.md, "Casting Cards as data"):

``requires``
    either ``stones``: specific stones in the Casting Hand showing specific
    faces ("they only work if the Casting Stones the Card specifies are cast
    exactly as they appear on the Card"), or ``streak``: any stones making the
    same kind of cast several turns in a row ("The Double Potion Card requires
    that you cast a Potion two turns in a row").
``conditions``
    ``turrets_held``: turrets its owner must hold ("The Cards may make other
    specifications as well, such as requiring you to control certain Turrets").
``needs_win``
    "Only the Charm and Double Potion Cards allow you their bonus even if you
    fail to win the turn. All other Casting Cards require you to win the turn".
``counter_spell``
    "COUNTER SPELLS on Casting Cards play just like SPELLS" (Advanced Game).
``effect``
    the bonus, as steps built from the victory primitives: ``place`` (on any
    empty turret, or on named ones, optionally displacing an opposing gem),
    ``swap`` and ``knock`` (of gems, stones and, in the Advanced Game, cards),
    each ``count`` times.

The shipped cards are in ``cards.json``. An operator adds cards without code by
setting ``GRIMOIRE_CASTING_CARDS`` to the path of a JSON file of the same
format; it is read when this module is first imported (service start-up), and a
bad file stops the start-up with a :class:`CardFileError` naming the file and
the problem.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from service.engine import load_data

from .casts import NUMBER, SYMBOL
from .catalogue import STONES, TURRET_NAMES

#: The environment variable naming an operator's extra card file.
CARDS_SETTING = "GRIMOIRE_CASTING_CARDS"

PLACE, SWAP, KNOCK = "place", "swap", "knock"
OF_GEMS, OF_STONES, OF_CARDS = "gems", "stones", "cards"

_FACE_CODES = {"symbol": SYMBOL, "number": NUMBER}
CARD_SCHEMA: dict[str, Any] = load_data(__package__, "card.schema.json")
_VALIDATOR = jsonschema.Draft202012Validator(CARD_SCHEMA)


class CardFileError(ValueError):
    """A card file that cannot be used: the message names the file and the problem."""


@dataclass(frozen=True)
class Step:
    """One step of a card's bonus (an ``effect`` item)."""

    do: str                          # place, swap or knock
    count: int                       # how many times
    of: tuple[str, ...]              # swap/knock: gems, stones, cards
    turrets: tuple[int, ...] | None  # place: allowed turret indices (None: any)
    displace: bool                   # place: an opposing gem on an allowed turret is sent back to its line


@dataclass(frozen=True)
class Card:
    id: str
    name: str
    text: str
    rarity: str
    starter: bool
    stones: tuple[tuple[str, str], ...]    # (stone id, face code) the cast must show; () for a streak card
    streak: tuple[str, int] | None         # (cast kind, turns in a row), or None
    turrets_held: tuple[int, ...]          # turret indices the owner must hold
    needs_win: bool
    counter_spell: bool
    effect: tuple[Step, ...]
    source: dict[str, Any]                 # the card as written in its file (for catalogue queries)

    def public(self) -> dict[str, Any]:
        """What a view shows of a card (the full definition is in the card catalogue)."""
        return {"id": self.id, "name": self.name, "text": self.text}


def _card(raw: dict[str, Any], where: str) -> Card:
    """Build a card from a schema-valid object, checking what a JSON Schema cannot."""
    requires = raw["requires"]
    stones: list[tuple[str, str]] = []
    for item in requires.get("stones", ()):
        if item["stone"] not in STONES:
            raise CardFileError(f"{where}: unknown stone {item['stone']!r} (ids are in stones.json)")
        if any(item["stone"] == s for s, _ in stones):
            raise CardFileError(f"{where}: stone {item['stone']!r} is listed twice")
        stones.append((item["stone"], _FACE_CODES[item["face"]]))
    streak = None
    if "streak" in requires:
        streak = (requires["streak"]["cast"], requires["streak"]["turns"])

    def turret_indices(names: list[str], field: str) -> tuple[int, ...]:
        unknown = [n for n in names if n not in TURRET_NAMES]
        if unknown:
            raise CardFileError(f"{where}: {field} names unknown turrets {unknown}; "
                                f"the Tower Mat has {', '.join(TURRET_NAMES)}")
        return tuple(sorted(TURRET_NAMES.index(n) for n in names))

    held = turret_indices(raw.get("conditions", {}).get("turrets_held", []), "conditions.turrets_held")
    if not raw["needs_win"] and streak is None:
        # "Only the Charm and Double Potion Cards allow you their bonus even if you fail to win the turn. All
        # other Casting Cards require you to win the turn" (C): only an "in a row" card may do without a win.
        raise CardFileError(f"{where}: only a streak card (like Double Potion and Charms) may work without "
                            "winning the turn (needs_win false)")
    counter = raw.get("counter_spell", False)
    if counter and not stones:
        raise CardFileError(f"{where}: a counter_spell card must require specific stones (requires.stones)")
    effect = []
    for i, step in enumerate(raw["effect"]):
        turrets = step.get("turrets")
        effect.append(Step(
            do=step["do"], count=step.get("count", 1), of=tuple(step.get("of", (OF_GEMS, OF_STONES))),
            turrets=None if turrets is None else turret_indices(turrets, f"effect[{i}].turrets"),
            displace=step.get("displace", False)))
    if not effect and not counter:
        raise CardFileError(f"{where}: a card without a bonus (empty effect) must be a counter_spell")
    return Card(id=raw["id"], name=raw["name"], text=raw["text"], rarity=raw.get("rarity", "uncommon"),
                starter=raw.get("starter", False), stones=tuple(stones), streak=streak, turrets_held=held,
                needs_win=raw["needs_win"], counter_spell=counter, effect=tuple(effect), source=raw)


def parse_cards(data: Any, source: str, known: dict[str, Card] | None = None) -> dict[str, Card]:
    """The cards of one card file's parsed JSON ``data``; ``source`` names the file in errors.

    Raises :class:`CardFileError` on the first problem: the JSON Schema
    (``card.schema.json``), an unknown stone or turret, a duplicate id (within
    the file or with ``known`` cards).
    """
    error = jsonschema.exceptions.best_match(_VALIDATOR.iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        message = error.message
        if error.validator == "not":   # the schema's only "not": fields that belong to other primitives
            message = "'of' is for swap and knock steps; 'turrets' and 'displace' are for place steps"
        raise CardFileError(f"Casting card file {source}: at {where}: {message}")
    cards: dict[str, Card] = {}
    for i, raw in enumerate(data["cards"]):
        where = f"Casting card file {source}: card {i} ({raw['id']!r})"
        if raw["id"] in cards or raw["id"] in (known or {}):
            raise CardFileError(f"{where}: the id is already used by another card")
        cards[raw["id"]] = _card(raw, where)
    return cards


def load_cards(extra: str | os.PathLike | None = None) -> dict[str, Card]:
    """The shipped cards, plus those of the operator's file ``extra`` (a path) if given."""
    cards = parse_cards(load_data(__package__, "cards.json"), "cards.json (shipped)")
    if extra:
        path = Path(extra)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise CardFileError(f"Casting card file {path} ({CARDS_SETTING}): cannot be read: {exc.strerror}") from exc
        except json.JSONDecodeError as exc:
            raise CardFileError(f"Casting card file {path} ({CARDS_SETTING}): not JSON: {exc}") from exc
        cards.update(parse_cards(data, f"{path} ({CARDS_SETTING})", cards))
    return cards


#: Every card this service knows, by id: shipped first, then the operator's, in file order.
CARDS: dict[str, Card] = load_cards(os.environ.get(CARDS_SETTING) or None)

#: How many past turns' casts a streak card may need to look back on.
LONGEST_STREAK = max([c.streak[1] for c in CARDS.values() if c.streak] + [2])


def card_catalogue() -> list[dict[str, Any]]:
    """Every card as written in its file (format: card.schema.json)."""
    return [dict(c.source) for c in CARDS.values()]


_FACE_NAMES = {code: name for name, code in _FACE_CODES.items()}


def card_entries() -> list[dict[str, Any]]:
    """Every card the service knows, shipped first, then an operator's, as the ``cards`` catalogue lists them
    (schema.json "card"): what a client needs to show a card and what it takes, without its bonus steps."""
    return [{"id": c.id, "name": c.name, "text": c.text, "rarity": c.rarity, "starter": c.starter,
             "needs_win": c.needs_win, "counter_spell": c.counter_spell,
             "stones": [{"stone": stone, "face": _FACE_NAMES[face]} for stone, face in c.stones],
             "streak": None if c.streak is None else {"cast": c.streak[0], "turns": c.streak[1]},
             "turrets_held": [TURRET_NAMES[t] for t in c.turrets_held]} for c in CARDS.values()]


# -- when a card works ---------------------------------------------------------------------

def shows_stones(card: Card, hand: list[str], faces: str) -> bool:
    """Whether ``hand`` cast with ``faces`` shows every stone the card names with the face it names."""
    if not card.stones:
        return False
    return all(stone in hand and faces[hand.index(stone)] == face for stone, face in card.stones)


def conditions_hold(card: Card, gems: list[int | None], seat: int) -> bool:
    """"Every condition listed on the Card must be met to use the Card" (003): the turrets it names are held."""
    return all(gems[t] == seat for t in card.turrets_held)


def streak_met(card: Card, history: list[str], kind: str) -> bool:
    """Whether ``kind`` (this turn's cast) ends a run of ``turns`` casts of the card's kind.

    ``history`` is the seat's final cast kinds in the previous turns, oldest
    first. Every turn counts, tied ones included (docs: "Two turns in a row").
    """
    if card.streak is None:
        return False
    wanted, turns = card.streak
    recent = (history + [kind])[-turns:]
    return len(recent) == turns and all(k == wanted for k in recent)


def works(card: Card, *, hand: list[str], faces: str, kind: str, history: list[str], gems: list[int | None],
          seat: int, won: bool) -> bool:
    """Whether ``card``, face-up in ``seat``'s Library, works this turn: its requirement met, its conditions
    held and, unless it is a Double Potion or Charms kind of card, the turn won."""
    met = streak_met(card, history, kind) if card.streak else shows_stones(card, hand, faces)
    return met and conditions_hold(card, gems, seat) and (won or not card.needs_win)
