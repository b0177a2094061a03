"""Reading a cast and comparing two: section B, steps 1 to 3 of the manual.

A cast is the five stones of a Casting Hand with the face each one shows.
Faces are stored as one character per stone, in hand order, in a string:

``"s"``  symbol (rune) side up        ``"n"``  number side up
``"l"``  a Leaner, not yet tipped     ``"-"``  not cast yet this turn

These functions are pure and know nothing of turns or seats, so the rules
module and the tests share one reading of "what did this cast make?".
"""

from __future__ import annotations

from .catalogue import ARTIFACT, CHARACTER, CHASER, ELEMENT, STONES

SYMBOL, NUMBER, LEANER, UNCAST = "s", "n", "l", "-"
#: Each face's name in actions, events and views.
FACE_NAMES = {SYMBOL: "symbol", NUMBER: "number", LEANER: "leaner", UNCAST: "uncast"}

SPELL, POTION, CHARM, BUNGLE = "spell", "potion", "charm", "bungle"
#: Not yet readable: a stone is still in hand or a Leaner is still standing.
PENDING = "pending"
GOOD_CASTS = (SPELL, POTION, CHARM)

#: "Spell beats Potion / Potion beats Charm / Charm beats Spell" (AND THE WINNER IS...?).
BEATS = {SPELL: POTION, POTION: CHARM, CHARM: SPELL}

#: The victory effect a winning cast grants (QUICK-REFERENCE CHART, "VICTORY EFFECT").
PLACE, SWAP, KNOCK = "place", "swap", "knock"
EFFECT = {SPELL: PLACE, POTION: SWAP, CHARM: KNOCK}

_SPELL_SYMBOLS = sorted((CHARACTER, ARTIFACT, ELEMENT))


def read_cast(hand: list[str], faces: str, wild_chasers: bool = False,
              declared: dict[str, str] | None = None) -> tuple[str, int | None]:
    """What ``hand`` cast with ``faces`` makes: ``(kind, power)``.

    ``kind`` is spell, potion, charm, bungle, or pending while a stone is
    uncast or a Leaner stands. ``power`` is the sum of the numbers showing for
    a Spell or a Charm (what breaks a tie between two of them), else None.

    * Spell: "symbols on 1 Character (Silver) Stone, 1 Artifact (White) Stone
      and 1 Element (Brown) Stone, and numbers on the remaining two" -- read
      strictly: exactly three symbols, one of each of those types. Two
      character symbols and an artifact are not a Spell even with two numbers.
      With ``wild_chasers`` (Advanced) a Chaser symbol stands for the type its
      caster ``declared`` (stone id -> type); without declarations, for
      whichever type the Spell misses (the best reading).
    * Potion: "If all 5 Casting Stones land symbol-side up".
    * Charm: "If all 5 Casting Stones land numbered-side up".
    * Anything else after the last cast is a Bungle.
    """
    if UNCAST in faces or LEANER in faces:
        return PENDING, None
    symbols = faces.count(SYMBOL)
    if symbols == len(faces):
        return POTION, None
    if symbols == 0:
        return CHARM, sum(STONES[s].number for s in hand)
    if symbols == 3:
        shown = sorted(_symbol_type(s, wild_chasers, declared) for s, f in zip(hand, faces) if f == SYMBOL)
        if shown == _SPELL_SYMBOLS or (wild_chasers and declared is None and _wild_spell(shown)):
            return SPELL, sum(STONES[s].number for s, f in zip(hand, faces) if f == NUMBER)
    return BUNGLE, None


def _symbol_type(stone_id: str, wild_chasers: bool, declared: dict[str, str] | None) -> str:
    """The type a symbol-up stone counts as: its own, or for a wild Chaser the type declared for it."""
    own = STONES[stone_id].type
    if own == CHASER and wild_chasers and declared is not None:
        return declared.get(stone_id, CHASER)
    return own


def _wild_spell(shown: list[str]) -> bool:
    """Whether Chasers among three symbols can fill the types the others miss."""
    fixed = [t for t in shown if t in _SPELL_SYMBOLS]
    return len(set(fixed)) == len(fixed)


def winner_of(kinds: list[str], powers: list[int | None]) -> int | None:
    """The index (0 or 1) of the cast that wins, or None when nobody wins.

    "Spell beats Potion, Potion beats Charm, Charm beats Spell", "any good cast
    (Spell, Potion or Charm) always beats a Bungle"; two Spells or two Charms
    compare "the totals" and a tie means "no one wins that turn"; "2 Potions
    are always a tie". Two Bungles: the manual is silent; nobody has a
    winning cast, so nobody wins (docs/rules/casting-stones.md).
    """
    a, b = kinds
    if a == b:
        if a in (SPELL, CHARM) and powers[0] != powers[1]:
            return 0 if powers[0] > powers[1] else 1
        return None
    if b == BUNGLE or BEATS.get(a) == b:
        return 0
    if a == BUNGLE or BEATS.get(b) == a:
        return 1
    raise AssertionError(f"unreadable casts {kinds}")  # pending casts are never compared
