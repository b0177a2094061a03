"""Casting Stones: the collectible rune-stone game for two wizards (Mattel, 2001).

Variants: ``basic`` (section B), ``intermediate`` (C, Casting Cards) and
``advanced`` (D, collections and private Vaults). Rules: :mod:`.rules`; reading a
cast: :mod:`.casts`; victory actions: :mod:`.victory`; Casting Cards as data:
:mod:`.cards` (format ``card.schema.json``); set-up of cards and collections:
:mod:`.library` and :mod:`.collecting`; data: :mod:`.catalogue` and the JSON
files beside it. House rules and readings of the scans:
``docs/rules/casting-stones.md``.
"""

from .rules import CastingStones

GAME = CastingStones()

__all__ = ["GAME", "CastingStones"]
