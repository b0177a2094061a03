"""Casting Stones: the collectible rune-stone game for two wizards (Mattel, 2001).

Rules: :mod:`.rules` (Basic Game), reading a cast: :mod:`.casts`, data:
:mod:`.catalogue` and the JSON files beside it. House rules and readings of the
scans: ``docs/rules/casting-stones.md``.
"""

from .rules import CastingStones

GAME = CastingStones()

__all__ = ["GAME", "CastingStones"]
